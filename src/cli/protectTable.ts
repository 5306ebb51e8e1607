import { parseArgs } from 'node:util';
import { createEngine } from '../engine/index.js';
import { BACKFILL_OPTIONS, DEFAULT_BATCH_SIZE, readBackfillArgs } from './backfill/backfillArgs.js';
import { runBackfill, type BackfillSpec } from './backfill/backfillRun.js';
import type { WalkHooks } from './backfill/batchWalker.js';
import type { ColumnStep } from './backfill/columnStep.js';
import { PROGRESS_TABLE } from './backfill/progressTable.js';
import { protectStep } from './backfill/protectSteps.js';
import type { CliIo } from './cliIo.js';

export const PROTECT_TABLE_USAGE = 'pgveil protect-table <schema.table> --config config/pgveil.yaml '
  + '[--policies FILE] [--database-url URL | --database NAME] [--batch-size N] [--max-batches N] [--dry-run] [--restart]';

export const PROTECT_TABLE_HELP = `Usage: ${PROTECT_TABLE_USAGE}

Protects the plaintext already stored in a table, as its column policies say, so that the table
holds what the proxy would have written. Connects to the database itself (not through the proxy):
--database-url, or the configuration's proxy.upstream with --database or upstream.database.

The table is walked in primary-key order (a primary key is required), --batch-size rows at a time
(default ${DEFAULT_BATCH_SIZE}), one transaction per batch. Each batch records its last key in
${PROGRESS_TABLE} in the same transaction, so an interrupted run (Ctrl-C, a lost connection)
resumes exactly where it stopped when run again.

Per method:
  tokenise          values that are tokens already are recognised and skipped; tokens of another
                    scope are reported and left as they are.
  fpe               encrypted values look like any other value of the kind: they carry no mark.
                    Only the progress table tells which rows are done, so once a run has finished
                    an fpe column it is not walked again, and a walk stops at the greatest key the
                    table had when it started (rows added later came through the proxy). While an
                    fpe column is walked, do not UPDATE its rows through the proxy (it would write
                    values the walk then encrypts again), nor write plaintext behind its back.
  mask, redact      a value equal to its own mask (or showing the mask character where the kind
                    refuses it) is skipped.
  passthrough       nothing to do: the column stores plaintext.
Values that are not of their column's kind are left as they are and listed by primary key; the
command then exits 1. Correct them through the proxy.

Options:
  --dry-run         read the table and report what would change per column; write nothing.
  --max-batches N   stop after N batches (the next run continues).
  --restart         forget the recorded progress of this table first. fpe values a previous run
                    wrote would be encrypted a second time: only for tables back to plaintext.
Progress (rows done / total, rows/s, time left) goes to stderr, the report to stdout.`;

/** `pgveil protect-table`. `hooks` inject faults in tests. */
export async function protectTableCommand(args: string[], io: CliIo, hooks: WalkHooks = {}): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: BACKFILL_OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    io.out(PROTECT_TABLE_HELP);
    return 0;
  }
  const parsed = readBackfillArgs(values, positionals);
  const spec: BackfillSpec = {
    command: 'protect-table',
    operation: () => 'protect-table',
    changedHeading: () => 'protected',
    alreadyHeading: () => 'already protected',
    steps: (keys, policies) => {
      const engine = createEngine({ masterKey: keys.masterKey, keyVersion: keys.keyVersion, previousKeys: keys.previousKeys });
      return policies.map((policy) => protectStep(engine, policy)).filter((s): s is ColumnStep => s !== undefined);
    },
  };
  return runBackfill(parsed, spec, io, hooks);
}
