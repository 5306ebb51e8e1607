import type { TableName } from './policyTypes.js';

/** An identifier for SQL text: always double-quoted, so keywords and capitals are safe. */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"` for SQL text. */
export function qualifiedTableSql(table: TableName): string {
  return `${sqlIdentifier(table.schema)}.${sqlIdentifier(table.table)}`;
}
