import { DEFAULT_SAMPLE, MAX_SAMPLE } from './policySuggest.js';

/**
 * What `pgveil <command> --help` prints beside the command's usage line: what it does, in a
 * sentence or two, and examples to copy.
 */
export interface CommandHelp {
  readonly summary: string;
  /** Printed under the usage line; omitted for commands that print help of their own. */
  readonly details?: string;
  readonly examples: readonly string[];
}

export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  demo: {
    summary: 'run pgveil with an embedded PostgreSQL, demo accounts and a demo table',
    details: 'Starts PostgreSQL in a folder of its own, the protection API and the proxy, and prints how to connect as each demo role. Ctrl-C stops everything.',
    examples: ['pgveil demo', 'pgveil demo --dir /tmp/pgveil-demo'],
  },
  serve: {
    summary: 'run the protection API and, with a proxy section, the wire-protocol proxy',
    details: 'Reads the configuration (see config/pgveil.example.yaml), reloads policies and accounts when their files change, and stops cleanly on SIGINT/SIGTERM (sessions are told with 57P01).',
    examples: ['pgveil serve --config config/pgveil.yaml', 'PGVEIL_MASTER_KEY=$(cat master.key) pgveil serve --config /etc/pgveil/pgveil.yaml'],
  },
  'account add': {
    summary: 'add an account to the configuration file',
    details: 'Creates the account with a random password and API key, printed once; the file keeps only their hashes (scrypt for the password).',
    examples: ['pgveil account add --email analyst@example.com --roles analyst', 'pgveil account add --email etl@example.com --roles ingest --disabled'],
  },
  'keys generate': {
    summary: 'write a new random master key',
    details: 'Writes a random 256-bit key to a file only its owner can read, and will not overwrite an existing key without --force (values protected with it would be lost).',
    examples: ['pgveil keys generate --out .pgveil/master.key', 'pgveil keys generate --stdout > master.key'],
  },
  'policy check': {
    summary: 'check a column-policy file against the configuration and the database',
    details: 'Validates the policies, checks each column exists with a type its method keeps, and prints per role what it sees through the proxy, what it may do on the API and which upstream login it uses; lists code on protected tables.',
    examples: ['pgveil policy check --config config/pgveil.yaml', 'pgveil policy check --config config/pgveil.yaml --policies new-policies.yaml --no-database'],
  },
  'policy suggest': {
    summary: 'suggest column policies from a sample of a schema\'s values (PII discovery)',
    details: `Samples up to --sample rows (default ${DEFAULT_SAMPLE}, at most ${MAX_SAMPLE}) of each table (read-only, with a statement timeout) on the database itself, recognises the protection kinds with the engine's own parsers and column-name hints, and writes a commented policy file to review: per column its kind, a method that keeps the column's type, a scope per table and a reveal that shows plaintext to --app-role only (or to no role). Comments give counts and shares, never a value; columns below the threshold are listed at the end. --json prints a report instead; --out writes a file and never overwrites one.`,
    examples: [
      'pgveil policy suggest --config config/pgveil.yaml --app-role app --out suggested-policies.yaml',
      'pgveil policy suggest --config config/pgveil.yaml --schema billing --sample 5000 --json',
    ],
  },
  'protect-table': {
    summary: 'protect the plaintext already stored in a table, in resumable batches',
    examples: ['pgveil protect-table public.customers --config config/pgveil.yaml --dry-run', 'pgveil protect-table public.customers --config config/pgveil.yaml --batch-size 5000'],
  },
  rekey: {
    summary: 'move a table\'s tokens to the current key version',
    examples: ['pgveil rekey public.customers --config config/pgveil.yaml --from-version 1'],
  },
};

/** The whole help of one command: its own detailed text when it has one, then examples. */
export function commandHelpText(name: string, usage: string, ownHelp?: string): string {
  const help = COMMAND_HELP[name];
  const lines = ownHelp !== undefined ? [ownHelp] : [`Usage: ${usage}`, ...(help?.details === undefined ? [] : ['', help.details])];
  if (help !== undefined) lines.push('', 'Examples:', ...help.examples.map((example) => `  ${example}`));
  return lines.join('\n');
}
