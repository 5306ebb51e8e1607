import type { PolicyIssue } from './policyError.js';
import { OTHER_ROLES, type ColumnPolicy, type PolicySet, type StatementPrivilege, type TableName } from './policyTypes.js';

function tableKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

/** A read-only view of a Map: the set is shared by every session, nobody may change it. */
function readonlyMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const view: ReadonlyMap<K, V> = {
    get: (k) => map.get(k),
    has: (k) => map.has(k),
    get size() { return map.size; },
    forEach: (cb, thisArg) => map.forEach((v, k) => cb.call(thisArg, v, k, view)),
    entries: () => map.entries(),
    keys: () => map.keys(),
    values: () => map.values(),
    [Symbol.iterator]: () => map[Symbol.iterator](),
  };
  return Object.freeze(view);
}

/** Roles named in the reveal maps of `columns`, in order of first appearance (not "*"). */
export function rolesNamed(columns: readonly ColumnPolicy[]): string[] {
  const roles: string[] = [];
  for (const c of columns) for (const role of c.reveal.keys()) if (role !== OTHER_ROLES && !roles.includes(role)) roles.push(role);
  return roles;
}

/** Freezes one policy, its reveal map included. */
export function freezePolicy(policy: ColumnPolicy): ColumnPolicy {
  return Object.freeze({
    ...policy,
    reveal: readonlyMap(new Map(policy.reveal)),
    source: Object.freeze({ ...policy.source }),
    engineOptions: Object.freeze({ ...policy.engineOptions }),
  });
}

/**
 * Builds the immutable set. `columns` must name distinct columns (the parser checks it). Lookups
 * take catalog names, exactly as pg_catalog stores them: no folding happens here.
 */
export function createPolicySet(
  file: string, columns: readonly ColumnPolicy[], warnings: readonly PolicyIssue[] = [],
  privileges: ReadonlyMap<string, ReadonlySet<StatementPrivilege>> = new Map(),
): PolicySet {
  const frozen = Object.freeze(columns.map(freezePolicy));
  const byTable = new Map<string, Map<string, ColumnPolicy>>();
  const tables: TableName[] = [];
  for (const policy of frozen) {
    const key = tableKey(policy.schema, policy.table);
    let cols = byTable.get(key);
    if (!cols) {
      cols = new Map();
      byTable.set(key, cols);
      tables.push(Object.freeze({ schema: policy.schema, table: policy.table }));
    }
    cols.set(policy.column, policy);
  }
  const views = new Map<string, ReadonlyMap<string, ColumnPolicy>>();
  for (const [key, cols] of byTable) views.set(key, readonlyMap(cols));
  const frozenTables = Object.freeze(tables);
  const set: PolicySet = {
    file,
    columns: frozen,
    roles: Object.freeze(rolesNamed(frozen)),
    get: (schema, table, column) => byTable.get(tableKey(schema, table))?.get(column),
    table: (schema, table) => views.get(tableKey(schema, table)),
    tables: () => frozenTables,
    warnings: Object.freeze(warnings.map((w) => Object.freeze({ ...w }))),
    privileges: readonlyMap(new Map([...privileges].map(([role, granted]) => [role, Object.freeze(new Set(granted))]))),
  };
  return Object.freeze(set);
}
