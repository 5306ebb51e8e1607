/**
 * Which policy governs a column of the live database: the policy file names table columns; a
 * partition or inheritance child follows its parent's policy for the same column name, and a plain
 * view column follows the base column it shows. Also the ProtectedSchema the SQL analyser asks,
 * including which columns show a column stored in plaintext (bare, or computed in a view).
 */
import type { ColumnPolicy, PolicySet } from '../../../policy/index.js';
import type { ColumnRef, PlaintextSource, ProtectedSchema, ResolvedTable } from '../../sql/index.js';
import { findListedTableMention } from '../../sql/protectedNameScan.js';
import { nameKey, type CatalogRelation, type CatalogSnapshot } from './catalogSnapshot.js';
import { UNKNOWN_SCOPE, type PathScope } from './searchPathResolution.js';
import { resolveOnPath } from './resolveOnPath.js';
import { routineOnPath, type RoutineKind } from './routinesOnPath.js';
import { PolicyBindings } from '../policyBindings.js';

const MAX_DEPTH = 16;

/** True when values written to the column must be transformed (passthrough stores plaintext). */
export function protectsWrites(policy: ColumnPolicy): boolean {
  return policy.method !== 'passthrough';
}

function policyColumn(policy: ColumnPolicy): ColumnRef {
  return { schema: policy.schema, table: policy.table, column: policy.column };
}

export class ColumnPolicies implements ProtectedSchema {
  private readonly byAttribute = new Map<string, ColumnPolicy | null>();
  private readonly plaintextByAttribute = new Map<string, PlaintextSource | null>();
  private plaintextNames: readonly string[] | undefined;
  private anyPlaintext: boolean | undefined;
  private readonly resolved = new Map<string, ResolvedTable | null>();
  private protectedNames: readonly string[] | undefined;
  private policyBindings: PolicyBindings | undefined;
  /**
   * Relation names (`schema\0table`) and function or operator names (`function()\0schema\0name`)
   * asked for that this snapshot does not know: a newer catalog may.
   */
  readonly missed = new Set<string>();

  constructor(readonly snapshot: CatalogSnapshot, readonly policies: PolicySet) {}

  /** Which names the policy file binds, through inheritance too (checks on DDL). */
  get bindings(): PolicyBindings {
    this.policyBindings ??= new PolicyBindings(this.snapshot, this.policies, (relation) => this.hasProtectedColumns(relation));
    return this.policyBindings;
  }

  isPolicyBound(schema: string | undefined, table?: string, column?: string): boolean {
    return this.bindings.isPolicyBound(schema, table, column);
  }

  /** The policy of a column by relation OID and attnum (as in RowDescription). */
  policyOf(oid: number, attnum: number): ColumnPolicy | undefined {
    const key = `${oid}:${attnum}`;
    const known = this.byAttribute.get(key);
    if (known !== undefined) return known ?? undefined;
    const policy = this.lookup(oid, attnum, 0);
    this.byAttribute.set(key, policy ?? null);
    return policy;
  }

