/**
 * Which policy governs a column of the live database: the policy file names table columns; a
 * partition or inheritance child follows its parent's policy for the same column name, and a plain
 * view column follows the base column it shows. Also the ProtectedSchema the SQL analyser asks.
 */
import type { ColumnPolicy, PolicySet } from '../../policy/index.js';
import type { ColumnRef, ProtectedSchema, ResolvedTable } from '../sql/index.js';
import { nameKey, type CatalogRelation, type CatalogSnapshot } from './catalogSnapshot.js';

const MAX_DEPTH = 16;

/** True when values written to the column must be transformed (passthrough stores plaintext). */
export function protectsWrites(policy: ColumnPolicy): boolean {
  return policy.method !== 'passthrough';
}

export class ColumnPolicies implements ProtectedSchema {
  private readonly byAttribute = new Map<string, ColumnPolicy | null>();
  private readonly resolved = new Map<string, ResolvedTable | null>();
  private protectedNames: string[] | undefined;
  /** Relation names asked for that this snapshot does not know: a newer catalog may. */
  readonly missed = new Set<string>();

  constructor(readonly snapshot: CatalogSnapshot, readonly policies: PolicySet) {}

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

  resolveTable(schema: string | undefined, table: string): ResolvedTable | undefined {
    const key = `${schema ?? ''}\u0000${table}`;
    const known = this.resolved.get(key);
    if (known !== undefined) return known ?? undefined;
    const relation = schema === undefined ? this.onSearchPath(table) : this.snapshot.byName.get(nameKey(schema, table));
    if (relation === undefined) this.missed.add(key);
    const result = relation === undefined
      ? undefined
      : { schema: relation.schema, table: relation.table, columns: relation.columns.map((column) => column.name) };
    this.resolved.set(key, result ?? null);
    return result;
  }

  /**
   * An unqualified name: the default search path ("$user", public). pgveil does not follow a
   * session's own search_path, so it errs on the protected side: when the name also denotes a
   * relation with protected columns in another schema, that one is assumed.
   */
  private onSearchPath(table: string): CatalogRelation | undefined {
    const found = this.snapshot.byName.get(nameKey(this.snapshot.currentUser, table))
      ?? this.snapshot.byName.get(nameKey('public', table));
    if (found !== undefined && this.hasProtectedColumns(found)) return found;
    const same = this.snapshot.byBareName.get(table) ?? [];
    const protectedElsewhere = same.find((relation) => this.hasProtectedColumns(relation));
    // A temporary table (pg_temp_N) shadows the path; it is known, not a miss.
    return protectedElsewhere ?? found ?? same.find((relation) => relation.schema.startsWith('pg_temp'));
  }

  isProtected(column: ColumnRef): boolean {
    const policy = this.policyOfColumn(column);
    return policy !== undefined && protectsWrites(policy);
  }

  /** True when a word of `text` is the name of a table with protected columns (any case). */
  mentionsProtectedTable(text: string): boolean {
    const names = new Set([...this.protectedTableNames()].map((name) => name.toLowerCase()));
    return (text.match(/[\p{L}_][\p{L}\p{N}_$]*/gu) ?? []).some((word) => names.has(word.toLowerCase()));
  }

  protectedTableNames(): Iterable<string> {
    if (this.protectedNames === undefined) {
      const names = new Set<string>();
      for (const policy of this.policies.columns) if (protectsWrites(policy)) names.add(policy.table);
      for (const relation of this.snapshot.relations.values()) if (this.hasProtectedColumns(relation)) names.add(relation.table);
      this.protectedNames = [...names];
    }
    return this.protectedNames;
  }
}
