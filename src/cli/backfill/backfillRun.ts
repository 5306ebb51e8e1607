import { loadKeyMaterial, loadConfig, type KeyMaterial } from '../../config/index.js';
import { PolicyError, loadAndValidatePolicies, type ColumnPolicy, type PolicySet } from '../../policy/index.js';
import { processIo, UsageError, type CliIo } from '../cliIo.js';
import type { BackfillArgs } from './backfillArgs.js';
import { backfillTarget, connectBackfill, type BackfillConnection } from './backfillConnection.js';
import { renderSummary } from './backfillSummary.js';
import { keyOf, lastKeySql } from './batchStatements.js';
import { walkTable, type WalkHooks, type WalkOutcome } from './batchWalker.js';
import type { ColumnStep } from './columnStep.js';
import { ProgressDisplay, type ProgressSink } from './progressDisplay.js';
import {
  ProgressConflictError, ensureProgressTable, forgetProgress, planWalk, readProgress, startWalk, type ProgressRow, type WalkPlan,
} from './progressTable.js';
import { TableLayoutError, estimateRowCount, readTableLayout, type TableLayout } from './tableLayout.js';

/** What makes protect-table and rekey different; the walk itself is shared. */
export interface BackfillSpec {
  /** `protect-table`, `rekey`: the command's name, also its application_name on the database. */
  readonly command: string;
  /** The progress table's operation: `protect-table`, `rekey to v2`. */
  operation(keys: KeyMaterial): string;
  readonly changedHeading: (keys: KeyMaterial) => string;
  readonly alreadyHeading: (keys: KeyMaterial) => string;
  /** The steps for the table's column policies (none for columns with nothing to do). Throws UsageError. */
  steps(keys: KeyMaterial, policies: readonly ColumnPolicy[]): ColumnStep[];
  /** A message when a pending walk of another operation must finish first. */
  blockedBy?(pending: readonly ProgressRow[]): string | undefined;
}

/** A terminal gets one redrawn line; anything else gets a plain line every few seconds. */
function progressSink(io: CliIo): ProgressSink {
  if (io === processIo && process.stderr.isTTY) return { live: true, write: (text) => { process.stderr.write(text); } };
  return { live: false, write: (text) => io.err(text) };
}

/** Stops between batches on SIGINT/SIGTERM or io.signal; a second signal ends the process at once. */
function stopOnSignals(io: CliIo): { requested: () => boolean; dispose: () => void } {
  let stop = io.signal?.aborted ?? false;
  const onSignal = () => {
    stop = true;
    dispose();
    io.err('stopping after the current batch (interrupt again to abandon it; it then rolls back)');
  };
  const onAbort = () => { stop = true; };
  const dispose = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.signal?.removeEventListener('abort', onAbort);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  io.signal?.addEventListener('abort', onAbort, { once: true });
  return { requested: () => stop, dispose };
}

/** The table's greatest primary key now, where a new walk stops; null for an empty table. */
async function lastKey(db: BackfillConnection, layout: TableLayout): Promise<string[] | null> {
  const [row] = await db.query(lastKeySql(layout));
  return row ? keyOf(row, layout.key.length) : null;
}

/** Only one walk per table at a time: two would both encrypt the same fpe values. */
async function lockTable(db: BackfillConnection, layout: TableLayout): Promise<boolean> {
  const [row] = await db.query("SELECT pg_try_advisory_lock(hashtext('pgveil backfill'), hashtext($1)) AS locked", [layout.display]);
  return row?.['locked'] === 't';
}

/** The table's column policies; refuses policies on primary-key columns, which the walk orders by. */
function tablePolicies(layout: TableLayout, all: PolicySet, file: string): ColumnPolicy[] {
  const policies = [...(all.table(layout.table.schema, layout.table.table)?.values() ?? [])];
  if (policies.length === 0) throw new UsageError(`${file} has no column policies for ${layout.display}: nothing to do`);
  for (const key of layout.key) {
    const policy = policies.find((p) => p.column === key.name);
    if (policy && policy.method !== 'passthrough') {
      throw new UsageError(`primary key column ${key.name} of ${layout.display} has a ${policy.method} policy: `
        + 'the walk orders rows by their key and cannot change it. Protect key columns with a new table, or use passthrough');
    }
  }
  return policies;
}

/** What a walk needs once the checks pass; an exit code when one fails (already reported). */
interface PreparedWalk {
  readonly layout: TableLayout;
  readonly plan: WalkPlan;
}

/**
 * Checks the policies against the catalog, reads the table, takes its lock and plans the walk
 * from the recorded progress.
 */
