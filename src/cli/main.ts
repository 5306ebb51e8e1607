import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AccountExistsError, ConfigError } from '../config/index.js';
import { KeyError } from '../keys/index.js';
import { ACCOUNT_ADD_USAGE, accountAddCommand } from './accountAdd.js';
import { processIo, UsageError, type CliIo } from './cliIo.js';
import { COMMAND_HELP, commandHelpText } from './commandHelp.js';
import { DEMO_USAGE, demoCommand } from './demo.js';
import { KEYS_GENERATE_USAGE, keysGenerateCommand } from './keysGenerate.js';
import { POLICY_CHECK_USAGE, policyCheckCommand } from './policyCheck.js';
import { POLICY_SUGGEST_USAGE, policySuggestCommand } from './policySuggest.js';
import { PROTECT_TABLE_HELP, PROTECT_TABLE_USAGE, protectTableCommand } from './protectTable.js';
import { REKEY_HELP, REKEY_USAGE, rekeyCommand } from './rekey.js';
import { SERVE_USAGE, serveCommand } from './serve.js';

type Command = (args: string[], io: CliIo) => Promise<number>;

/** Commands by their words (one or two). */
const COMMANDS: Record<string, { usage: string; run: Command; help?: string }> = {
  demo: { usage: DEMO_USAGE, run: demoCommand },
  serve: { usage: SERVE_USAGE, run: serveCommand },
  'account add': { usage: ACCOUNT_ADD_USAGE, run: accountAddCommand },
  'keys generate': { usage: KEYS_GENERATE_USAGE, run: keysGenerateCommand },
  'policy check': { usage: POLICY_CHECK_USAGE, run: policyCheckCommand },
  'policy suggest': { usage: POLICY_SUGGEST_USAGE, run: policySuggestCommand },
  'protect-table': { usage: PROTECT_TABLE_USAGE, run: protectTableCommand, help: PROTECT_TABLE_HELP },
  rekey: { usage: REKEY_USAGE, run: rekeyCommand, help: REKEY_HELP },
};

function usage(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((name) => name.length));
  return [
    'Usage: pgveil <command> [options]',
    '',
    'Commands:',
    ...names.flatMap((name) => [
      `  ${name.padEnd(width)}  ${COMMAND_HELP[name]?.summary ?? ''}`,
      `  ${' '.repeat(width)}  ${COMMANDS[name]?.usage ?? ''}`,
    ]),
    '',
    "Run 'pgveil <command> --help' for a command's options and examples.",
  ].join('\n');
}

function findCommand(argv: string[]): { name: string; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    if (COMMANDS[name]) return { name, rest: argv.slice(words) };
  }
  return undefined;
}

/** Runs the pgveil command line; returns the exit code (2 for usage and configuration mistakes). */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    io.err(`unknown command: ${argv.slice(0, 2).join(' ')}\n${usage()}`);
    return 2;
  }
  const command = COMMANDS[found.name];
  if (!command) return 2;
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    io.out(commandHelpText(found.name, command.usage, command.help));
    return 0;
  }
  try {
    return await command.run(found.rest, io);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`configuration error:\n${err.message}`);
      return 2;
    }
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(err as Error).message}\nUsage: ${command.usage}`);
      return 2;
    }
    if (err instanceof AccountExistsError || err instanceof KeyError) {
      io.err((err as Error).message);
      return 1;
    }
    const code = (err as NodeJS.ErrnoException).code;
    io.err(`pgveil ${found.name} failed: ${code === undefined ? (err as Error).message : `${(err as Error).message} (${code})`}`);
    return 1;
  }
}

/** Run directly (node --import tsx src/cli/main.ts ...); bin/pgveil.js calls main() itself. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv.slice(2));
}
