import { formatTableName, qualifiedTableSql, type TableName } from '../../policy/index.js';
import type { BackfillConnection } from './backfillConnection.js';

/** A column as the batch statements use it: its name and the type its text values are cast to. */
export interface LayoutColumn {
  readonly name: string;
  /** format_type without the modifier (`character varying`, `date`): casting text to varchar(n) would truncate silently, assigning checks the length. */
  readonly castType: string;
}

/** What a backfill needs to know of the table it walks. */
export interface TableLayout {
  readonly table: TableName;
  /** `public.customers`, quoted where needed: for messages. */
  readonly display: string;
  /** The primary key's columns, in key order. */
  readonly key: readonly LayoutColumn[];
  readonly columns: ReadonlyMap<string, LayoutColumn>;
}

/** A table the backfill cannot walk; the message says why and what to do. */
export class TableLayoutError extends Error {
  override readonly name = 'TableLayoutError';
}

const LAYOUT_SQL = `
SELECT c.relkind::text AS relkind, a.attname AS name,
       pg_catalog.format_type(a.atttypid, NULL) AS cast_type, k.position::text AS key_position
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_catalog.pg_index i ON i.indrelid = c.oid AND i.indisprimary
  LEFT JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position) ON k.attnum = a.attnum
 WHERE n.nspname = $1 AND c.relname = $2
 ORDER BY a.attnum`;

/** Plain and partitioned tables: what UPDATE can change and a primary key can order. */
const WALKABLE_RELKINDS = new Set(['r', 'p']);

/**
 * Reads the table's columns and primary key. Throws TableLayoutError when the table does not
 * exist, is not a table, or has no primary key (the walk needs a unique order to resume exactly).
 */
export async function readTableLayout(db: BackfillConnection, table: TableName): Promise<TableLayout> {
  const display = formatTableName(table.schema, table.table);
  const rows = await db.query(LAYOUT_SQL, [table.schema, table.table]);
  const first = rows[0];
  if (!first) throw new TableLayoutError(`table ${display} does not exist in ${db.description}`);
  if (!WALKABLE_RELKINDS.has(first['relkind'] ?? '')) {
    throw new TableLayoutError(`${display} is not a table: protect the table that stores the values`);
  }
  const columns = new Map<string, LayoutColumn>();
  const keyed: { position: number; column: LayoutColumn }[] = [];
  for (const row of rows) {
    const column: LayoutColumn = { name: row['name'] ?? '', castType: row['cast_type'] ?? 'text' };
    columns.set(column.name, column);
    if (row['key_position'] !== null && row['key_position'] !== undefined) keyed.push({ position: Number(row['key_position']), column });
  }
  if (keyed.length === 0) {
    throw new TableLayoutError(`${display} has no primary key: the rows are walked in primary-key order so that an `
      + 'interrupted run resumes exactly. Add one (ALTER TABLE ... ADD PRIMARY KEY) and run again');
  }
  keyed.sort((a, b) => a.position - b.position);
  return { table, display, key: keyed.map((k) => k.column), columns };
}

/** Below this estimate the exact count is taken. */
const COUNT_BELOW = 1_000_000;

/** Rows in the table: pg_class.reltuples when the table has been analysed, else an exact count. */
export async function estimateRowCount(db: BackfillConnection, layout: TableLayout): Promise<number> {
  const [stats] = await db.query(
    `SELECT c.reltuples::bigint::text AS estimate FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [layout.table.schema, layout.table.table],
  );
  const estimate = Number(stats?.['estimate'] ?? -1);
  // -1: never analysed; 0 may be stale on a freshly loaded table. Counting small tables is cheap.
  if (estimate >= COUNT_BELOW) return estimate;
  const [count] = await db.query(`SELECT count(*)::text AS n FROM ${qualifiedTableSql(layout.table)}`);
  return Number(count?.['n'] ?? 0);
}
