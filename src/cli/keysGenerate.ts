import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { generateMasterKey } from '../keys/index.js';
import { UsageError, type CliIo } from './cliIo.js';

export const KEYS_GENERATE_USAGE = 'pgveil keys generate [--out .pgveil/master.key] [--force] [--stdout]';
/** Beside the working tree's .gitignore'd .pgveil/ folder, never inside config/. */
export const DEFAULT_KEY_PATH = '.pgveil/master.key';

/**
 * `pgveil keys generate`: writes a new random 256-bit master key (base64) to a file only its
 * owner can read, refusing to overwrite one: losing a key loses every value protected with it.
 */
export async function keysGenerateCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { out: { type: 'string', short: 'o' }, force: { type: 'boolean' }, stdout: { type: 'boolean' } },
    strict: true,
  });
  const key = generateMasterKey();
  if (values.stdout) {
    if (values.out !== undefined) throw new UsageError('give either --out or --stdout');
    io.out(key);
    return 0;
  }
  const out = values.out ?? DEFAULT_KEY_PATH;
  await mkdir(dirname(out), { recursive: true, mode: 0o700 });
  try {
    await writeFile(out, `${key}\n`, { mode: 0o600, flag: values.force ? 'w' : 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      io.err(`${out} already exists; pgveil will not overwrite a master key (values protected with it would be lost). Use --force to replace it.`);
      return 1;
    }
    throw err;
  }
  io.out([
    `Wrote a new master key to ${out} (readable by its owner only).`,
    `Point keys.masterKeyFile at it, or put its content in the PGVEIL_MASTER_KEY environment variable.`,
    'Keep it out of the repository and back it up: without it, protected values cannot be recovered.',
  ].join('\n'));
  return 0;
}
