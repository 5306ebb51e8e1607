/**
 * Per-analysis memo of the ProtectedSchema's answers: each relation is resolved and each of its
 * columns asked about once, however often the statement names them.
 */
import type { ColumnRef, PlaintextSource, ProtectedSchema } from './sqlAnalysisTypes.js';

export interface TableColumn {
  readonly ref: ColumnRef;
  readonly protected: boolean;
  /** A plaintext-at-rest column this one shows (itself, or through a view). */
  readonly plaintext?: PlaintextSource;
}

export interface TableInfo {
  readonly schema: string;
  readonly table: string;
  readonly columns: readonly TableColumn[];
  readonly hasProtectedColumns: boolean;
  /** See ResolvedTable.pathDependent. */
  readonly pathDependent?: boolean;
}

function failClosed(message: string): never {
  throw new Error(message);
}

export class RelationLookup {
  private readonly tables = new Map<string, TableInfo | undefined>();
  private readonly refusals = new Map<string, string>();
  /** How many lookups (repeats included) answered a path-dependent relation. */
  pathDependentLookups = 0;

  /** `refuse` stops the statement when the schema cannot tell which relation a name denotes. */
  constructor(readonly schema: ProtectedSchema, private readonly refuse: (message: string) => never = failClosed) {}

  /** The relation as written, or undefined when the schema does not know it (temp tables, typos). */
  table(schemaName: string | undefined, tableName: string): TableInfo | undefined {
    const key = `${schemaName ?? ''}\u0000${tableName}`;
    let info: TableInfo | undefined;
    if (this.tables.has(key)) {
      info = this.tables.get(key);
    } else {
      info = this.describe(key, schemaName, tableName);
      this.tables.set(key, info);
    }
    const refusal = this.refusals.get(key);
    if (refusal !== undefined) this.refuse(refusal);
    if (info?.pathDependent === true) this.pathDependentLookups++;
    return info;
  }

  private describe(key: string, schemaName: string | undefined, tableName: string): TableInfo | undefined {
    const resolved = this.schema.resolveTable(schemaName, tableName);
    if (resolved === undefined) return undefined;
    if (resolved.refusal !== undefined) this.refusals.set(key, resolved.refusal);
    const columns = resolved.columns.map((column): TableColumn => {
      const ref: ColumnRef = resolved.standIn === true
        ? { schema: resolved.schema, table: resolved.table, column, standIn: true }
        : { schema: resolved.schema, table: resolved.table, column };
      const plaintext = spelledSource(this.schema.plaintextSource?.(ref), ref);
      return plaintext === undefined ? { ref, protected: this.schema.isProtected(ref) } : { ref, protected: this.schema.isProtected(ref), plaintext };
    });
    return {
      schema: resolved.schema,
      table: resolved.table,
      columns,
      hasProtectedColumns: columns.some((column) => column.protected),
      ...(resolved.pathDependent === true ? { pathDependent: true } : {}),
    };
  }
}

/**
 * A plaintext source as reached through this spelling of the name: the column itself is its own
 * ref (sameStoredColumn compares refs by identity); read through a stand-in name, a view's base
 * column is not that column's plaintext either.
 */
function spelledSource(source: PlaintextSource | undefined, ref: ColumnRef): PlaintextSource | undefined {
  if (source === undefined) return undefined;
  if (sameColumn(source.column, ref)) return { ...source, column: ref };
  return ref.standIn === true ? { ...source, column: { ...source.column, standIn: true } } : source;
}

export function sameColumn(a: ColumnRef, b: ColumnRef): boolean {
  return a.schema === b.schema && a.table === b.table && a.column === b.column;
}

/**
 * Whether a value read from `a` and written into `b` (or the reverse) certainly stays in the same
 * stored column, so it carries nothing new: not when either was reached through a name the server
 * may look up as another relation (a shadowing table, a temporary table), whose values are not
 * that column's (tokens of it, plaintext of a masked column, the attacker's plaintext); and only
 * when both were reached through the same spelling of the name, which the server looks up once
 * (RelationLookup hands out one ColumnRef per spelling). `customers` and `public.customers` may
 * part if another session creates a `customers` earlier on the path before the server parses the
 * statement, out of pgveil's sight.
 */
export function sameStoredColumn(a: ColumnRef, b: ColumnRef): boolean {
  return a === b && a.standIn !== true;
}

/** `schema.table.column` with identifiers quoted where PostgreSQL would need it. */
export function columnName(column: ColumnRef): string {
  return `${quoteIdentifier(column.schema)}.${quoteIdentifier(column.table)}.${quoteIdentifier(column.column)}`;
}

export function quoteIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}
