import { qualifiedTableSql, sqlIdentifier } from '../../policy/index.js';
import type { LayoutColumn, TableLayout } from './tableLayout.js';

/**
 * SQL of one batch. Result columns and unnest aliases are positional (k0.., c0..), so names that
 * need quoting appear only where they are quoted. Values travel as text arrays and are cast to
 * each column's type, as PostgreSQL would read them from a client.
 */

const keyAlias = (i: number) => `k${i}`;
const valueAlias = (i: number) => `c${i}`;

export function keyOf(row: Readonly<Record<string, string | null>>, keyColumns: number): string[] {
  return Array.from({ length: keyColumns }, (_, i) => row[keyAlias(i)] ?? '');
}

export function valueOf(row: Readonly<Record<string, string | null>>, column: number): string | null {
  return row[valueAlias(column)] ?? null;
}

/** The greatest primary key of the table now (ORDER BY the key, DESC, LIMIT 1). */
export function lastKeySql(layout: TableLayout): string {
  const keys = layout.key.map((k, i) => `${sqlIdentifier(k.name)} AS ${keyAlias(i)}`).join(', ');
  const order = layout.key.map((k) => `${sqlIdentifier(k.name)} DESC`).join(', ');
  return `SELECT ${keys} FROM ${qualifiedTableSql(layout.table)} ORDER BY ${order} LIMIT 1`;
}

export interface BatchSelect {
  readonly sql: string;
  readonly params: unknown[];
}

/**
 * The next `limit` rows after `after` and up to `until` in primary-key order (row comparison, so
 * composite keys order as their index does). With `lock`, the rows stay locked until the batch
 * commits, so a concurrent writer cannot slip a value in between read and update.
 */
export function selectBatchSql(
  layout: TableLayout, columns: readonly LayoutColumn[], limit: number,
  after: readonly string[] | null, until: readonly string[], lock: boolean,
): BatchSelect {
  const keys = `(${layout.key.map((k) => sqlIdentifier(k.name)).join(', ')})`;
  const params: unknown[] = [limit];
  const bound = (values: readonly string[]) => `(${layout.key.map((k, i) => {
    params.push(values[i]);
    return `$${params.length}::${k.castType}`;
  }).join(', ')})`;
  const select = [
    ...layout.key.map((k, i) => `${sqlIdentifier(k.name)} AS ${keyAlias(i)}`),
    ...columns.map((c, i) => `${sqlIdentifier(c.name)} AS ${valueAlias(i)}`),
  ].join(', ');
  const where = [...(after === null ? [] : [`${keys} > ${bound(after)}`]), `${keys} <= ${bound(until)}`];
  const sql = `SELECT ${select} FROM ${qualifiedTableSql(layout.table)} WHERE ${where.join(' AND ')}`
    + ` ORDER BY ${layout.key.map((k) => sqlIdentifier(k.name)).join(', ')} LIMIT $1`
    + (lock ? ' FOR NO KEY UPDATE' : '');
  return { sql, params };
}

export interface BatchUpdate {
  readonly sql: string;
  readonly params: unknown[];
}

/**
 * One UPDATE for the rows of a batch that change: `keys[r]` is row r's primary key, `values[c][r]`
 * the new value of column c in row r (null: unchanged). Only columns with a change are set.
 */
export function updateBatchSql(
  layout: TableLayout, columns: readonly LayoutColumn[],
  keys: readonly (readonly string[])[], values: readonly (readonly (string | null)[])[],
): BatchUpdate {
  const changing = columns.map((_, c) => c).filter((c) => values[c]?.some((v) => v !== null));
  const params: unknown[] = [];
  const arrays: string[] = [];
  const aliases: string[] = [];
  layout.key.forEach((_, k) => {
    params.push(keys.map((key) => key[k]));
    arrays.push(`$${params.length}::text[]`);
    aliases.push(keyAlias(k));
  });
  for (const c of changing) {
    params.push(values[c]);
    arrays.push(`$${params.length}::text[]`);
    aliases.push(valueAlias(c));
  }
  const set = changing.map((c) => {
    const column = columns[c] as LayoutColumn;
    const name = sqlIdentifier(column.name);
    // NULL in the array means "this row keeps its value" (NULLs are never written).
    return `${name} = COALESCE(v.${valueAlias(c)}::${column.castType}, t.${name})`;
  });
  const match = layout.key.map((k, i) => `t.${sqlIdentifier(k.name)} = v.${keyAlias(i)}::${k.castType}`);
  const sql = `UPDATE ${qualifiedTableSql(layout.table)} AS t SET ${set.join(', ')}`
    + ` FROM unnest(${arrays.join(', ')}) AS v(${aliases.join(', ')}) WHERE ${match.join(' AND ')}`;
  return { sql, params };
}
