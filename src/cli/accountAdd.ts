import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey, generatePassword, hashPassword } from '../auth/index.js';
import { normaliseEmail, addAccountToConfigText, ConfigError, parseConfig } from '../config/index.js';
import { UsageError, type CliIo } from './cliIo.js';
import { DEFAULT_CONFIG_PATH } from './serve.js';

export const ACCOUNT_ADD_USAGE = 'pgveil account add --email EMAIL --roles ROLE[,ROLE...] [--config config/pgveil.yaml] [--disabled]';

/**
 * `pgveil account add`: creates an account with a random password and API key, stores only their
 * hashes in the configuration file (comments kept) and prints the secrets this one time.
 */
export async function accountAddCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string', short: 'c' },
      email: { type: 'string' },
      roles: { type: 'string' },
      disabled: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.email === undefined) throw new UsageError('--email is required');
  if (values.roles === undefined) throw new UsageError('--roles is required (comma-separated, e.g. --roles analyst,support)');
  const file = values.config ?? DEFAULT_CONFIG_PATH;
  const roles = values.roles.split(',').map((r) => r.trim()).filter((r) => r !== '');

  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError([{ file, path: '', message: `cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}); copy config/pgveil.example.yaml first` }]);
  }
  const password = generatePassword();
  const apiKey = generateApiKey();
  const account = {
    email: normaliseEmail(values.email),
    passwordHash: await hashPassword(password),
    apiKeyHash: hashApiKey(apiKey),
    roles,
    enabled: !values.disabled,
  };
  const next = addAccountToConfigText(text, account);
  // Refuse to write a file serve would reject (a bad email or role is caught here, with its line).
  parseConfig(next, file, { env: io.env });

  // Write beside and rename: a running serve never reads a half-written file.
  const tmp = `${file}.${process.pid}.tmp`;
  const mode = (await stat(file)).mode & 0o777;
  await writeFile(tmp, next, { mode });
  await rename(tmp, file);

  io.out([
    `Added account ${account.email} (roles: ${roles.join(', ') || 'none'}${account.enabled ? '' : ', disabled'}) to ${file}.`,
    '',
    `  password: ${password}`,
    `  API key:  ${apiKey}`,
    '',
    'They are shown only this once: the file keeps only their hashes.',
    'A running `pgveil serve` picks the account up as soon as the file changes.',
  ].join('\n'));
  return 0;
}