async function prepareWalk(
  db: BackfillConnection, args: BackfillArgs, spec: BackfillSpec, keys: KeyMaterial, policiesFile: string, io: CliIo,
): Promise<PreparedWalk | number> {
  let layout: TableLayout;
  let steps: ColumnStep[];
  try {
    const policies = await loadAndValidatePolicies(policiesFile, db.query);
    layout = await readTableLayout(db, args.table);
    steps = spec.steps(keys, tablePolicies(layout, policies, policiesFile));
  } catch (err) {
    if (err instanceof PolicyError) {
      io.err(`${policiesFile} is not valid (run \`pgveil policy check\` for the full report):\n${err.message}`);
      return 2;
    }
    if (err instanceof TableLayoutError) {
      io.err(err.message);
      return 1;
    }
    throw err;
  }
  if (!args.dryRun && !(await lockTable(db, layout))) {
    io.err(`another pgveil protect-table or rekey is running on ${layout.display}; wait for it to finish`);
    return 1;
  }
  const operation = spec.operation(keys);
  if (!args.dryRun) {
    await ensureProgressTable(db);
    if (args.restart) await forgetProgress(db, layout.display, operation);
  }
  const recorded = await readProgress(db, layout.display);
  const blocked = spec.blockedBy?.(recorded);
  if (blocked !== undefined) {
    io.err(blocked);
    return 1;
  }
  let plan: WalkPlan;
  try {
    plan = planWalk(layout.display, operation, steps, recorded);
  } catch (err) {
    if (!(err instanceof ProgressConflictError)) throw err;
    io.err(err.message);
    return 1;
  }
  if (plan.steps.length === 0) {
    io.out(`${layout.display}: nothing to do (${steps.length === 0 ? 'no column needs it' : 'every column is done'})`);
    return 0;
  }
  return { layout, plan };
}

/**
 * Runs a backfill command: configuration, keys and policies (checked against the live catalog),
 * the table's layout, the plan from recorded progress, then the walk and its report.
 * Exit 0 when done (or stopped by --max-batches), 1 when values were left as they are, the walk
 * was interrupted or the database refused, 2 for a wrong command line, configuration or policies.
 */
export async function runBackfill(args: BackfillArgs, spec: BackfillSpec, io: CliIo, hooks: WalkHooks = {}): Promise<number> {
  const config = await loadConfig(args.configFile, { env: io.env });
  const policiesFile = args.policiesFile ?? config.policies;
  if (policiesFile === undefined) throw new UsageError(`${args.configFile} sets no \`policies\` file: add one, or pass --policies FILE`);
  const keys = await loadKeyMaterial(config, io.env);
  for (const warning of keys.warnings) io.err(`warning: ${warning}`);
  const target = backfillTarget(args.databaseUrl, args.database, config);
  let db: BackfillConnection;
  try {
    db = await connectBackfill(target, `pgveil ${spec.command}`);
  } catch (err) {
    io.err(`cannot connect to ${'url' in target ? 'the database URL given' : `${target.upstream.host}:${target.upstream.port}/${target.database}`}: ${(err as Error).message}`);
    return 1;
  }
  try {
    const prepared = await prepareWalk(db, args, spec, keys, policiesFile, io);
    if (typeof prepared === 'number') return prepared;
    const { layout, plan } = prepared;
    const endKey = plan.resume ? plan.resume.endKey : await lastKey(db, layout);
    if (!args.dryRun && !plan.resume) await startWalk(db, plan.key, endKey);

    const total = await estimateRowCount(db, layout);
    const progress = new ProgressDisplay(progressSink(io), { label: layout.display, total, startDone: plan.resume?.rowsDone ?? 0 });
    const stop = stopOnSignals(io);
    const started = Date.now();
    let outcome: WalkOutcome;
    try {
      outcome = await walkTable({
        db, layout, plan, endKey, batchSize: args.batchSize, dryRun: args.dryRun, stopRequested: stop.requested, progress, hooks,
        ...(args.maxBatches === undefined ? {} : { maxBatches: args.maxBatches }),
      });
    } finally {
      stop.dispose();
    }
    progress.finish();
    io.out(renderSummary({
      layout, dryRun: args.dryRun, end: outcome.end, batches: outcome.batches, rowsWalked: outcome.rowsWalked,
      seconds: (Date.now() - started) / 1000, steps: plan.steps, tallies: outcome.tallies, done: plan.done,
      changedHeading: spec.changedHeading(keys), alreadyHeading: spec.alreadyHeading(keys),
      ...(plan.resume ? { resumedAfter: plan.resume.rowsDone } : {}),
    }));
    const problems = [...outcome.tallies.values()].some((t) => t.problemCount() > 0);
    return problems || outcome.end === 'interrupted' ? 1 : 0;
  } finally {
    await db.close();
  }
}
