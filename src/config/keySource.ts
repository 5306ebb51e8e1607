import { readFile, stat } from 'node:fs/promises';
import { parseMasterKey, type KeyVersionInput } from '../keys/index.js';
import { ConfigError, type ConfigIssue } from './configError.js';
import type { KeySource, PgveilConfig } from './configTypes.js';
import type { Env } from './envOverrides.js';

/** The key material the engine and the keyring are built from (EngineConfig's shape). */
export interface KeyMaterial {
  masterKey: Buffer;
  keyVersion: number;
  previousKeys: KeyVersionInput[];
  /** Notes for the operator (e.g. a key file readable by others); never key material. */
  warnings: string[];
}

async function readKey(source: KeySource, env: Env, path: string, file: string, warnings: string[]): Promise<Buffer | ConfigIssue> {
  const fail = (message: string): ConfigIssue => ({ file, path, message });
  if (source.env !== undefined) {
    const value = env[source.env];
    if (value !== undefined && value !== '') {
      try {
        return parseMasterKey(value);
      } catch (err) {
        return fail(`environment variable ${source.env}: ${(err as Error).message}`);
      }
    }
    if (source.file === undefined) return fail(`environment variable ${source.env} is not set`);
  }
  if (source.file === undefined) return fail('no key source');
  let text: string;
  try {
    text = await readFile(source.file, 'utf8');
    const mode = (await stat(source.file)).mode;
    if ((mode & 0o077) !== 0) warnings.push(`key file for ${path} is readable by other users; chmod 600 it`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    return fail(`cannot read key file ${source.file} (${code}); create one with \`pgveil keys generate\``);
  }
  try {
    return parseMasterKey(text);
  } catch (err) {
    return fail(`key file ${source.file}: ${(err as Error).message}`);
  }
}

/**
 * Loads the master keys named by the `keys` section: the current one from the environment
 * variable keys.masterKeyEnv when it is set, otherwise from keys.masterKeyFile; earlier versions
 * from their own file or variable. Throws ConfigError; messages never contain key material.
 */
export async function loadKeyMaterial(config: PgveilConfig, env: Env = process.env): Promise<KeyMaterial> {
  const { keys } = config;
  const warnings: string[] = [];
  const issues: ConfigIssue[] = [];
  const file = config.file;
  if ((env[keys.masterKeyEnv] ?? '') === '' && keys.masterKeyFile === undefined) {
    throw new ConfigError([{
      file, path: 'keys',
      message: `no master key: set the environment variable ${keys.masterKeyEnv} or keys.masterKeyFile `
        + '(`pgveil keys generate` writes a key file)',
    }]);
  }
  const current: KeySource = { env: keys.masterKeyEnv };
  if (keys.masterKeyFile !== undefined) current.file = keys.masterKeyFile;
  const master = await readKey(current, env, 'keys.masterKeyFile', file, warnings);
  const previousKeys: KeyVersionInput[] = [];
  for (const [i, prev] of keys.previousKeys.entries()) {
    const key = await readKey(prev, env, `keys.previousKeys[${i}]`, file, warnings);
    if (Buffer.isBuffer(key)) previousKeys.push({ version: prev.version, key });
    else issues.push(key);
  }
  if (!Buffer.isBuffer(master)) issues.unshift(master);
  if (issues.length > 0 || !Buffer.isBuffer(master)) throw new ConfigError(issues);
  return { masterKey: master, keyVersion: keys.keyVersion, previousKeys, warnings };
}
