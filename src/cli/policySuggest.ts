import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig, ROLE_NAME } from '../config/index.js';
import { renderPolicyFile, sampleSchema, toJsonReport, type DiscoveryReport } from '../discovery/index.js';
import { positiveInteger } from './backfill/backfillArgs.js';
import { backfillTarget, connectBackfill, type BackfillConnection } from './backfill/backfillConnection.js';
import { processIo, UsageError, type CliIo } from './cliIo.js';

export const POLICY_SUGGEST_USAGE = 'pgveil policy suggest --config config/pgveil.yaml [--schema public] [--sample 1000] '
  + '[--app-role ROLE] [--json] [--out FILE] [--database-url URL | --database NAME]';

export const DEFAULT_SAMPLE = 1000;
export const MAX_SAMPLE = 10_000;
const STATEMENT_TIMEOUT_MS = 30_000;

/** Where a progress line may go: stderr when it is the process's own. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/** A line redrawn per table on a terminal; nothing when the stream is not one (logs, pipes). Counts only. */
export function progressLine(stream: ProgressStream | undefined): ((done: number, total: number) => void) | undefined {
  if (stream === undefined || stream.isTTY !== true) return undefined;
  return (done, total) => {
    stream.write(`\r\u001b[Ksampled ${done} of ${total} tables${done === total ? '\n' : ''}`);
  };
}

function summary(report: DiscoveryReport, out: string): string {
  const suggested = report.columns.filter((c) => c.score.suggested).length;
  const unsampled = report.unsampled.length > 0 ? `; ${report.unsampled.length} table(s) could not be sampled (see the file)` : '';
  return `${out}: ${suggested} column(s) suggested, ${report.columns.length - suggested} looked at and not suggested${unsampled}. `
    + `Review it, then: pgveil policy check --config <config> --policies ${out}`;
}

/**
 * `pgveil policy suggest`: samples each text-like column of a schema on the database itself and
 * writes the columns whose values are of a protection kind as a commented policy file (or, with
 * --json, a report). No sampled value is ever printed. Exit 0; 1 when the database cannot be
 * reached or the schema has no tables; 2 for a wrong command line.
 */
export async function policySuggestCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      config: { type: 'string', short: 'c' },
      schema: { type: 'string', short: 's' },
      sample: { type: 'string' },
      'app-role': { type: 'string' },
      json: { type: 'boolean' },
      out: { type: 'string', short: 'o' },
      'database-url': { type: 'string' },
      database: { type: 'string', short: 'd' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.config === undefined) throw new UsageError('give --config (its proxy.upstream is the database sampled)');
  const appRole = values['app-role'];
  if (appRole !== undefined && !ROLE_NAME.test(appRole)) throw new UsageError('--app-role must be a role name (1-64 letters, digits, _ . : -)');
  const sampleLimit = positiveInteger(values.sample, '--sample', MAX_SAMPLE) ?? DEFAULT_SAMPLE;
  const schema = values.schema ?? 'public';
  const config = await loadConfig(values.config, { env: io.env });
  const target = backfillTarget(values['database-url'], values.database, config);

  let connection: BackfillConnection;
  try {
    connection = await connectBackfill(target, 'pgveil policy suggest');
  } catch (err) {
    const where = 'url' in target ? 'the database URL given' : `${target.upstream.host}:${target.upstream.port}/${target.database}`;
    io.err(`cannot connect to ${where} to sample the schema: ${(err as Error).message}`);
    return 1;
  }
  let report: DiscoveryReport;
  try {
    const onTable = progressLine(io === processIo ? process.stderr : undefined);
    report = await sampleSchema(connection.query, {
      schema, sampleLimit, statementTimeoutMs: STATEMENT_TIMEOUT_MS, ...(onTable === undefined ? {} : { onTable }),
    });
  } finally {
    await connection.close();
  }

  if (report.tableCount === 0) {
    io.err(`schema ${JSON.stringify(schema)} has no tables that ${connection.description} can see: check --schema (default public)`);
    return 1;
  }
  const text = values.json
    ? `${JSON.stringify(toJsonReport(report), null, 2)}\n`
    : renderPolicyFile(report, { source: connection.description, ...(appRole === undefined ? {} : { appRole }) });
  if (values.out === undefined) {
    io.out(text);
    return 0;
  }
  try {
    // Never over a file that may be a reviewed policy file.
    await writeFile(values.out, text, { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      io.err(`${values.out} exists: it may be a reviewed policy file, so it is not overwritten; remove it or give another --out`);
      return 1;
    }
    throw err;
  }
  io.out(values.json ? `${values.out}: report written` : summary(report, values.out));
  return 0;
}
