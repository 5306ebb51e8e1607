/**
 * Per-analysis memo of the ProtectedSchema's answers: each relation is resolved and each of its
 * columns asked about once, however often the statement names them.
 */
import type { ColumnRef, ProtectedSchema } from './sqlAnalysisTypes.js';

export interface TableColumn {
  readonly ref: ColumnRef;
  readonly protected: boolean;
}

export interface TableInfo {
  readonly schema: string;
  readonly table: string;
  readonly columns: readonly TableColumn[];
  readonly hasProtectedColumns: boolean;
}

export class RelationLookup {
  private readonly tables = new Map<string, TableInfo | undefined>();

  constructor(readonly schema: ProtectedSchema) {}

  /** The relation as written, or undefined when the schema does not know it (temp tables, typos). */
  table(schemaName: string | undefined, tableName: string): TableInfo | undefined {
    const key = `${schemaName ?? ''}\u0000${tableName}`;
    if (this.tables.has(key)) return this.tables.get(key);
    const info = this.describe(schemaName, tableName);
    this.tables.set(key, info);
    return info;
  }

  private describe(schemaName: string | undefined, tableName: string): TableInfo | undefined {
    const resolved = this.schema.resolveTable(schemaName, tableName);
    if (resolved === undefined) return undefined;
    const columns = resolved.columns.map((column): TableColumn => {
      const ref: ColumnRef = { schema: resolved.schema, table: resolved.table, column };
      return { ref, protected: this.schema.isProtected(ref) };
    });
    return {
      schema: resolved.schema,
      table: resolved.table,
      columns,
      hasProtectedColumns: columns.some((column) => column.protected),
    };
  }
}

export function sameColumn(a: ColumnRef, b: ColumnRef): boolean {
  return a.schema === b.schema && a.table === b.table && a.column === b.column;
}

/** `schema.table.column` with identifiers quoted where PostgreSQL would need it. */
export function columnName(column: ColumnRef): string {
  return `${quoteIdentifier(column.schema)}.${quoteIdentifier(column.table)}.${quoteIdentifier(column.column)}`;
}

export function quoteIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}
