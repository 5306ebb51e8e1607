import { parseArgs } from 'node:util';
import type { KeyMaterial } from '../config/index.js';
import { createEngine } from '../engine/index.js';
import type { ColumnPolicy } from '../policy/index.js';
import { BACKFILL_OPTIONS, DEFAULT_BATCH_SIZE, positiveInteger, readBackfillArgs } from './backfill/backfillArgs.js';
import { runBackfill, type BackfillSpec } from './backfill/backfillRun.js';
import type { WalkHooks } from './backfill/batchWalker.js';
import type { ColumnStep } from './backfill/columnStep.js';
import { PROGRESS_TABLE } from './backfill/progressTable.js';
import { rekeyStep, type RekeyEngines } from './backfill/rekeySteps.js';
import { UsageError, type CliIo } from './cliIo.js';

export const REKEY_USAGE = 'pgveil rekey <schema.table> --config config/pgveil.yaml [--from-version N] '
  + '[--policies FILE] [--database-url URL | --database NAME] [--batch-size N] [--max-batches N] [--dry-run] [--restart]';

export const REKEY_HELP = `Usage: ${REKEY_USAGE}

Moves a table's protected values to the current key version after a rotation: keys.keyVersion is
the new version, keys.previousKeys hold the old keys. Walks the table as protect-table does: in
primary-key order, --batch-size rows per transaction (default ${DEFAULT_BATCH_SIZE}), progress in
${PROGRESS_TABLE}, resumable after an interruption, --dry-run and --max-batches alike.

Per method:
  tokenise          tokens carry their key version: tokens of an older version are unprotected
                    and protected again with the new key; tokens of the new version are skipped
                    (email tokens written by pgveil 0.1 with a digit in the TLD are respelled).
                    Values that are no token of any key held are listed by primary key (exit 1).
  fpe               fpe values carry no version: give --from-version N, the key version the column
                    is encrypted with now. Each value is decrypted with that key and encrypted with
                    the new one; only the progress table tells which rows are done, so once a run
                    has finished an fpe column it is not walked again. The proxy reads fpe values
                    with one key only: move fpe columns while nothing reads or writes them through
                    the proxy, then restart it with the new keys.
  mask, redact, passthrough
                    nothing to do: what they store does not depend on a key.
Keep the old keys in keys.previousKeys until every table is rekeyed.

Options:
  --from-version N  the key version fpe columns are encrypted with (required when there are any).
  --restart         forget the recorded progress of this rekey first (fpe values already moved
                    would be decrypted with the wrong key).`;

/** The engines for a move to keys.keyVersion; `from` for fpe columns. */
function rekeyEngines(keys: KeyMaterial, from: number | undefined, needsFrom: boolean): RekeyEngines {
  const held = keys.previousKeys.map((k) => k.version);
  // With no previous key a tokenise-only table can still be respelled; fpe needs the old key.
  if (held.length === 0 && needsFrom) {
    throw new UsageError('keys.previousKeys is empty: rekey moves values from an earlier key version to keys.keyVersion; '
      + 'list the old key there with its version');
  }
  const engines = {
    targetOnly: createEngine({ masterKey: keys.masterKey, keyVersion: keys.keyVersion }),
    all: createEngine({ masterKey: keys.masterKey, keyVersion: keys.keyVersion, previousKeys: keys.previousKeys }),
  };
  if (!needsFrom) return engines;
  if (from === undefined) {
    throw new UsageError('the table has fpe columns, whose values carry no key version: give --from-version N, '
      + `the version they are encrypted with now (keys.previousKeys holds ${held.join(', ')})`);
  }
  const source = keys.previousKeys.find((k) => k.version === from);
  if (!source) {
    throw new UsageError(from === keys.keyVersion
      ? `--from-version ${from} is keys.keyVersion, the version values are moved to`
      : `--from-version ${from}: keys.previousKeys holds no key of that version (it holds ${held.join(', ')})`);
  }
  return { ...engines, fpeSource: { version: from, engine: createEngine({ masterKey: source.key, keyVersion: from }) } };
}

/** `pgveil rekey`. `hooks` inject faults in tests. */
export async function rekeyCommand(args: string[], io: CliIo, hooks: WalkHooks = {}): Promise<number> {
  const { values, positionals } = parseArgs({
    args, options: { ...BACKFILL_OPTIONS, 'from-version': { type: 'string' } }, allowPositionals: true, strict: true,
  });
  if (values.help) {
    io.out(REKEY_HELP);
    return 0;
  }
  const parsed = readBackfillArgs(values, positionals);
  const from = positiveInteger(values['from-version'], '--from-version', 31);
  const spec: BackfillSpec = {
    command: 'rekey',
    operation: (keys) => `rekey to v${keys.keyVersion}`,
    changedHeading: (keys) => `moved to v${keys.keyVersion}`,
    alreadyHeading: (keys) => `already at v${keys.keyVersion}`,
    steps: (keys, policies: readonly ColumnPolicy[]) => {
      const engines = rekeyEngines(keys, from, policies.some((p) => p.method === 'fpe'));
      return policies.map((policy) => rekeyStep(engines, policy)).filter((s): s is ColumnStep => s !== undefined);
    },
    blockedBy: (pending) => {
      const protecting = pending.find((row) => row.operation === 'protect-table' && row.finishedAt === null);
      return protecting === undefined ? undefined
        : `an interrupted protect-table of ${protecting.table} has not finished: its plaintext rows are not tokens yet. `
          + 'Finish it first (run it again), then rekey';
    },
  };
  return runBackfill(parsed, spec, io, hooks);
}
