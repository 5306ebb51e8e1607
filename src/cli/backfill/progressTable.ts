import type { BackfillConnection } from './backfillConnection.js';
import { entryColumnMethod, type ColumnStep } from './columnStep.js';

/**
 * The progress of backfills, one row per (table, operation, column set), written in the same
 * transaction as each batch: after an interruption the walk resumes after the last committed key.
 * It also remembers which fpe columns are done, since their values carry no mark, and the last
 * key the table had when the walk started: rows added later were written through the proxy.
 */
export const PROGRESS_TABLE = 'public.pgveil_backfill_progress';

const CREATE_SQL = `
CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (
  table_name  text        NOT NULL,
  operation   text        NOT NULL,
  column_set  text[]      NOT NULL,
  last_key    text,
  end_key     text,
  rows_done   bigint      NOT NULL DEFAULT 0,
  started_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (table_name, operation, column_set)
)`;

/** Which walk a progress row belongs to. */
export interface ProgressKey {
  /** The table as written in messages: `public.customers`. */
  readonly table: string;
  /** `protect-table`, `rekey to v2`. */
  readonly operation: string;
  /** Sorted step entries. */
  readonly columnSet: readonly string[];
}

export interface ProgressRow extends ProgressKey {
  /** The primary key of the last row committed, as PostgreSQL prints each key column. */
  readonly lastKey: readonly string[] | null;
  /** The table's greatest primary key when the walk started; null when it was empty. */
  readonly endKey: readonly string[] | null;
  readonly rowsDone: number;
  readonly finishedAt: string | null;
}

/** Where a walk starts, and which columns it covers. */
export interface WalkPlan {
  readonly key: ProgressKey;
  readonly steps: readonly ColumnStep[];
  /** Steps left out: fpe columns a finished walk already covered. */
  readonly done: readonly ColumnStep[];
  /** The running walk this one continues, if any. */
  readonly resume?: { readonly lastKey: readonly string[] | null; readonly endKey: readonly string[] | null; readonly rowsDone: number };
}

/** A pending walk over other columns: resuming it with this run's columns would lose its place. */
export class ProgressConflictError extends Error {
  override readonly name = 'ProgressConflictError';
}

export async function ensureProgressTable(db: BackfillConnection): Promise<void> {
  await db.query(CREATE_SQL);
}

function parseKey(text: string | null | undefined): string[] | null {
  if (text === null || text === undefined) return null;
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.map(String) : null;
}

/** Every progress row of `table` (any operation); none when the progress table does not exist yet. */
export async function readProgress(db: BackfillConnection, table: string): Promise<ProgressRow[]> {
  const [exists] = await db.query('SELECT to_regclass($1) IS NOT NULL AS present', [PROGRESS_TABLE]);
  if (exists?.['present'] !== 't') return []; // booleans print as t and f
  const rows = await db.query(
    `SELECT operation, array_to_json(column_set)::text AS column_set, last_key, end_key, rows_done::text AS rows_done,
            finished_at::text AS finished_at
       FROM ${PROGRESS_TABLE} WHERE table_name = $1 ORDER BY started_at`,
    [table],
  );
  return rows.map((r) => ({
    table,
    operation: r['operation'] ?? '',
    columnSet: parseKey(r['column_set']) ?? [],
    lastKey: parseKey(r['last_key']),
    endKey: parseKey(r['end_key']),
    rowsDone: Number(r['rows_done'] ?? 0),
    finishedAt: r['finished_at'] ?? null,
  }));
}

/** Forgets every walk of `table` under `operation` (--restart). */
export async function forgetProgress(db: BackfillConnection, table: string, operation: string): Promise<void> {
  await db.query(`DELETE FROM ${PROGRESS_TABLE} WHERE table_name = $1 AND operation = $2`, [table, operation]);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}

/**
 * Decides this run's walk from the rows of earlier ones: columns that recognise their own output
 * are always walked; the others only until a walk covering them has finished. A running walk
 * over exactly these columns is resumed; one over other columns is a conflict.
 */
export function planWalk(table: string, operation: string, steps: readonly ColumnStep[], rows: readonly ProgressRow[]): WalkPlan {
  const mine = rows.filter((r) => r.operation === operation);
  const finished = new Set(mine.filter((r) => r.finishedAt !== null).flatMap((r) => r.columnSet.map(entryColumnMethod)));
  const walked = steps.filter((s) => s.recognisesOwnOutput || !finished.has(entryColumnMethod(s.entry)));
  const done = steps.filter((s) => !walked.includes(s));
  const key: ProgressKey = { table, operation, columnSet: walked.map((s) => s.entry).sort() };
  const running = mine.filter((r) => r.finishedAt === null);
  const same = running.find((r) => sameSet(r.columnSet, key.columnSet));
  const other = running.find((r) => r !== same);
  if (other) {
    throw new ProgressConflictError(`an interrupted ${operation} of ${table} over (${other.columnSet.join(', ')}) has not finished `
      + `(${other.rowsDone} rows done); this run would cover (${key.columnSet.join(', ') || 'nothing'}). Finish it with the `
      + 'options and policies it started with, or pass --restart to forget the progress of this table '
      + '(fpe values it already wrote would then be transformed again)');
  }
  const plan: WalkPlan = { key, steps: walked, done };
  return same ? { ...plan, resume: { lastKey: same.lastKey, endKey: same.endKey, rowsDone: same.rowsDone } } : plan;
}

/** Records the start of a new walk (over a finished row of the same key, if any), up to `endKey`. */
export async function startWalk(db: BackfillConnection, key: ProgressKey, endKey: readonly string[] | null): Promise<void> {
  await db.query(
    `INSERT INTO ${PROGRESS_TABLE} (table_name, operation, column_set, end_key) VALUES ($1, $2, $3, $4)
     ON CONFLICT (table_name, operation, column_set) DO UPDATE
       SET last_key = NULL, end_key = EXCLUDED.end_key, rows_done = 0, started_at = now(), updated_at = now(), finished_at = NULL`,
    [key.table, key.operation, [...key.columnSet], endKey === null ? null : JSON.stringify(endKey)],
  );
}

/** Moves the walk past `lastKey`; run inside the batch's transaction. */
export async function recordBatch(db: BackfillConnection, key: ProgressKey, lastKey: readonly string[], rows: number): Promise<void> {
  await db.query(
    `UPDATE ${PROGRESS_TABLE} SET last_key = $4, rows_done = rows_done + $5, updated_at = now()
      WHERE table_name = $1 AND operation = $2 AND column_set = $3`,
    [key.table, key.operation, [...key.columnSet], JSON.stringify(lastKey), rows],
  );
}

export async function finishWalk(db: BackfillConnection, key: ProgressKey): Promise<void> {
  await db.query(
    `UPDATE ${PROGRESS_TABLE} SET finished_at = now(), updated_at = now()
      WHERE table_name = $1 AND operation = $2 AND column_set = $3`,
    [key.table, key.operation, [...key.columnSet]],
  );
}
