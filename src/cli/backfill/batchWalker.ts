import type { BackfillConnection, TextRow } from './backfillConnection.js';
import { ColumnTally, type WalkEnd } from './backfillSummary.js';
import { keyOf, selectBatchSql, updateBatchSql, valueOf } from './batchStatements.js';
import type { ColumnStep } from './columnStep.js';
import type { ProgressDisplay } from './progressDisplay.js';
import { finishWalk, recordBatch, type WalkPlan } from './progressTable.js';
import type { LayoutColumn, TableLayout } from './tableLayout.js';

/** Fault injection for tests: called inside each batch's transaction, after its UPDATE. */
export interface WalkHooks {
  beforeCommit?(batch: number): void | Promise<void>;
}

export interface WalkOptions {
  readonly db: BackfillConnection;
  readonly layout: TableLayout;
  readonly plan: WalkPlan;
  /** The last key to walk (the table's greatest when the walk started); null: it was empty. */
  readonly endKey: readonly string[] | null;
  readonly batchSize: number;
  /** Read and count only: no locks, no writes, no progress recorded. */
  readonly dryRun: boolean;
  /** Stop (as if interrupted, but on purpose) after this many batches. */
  readonly maxBatches?: number;
  /** Checked between batches: true stops the walk after the batch that is running. */
  readonly stopRequested: () => boolean;
  readonly progress: ProgressDisplay;
  readonly hooks?: WalkHooks;
}

export interface WalkOutcome {
  readonly end: WalkEnd;
  readonly batches: number;
  readonly rowsWalked: number;
  readonly tallies: ReadonlyMap<ColumnStep, ColumnTally>;
}

interface BatchChanges {
  readonly keys: string[][];
  /** Per step column, per changed row: the new value, or null to keep it. */
  readonly values: (string | null)[][];
}

/** Runs every step over one batch of rows; tallies what it decided. */
async function transformBatch(
  rows: readonly TextRow[], layout: TableLayout, steps: readonly ColumnStep[], tallies: Map<ColumnStep, ColumnTally>,
): Promise<BatchChanges> {
  const keys = rows.map((row) => keyOf(row, layout.key.length));
  const perStep: (string | null)[][] = [];
  for (const [c, step] of steps.entries()) {
    const tally = tallies.get(step) as ColumnTally;
    const rowOf: number[] = [];
    const values: string[] = [];
    rows.forEach((row, r) => {
      const value = valueOf(row, c);
      if (value === null) return; // NULL stays NULL: there is nothing to protect
      rowOf.push(r);
      values.push(value);
    });
    const column: (string | null)[] = rows.map(() => null);
    if (values.length > 0) {
      const result = await step.run(values);
      for (const [i, value] of result.changes) column[rowOf[i] as number] = value;
      tally.changed += result.changes.size;
      tally.alreadyDone += result.alreadyDone;
      for (const p of result.problems) tally.problem(p.reason, keys[rowOf[p.index] as number] as string[]);
    }
    perStep.push(column);
  }
  const changedRows = rows.map((_, r) => r).filter((r) => perStep.some((column) => column[r] !== null));
  return {
    keys: changedRows.map((r) => keys[r] as string[]),
    values: perStep.map((column) => changedRows.map((r) => column[r] ?? null)),
  };
}

/**
 * PostgreSQL's data exceptions (SQLSTATE class 22: `invalid input syntax for type uuid: "..."`,
 * `value too long`) quote the value in their message; this one names only the table and code.
 */
function withoutValues(err: unknown, layout: TableLayout): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('22')) return err;
  return new Error(`PostgreSQL refused a value written to ${layout.display} (SQLSTATE ${code}; the value is not shown). `
    + 'Check the columns with `pgveil policy check`; the batch was rolled back and the next run resumes before it');
}

/**
 * Walks the table in primary-key order, one transaction per batch: lock the next rows, transform
 * them, update the changed ones and record the last key, then commit. An interruption loses at
 * most the batch in flight, which rolls back whole and is done again on the next run. Rows with
 * keys past `endKey` came in after the start, through the proxy: they are protected already.
 */
export async function walkTable(opts: WalkOptions): Promise<WalkOutcome> {
  const { db, layout, plan, dryRun } = opts;
  const columns = plan.steps.map((s) => layout.columns.get(s.policy.column) as LayoutColumn);
  const tallies = new Map(plan.steps.map((s) => [s, new ColumnTally()] as const));
  let after: readonly string[] | null = plan.resume?.lastKey ?? null;
  let done = plan.resume?.rowsDone ?? 0;
  let batches = 0;
  let rowsWalked = 0;
  const end = (why: WalkEnd): WalkOutcome => ({ end: why, batches, rowsWalked, tallies });
  const until = opts.endKey;
  if (until === null) {
    if (!dryRun) await finishWalk(db, plan.key);
    return end('finished');
  }

  for (;;) {
    if (opts.maxBatches !== undefined && batches >= opts.maxBatches) return end('batch-limit');
    if (opts.stopRequested()) return end('interrupted');
    const select = selectBatchSql(layout, columns, opts.batchSize, after, until, !dryRun);
    if (dryRun) {
      const rows = await db.query(select.sql, select.params);
      if (rows.length === 0) return end('finished');
      await transformBatch(rows, layout, plan.steps, tallies);
      after = keyOf(rows[rows.length - 1] as TextRow, layout.key.length);
      batches++;
      rowsWalked += rows.length;
      done += rows.length;
      opts.progress.update(done);
      continue;
    }
    await db.query('BEGIN');
    try {
      const rows = await db.query(select.sql, select.params);
      if (rows.length === 0) {
        await finishWalk(db, plan.key);
        await db.query('COMMIT');
        return end('finished');
      }
      const changes = await transformBatch(rows, layout, plan.steps, tallies);
      if (changes.keys.length > 0) {
        const update = updateBatchSql(layout, columns, changes.keys, changes.values);
        await db.query(update.sql, update.params);
      }
      const last = keyOf(rows[rows.length - 1] as TextRow, layout.key.length);
      await recordBatch(db, plan.key, last, rows.length);
      await opts.hooks?.beforeCommit?.(batches + 1);
      await db.query('COMMIT');
      after = last;
      batches++;
      rowsWalked += rows.length;
      done += rows.length;
    } catch (err) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw withoutValues(err, layout);
    }
    opts.progress.update(done);
  }
}
