import type { TableName } from '../../policy/index.js';
import { UsageError } from '../cliIo.js';
import { parseTableArgument } from './tableArgument.js';

/** Options protect-table and rekey share (node:util parseArgs form). */
export const BACKFILL_OPTIONS = {
  config: { type: 'string', short: 'c' },
  policies: { type: 'string', short: 'p' },
  'database-url': { type: 'string' },
  database: { type: 'string', short: 'd' },
  'batch-size': { type: 'string' },
  'max-batches': { type: 'string' },
  'dry-run': { type: 'boolean' },
  restart: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const DEFAULT_BATCH_SIZE = 1000;
const MAX_BATCH_SIZE = 100_000;

/** The shared options as parseArgs returns them. */
export interface BackfillValues {
  config?: string;
  policies?: string;
  'database-url'?: string;
  database?: string;
  'batch-size'?: string;
  'max-batches'?: string;
  'dry-run'?: boolean;
  restart?: boolean;
}

export interface BackfillArgs {
  readonly table: TableName;
  readonly configFile: string;
  readonly policiesFile?: string;
  readonly databaseUrl?: string;
  readonly database?: string;
  readonly batchSize: number;
  readonly maxBatches?: number;
  readonly dryRun: boolean;
  readonly restart: boolean;
}

export function positiveInteger(raw: string | undefined, option: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new UsageError(`${option} must be a whole number from 1 to ${max === Number.MAX_SAFE_INTEGER ? 'any' : max}`);
  }
  return value;
}

/** Checks the shared options; throws UsageError naming the wrong one. */
export function readBackfillArgs(values: BackfillValues, positionals: readonly string[]): BackfillArgs {
  if (positionals.length > 1) throw new UsageError(`one table at a time; got ${positionals.length}`);
  const table = parseTableArgument(positionals[0]);
  if (values.config === undefined) throw new UsageError('give --config (its keys, policies and proxy.upstream are used)');
  if (values['dry-run'] && values.restart) throw new UsageError('--restart forgets recorded progress; it cannot be combined with --dry-run');
  const args: BackfillArgs = {
    table,
    configFile: values.config,
    batchSize: positiveInteger(values['batch-size'], '--batch-size', MAX_BATCH_SIZE) ?? DEFAULT_BATCH_SIZE,
    dryRun: values['dry-run'] ?? false,
    restart: values.restart ?? false,
  };
  const maxBatches = positiveInteger(values['max-batches'], '--max-batches');
  return {
    ...args,
    ...(values.policies === undefined ? {} : { policiesFile: values.policies }),
    ...(values['database-url'] === undefined ? {} : { databaseUrl: values['database-url'] }),
    ...(values.database === undefined ? {} : { database: values.database }),
    ...(maxBatches === undefined ? {} : { maxBatches }),
  };
}
