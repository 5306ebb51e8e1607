/**
 * Reads a schema's tables from the catalog and a bounded sample of each sampled column: one
 * read-only transaction per table with a statement timeout, at most `sampleLimit` rows (block
 * sampling first on large tables), each value cut to MAX_SAMPLED_CHARACTERS. Values are tallied
 * and dropped as they come; only counts leave this file.
 */
import { qualifiedTableSql, readCatalogTables, sqlIdentifier, type CatalogQuery, type CatalogTable } from '../policy/index.js';
import { scoreColumn } from './columnScoring.js';
import { ColumnTally } from './columnTally.js';
import type { DiscoveredColumn, DiscoveryReport, UnsampledTable } from './discoveryTypes.js';
import { kindsForFamily } from './kindRecognisers.js';

/** A query on the database whose values come back as PostgreSQL prints them. */
export type SampleQuery = (sql: string, params?: readonly unknown[]) => Promise<readonly Readonly<Record<string, string | null>>[]>;

export interface SampleOptions {
  readonly schema: string;
  readonly sampleLimit: number;
  readonly statementTimeoutMs: number;
  /** Called after each table, for a progress line. */
  readonly onTable?: (done: number, total: number) => void;
}

/** Longer than any value of a kind but free text, which is not suggested: bounds memory per value. */
export const MAX_SAMPLED_CHARACTERS = 256;

/** Block sampling pays off once a table has this many times the rows wanted. */
const TABLESAMPLE_FACTOR = 4;
/** Block sampling picks at least about this many blocks, so a small sample is not one lucky block. */
const MIN_SAMPLED_BLOCKS = 32;

/** What the catalog estimates of a table's size (from its last ANALYZE; -1 rows when never analysed). */
interface TableSize {
  readonly rows: number;
  readonly pages: number;
}

const TABLES_SQL = `
SELECT c.relname AS table_name, c.relkind::text AS relkind, c.reltuples::text AS estimated_rows,
       c.relpages::text AS pages
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
 ORDER BY c.relname`;

/** What a failed sample query says, without its message (which could quote anything). */
function failureReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === '42501') return 'permission denied (SQLSTATE 42501): grant SELECT on it to the upstream user';
  if (code === '57014') return 'the sample query ran into statement_timeout (SQLSTATE 57014)';
  return typeof code === 'string' ? `the sample query failed (SQLSTATE ${code})` : 'the sample query failed';
}

interface SampledColumnPlan {
  readonly name: string;
  readonly tally: ColumnTally;
}

/** The percentage of blocks TABLESAMPLE SYSTEM reads, or undefined when a plain LIMIT is better. */
function blockPercentage(size: TableSize, relkind: string, limit: number): number | undefined {
  if (relkind !== 'r' || size.rows <= limit * TABLESAMPLE_FACTOR || size.pages <= MIN_SAMPLED_BLOCKS) return undefined;
  return Math.min(100, 100 * Math.max((limit * TABLESAMPLE_FACTOR) / size.rows, MIN_SAMPLED_BLOCKS / size.pages));
}

function sampleSql(table: CatalogTable, columns: readonly SampledColumnPlan[], limit: number, percentage?: number): string {
  const list = columns.map((c, i) => `left(${sqlIdentifier(c.name)}::text, ${MAX_SAMPLED_CHARACTERS}) AS c${i}`).join(', ');
  const from = qualifiedTableSql(table);
  // SYSTEM picks whole blocks: cheap on big tables, and LIMIT bounds the rows whatever it picks.
  const sampled = percentage === undefined ? '' : ` TABLESAMPLE SYSTEM (${percentage.toFixed(6)})`;
  return `SELECT ${list} FROM ${from}${sampled} LIMIT ${limit}`;
}

async function sampleTable(
  query: SampleQuery, table: CatalogTable, plan: readonly SampledColumnPlan[], limit: number, percentage: number | undefined, timeoutMs: number,
): Promise<void> {
  await query('BEGIN TRANSACTION READ ONLY');
  try {
    await query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    let rows = await query(sampleSql(table, plan, limit, percentage));
    // Blocks picked at random can fall short (stale statistics, a table mostly deleted): then the first rows.
    if (percentage !== undefined && rows.length < limit) rows = await query(sampleSql(table, plan, limit));
    for (const row of rows) plan.forEach((c, i) => { c.tally.add(row[`c${i}`] ?? null); });
    await query('COMMIT');
  } catch (err) {
    await query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

export async function sampleSchema(query: SampleQuery, options: SampleOptions): Promise<DiscoveryReport> {
  const catalogQuery: CatalogQuery = (sql, params) => query(sql, params);
  const tableRows = await query(TABLES_SQL, [options.schema]);
  const tables = await readCatalogTables(catalogQuery, tableRows.map((r) => ({ schema: options.schema, table: r['table_name'] ?? '' })));
  const columns: DiscoveredColumn[] = [];
  const unsampled: UnsampledTable[] = [];
  const byName = new Map([...tables.values()].map((t) => [t.table, t]));
  let done = 0;
  for (const row of tableRows) {
    const table = byName.get(row['table_name'] ?? '');
    done++;
    // Dropped between the two catalog reads: nothing to sample.
    if (table === undefined) {
      options.onTable?.(done, tableRows.length);
      continue;
    }
    const plan: SampledColumnPlan[] = [];
    const types = new Map<string, DiscoveredColumn['type']>();
    for (const column of table.columns.values()) {
      const kinds = kindsForFamily(column.type.family);
      if (kinds.length === 0) continue;
      plan.push({ name: column.name, tally: new ColumnTally(column.name, kinds) });
      types.set(column.name, column.type);
    }
    if (plan.length > 0) {
      const size = { rows: Number(row['estimated_rows'] ?? -1), pages: Number(row['pages'] ?? 0) };
      const percentage = blockPercentage(size, row['relkind'] ?? 'r', options.sampleLimit);
      try {
        await sampleTable(query, table, plan, options.sampleLimit, percentage, options.statementTimeoutMs);
        for (const c of plan) {
          const type = types.get(c.name);
          if (type) columns.push({ schema: table.schema, table: table.table, column: c.name, type, score: scoreColumn(c.tally) });
        }
      } catch (err) {
        unsampled.push({ schema: table.schema, table: table.table, reason: failureReason(err) });
      }
    }
    options.onTable?.(done, tableRows.length);
  }
  return { schema: options.schema, tableCount: tableRows.length, sampleLimit: options.sampleLimit, columns, unsampled };
}