  private lookup(oid: number, attnum: number, depth: number): ColumnPolicy | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const relation = this.snapshot.relations.get(oid);
    const column = relation?.byAttnum.get(attnum);
    if (relation === undefined || column === undefined) return undefined;
    const own = this.policies.get(relation.schema, relation.table, column.name);
    if (own !== undefined) return own;
    for (const parentOid of relation.parents) {
      const parent = this.snapshot.relations.get(parentOid);
      const parentColumn = parent?.columns.find((candidate) => candidate.name === column.name);
      if (parentColumn !== undefined) {
        const inherited = this.lookup(parentOid, parentColumn.attnum, depth + 1);
        if (inherited !== undefined) return inherited;
      }
    }
    const origin = relation.origins.get(attnum);
    return origin === undefined ? undefined : this.lookup(origin.oid, origin.attnum, depth + 1);
  }

  /**
   * What a column shows of a column stored in plaintext (passthrough): itself, through
   * partitions and plain view columns; or, for a computed view column, a value read from it.
   */
  plaintextOf(oid: number, attnum: number): PlaintextSource | undefined {
    const key = `${oid}:${attnum}`;
    const known = this.plaintextByAttribute.get(key);
    if (known !== undefined) return known ?? undefined;
    const found = this.findPlaintext(oid, attnum, 0);
    this.plaintextByAttribute.set(key, found ?? null);
    return found;
  }

  private findPlaintext(oid: number, attnum: number, depth: number): PlaintextSource | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const policy = this.policyOf(oid, attnum);
    if (policy !== undefined) return protectsWrites(policy) ? undefined : { column: policyColumn(policy), computed: false };
    const relation = this.snapshot.relations.get(oid);
    const origin = relation?.origins.get(attnum);
    if (origin !== undefined) return this.findPlaintext(origin.oid, origin.attnum, depth + 1);
    for (const source of relation?.computed.get(attnum) ?? []) {
      const attnums = source.attnum === 0
        ? this.snapshot.relations.get(source.oid)?.columns.map((column) => column.attnum) ?? []
        : [source.attnum];
      for (const sourceAttnum of attnums) {
        const found = this.findPlaintext(source.oid, sourceAttnum, depth + 1);
        if (found !== undefined) return { column: found.column, computed: true };
      }
    }
    return undefined;
  }

  plaintextSource(ref: ColumnRef): PlaintextSource | undefined {
    this.anyPlaintext ??= this.policies.columns.some((policy) => !protectsWrites(policy));
    if (!this.anyPlaintext) return undefined;
    const relation = this.snapshot.byName.get(nameKey(ref.schema, ref.table));
    if (relation === undefined) {
      const policy = this.policies.get(ref.schema, ref.table, ref.column);
      return policy === undefined || protectsWrites(policy) ? undefined : { column: policyColumn(policy), computed: false };
    }
    const column = relation.columns.find((candidate) => candidate.name === ref.column);
    return column === undefined ? undefined : this.plaintextOf(relation.oid, column.attnum);
  }

  plaintextTableNames(): Iterable<string> {
    if (this.plaintextNames === undefined) {
      const names = new Set<string>();
      for (const policy of this.policies.columns) if (!protectsWrites(policy)) names.add(policy.table);
      for (const relation of this.snapshot.relations.values()) {
        if (relation.columns.some((column) => this.plaintextOf(relation.oid, column.attnum) !== undefined)) names.add(relation.table);
      }
      this.plaintextNames = Object.freeze([...names]);
    }
    return this.plaintextNames;
  }

  /** The policy of a column by name (as the SQL analyser reports columns). */
  policyOfColumn(ref: ColumnRef): ColumnPolicy | undefined {
    const relation = this.snapshot.byName.get(nameKey(ref.schema, ref.table));
    if (relation === undefined) return this.policies.get(ref.schema, ref.table, ref.column);
    const column = relation.columns.find((candidate) => candidate.name === ref.column);
    return column === undefined ? undefined : this.policyOf(relation.oid, column.attnum);
  }

  relationOf(ref: { schema: string; table: string }): CatalogRelation | undefined {
    return this.snapshot.byName.get(nameKey(ref.schema, ref.table));
  }

  hasProtectedColumns(relation: CatalogRelation): boolean {
    return relation.columns.some((column) => {
      const policy = this.policyOf(relation.oid, column.attnum);
      return policy !== undefined && protectsWrites(policy);
    });
  }

  /**
   * A relation as written. An unqualified name is resolved here with no session in view, as if
   * its search_path were unknown (the conservative rule of chooseRelation); a session resolves
   * unqualified names on its own path with SessionRelations.
   */
  resolveTable(schema: string | undefined, table: string): ResolvedTable | undefined {
    const key = `${schema ?? ''}\u0000${table}`;
    const known = this.resolved.get(key);
    if (known !== undefined) return known ?? undefined;
    let result: ResolvedTable | undefined;
    if (schema === undefined) {
      result = resolveOnPath(this, table, UNKNOWN_SCOPE);
    } else {
      const relation = this.snapshot.byName.get(nameKey(schema, table));
      result = relation === undefined ? undefined : this.describeRelation(relation);
    }
    if (result === undefined) this.missed.add(key);
    this.resolved.set(key, result ?? null);
    return result;
  }

  describeRelation(relation: CatalogRelation): ResolvedTable {
    return { schema: relation.schema, table: relation.table, columns: relation.columns.map((column) => column.name) };
  }

  /** True when some column of the relation has a policy (protected, or plaintext masked on read). */
  hasColumnPolicies(relation: CatalogRelation): boolean {
    return relation.columns.some((column) => this.policyOf(relation.oid, column.attnum) !== undefined);
  }

  isProtected(column: ColumnRef): boolean {
    const policy = this.policyOfColumn(column);
    return policy !== undefined && protectsWrites(policy);
  }

  functionIsVolatile(name: string, schema?: string): boolean {
    return this.routineIsVolatile('function', name, schema, UNKNOWN_SCOPE);
  }

  operatorIsVolatile(name: string, schema?: string): boolean {
    return this.routineIsVolatile('operator', name, schema, UNKNOWN_SCOPE);
  }

  /** See ProtectedSchema.functionIsVolatile: an unknown name is volatile, and a miss (a newer reading may know it). */
  routineIsVolatile(kind: RoutineKind, name: string, schema: string | undefined, scope: PathScope): boolean {
    const answer = routineOnPath(this.snapshot, kind, name, schema, scope);
    if (answer === 'unknown') this.missed.add(`${kind}()\u0000${schema ?? ''}\u0000${name}`);
    return answer !== 'not volatile';
  }

  /** True when `text` names a table with protected columns (the analyser's scan, protectedNameScan). */
  mentionsProtectedTable(text: string): boolean {
    return findListedTableMention(text, this.protectedTableNames()) !== undefined;
  }

  protectedTableNames(): Iterable<string> {
    if (this.protectedNames === undefined) {
      const names = new Set<string>();
      for (const policy of this.policies.columns) if (protectsWrites(policy)) names.add(policy.table);
      for (const relation of this.snapshot.relations.values()) if (this.hasProtectedColumns(relation)) names.add(relation.table);
      this.protectedNames = Object.freeze([...names]);
    }
    return this.protectedNames;
  }
}
