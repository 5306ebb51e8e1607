import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import { loadKeyMaterial } from '../../src/config/keySource.js';
import { parseConfig } from '../../src/config/loadConfig.js';

let dir: string;
const current = randomBytes(32);
const previous = randomBytes(32);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pgveil-keys-'));
  await writeFile(join(dir, 'current.key'), `${current.toString('base64')}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'v1.key'), previous.toString('base64'), { mode: 0o600 });
  await writeFile(join(dir, 'open.key'), current.toString('base64'));
  await chmod(join(dir, 'open.key'), 0o644);
  await writeFile(join(dir, 'bad.key'), 'not a key at all, but maybe a secret');
});

function config(keys: string) {
  return parseConfig(`keys:\n${keys}`, join(dir, 'pgveil.yaml'), { env: {} });
}

describe('loadKeyMaterial', () => {
  it('reads the current key file and previous keys', async () => {
    const m = await loadKeyMaterial(config('  masterKeyFile: current.key\n  keyVersion: 2\n  previousKeys:\n    - { version: 1, file: v1.key }\n'), {});
    expect(m.masterKey.equals(current)).toBe(true);
    expect(m.keyVersion).toBe(2);
    expect(m.previousKeys).toEqual([{ version: 1, key: previous }]);
    expect(m.warnings).toEqual([]);
  });

  it('prefers the environment variable to the file', async () => {
    const m = await loadKeyMaterial(config('  masterKeyFile: current.key\n'), { PGVEIL_MASTER_KEY: previous.toString('base64') });
    expect(m.masterKey.equals(previous)).toBe(true);
  });

  it('reads previous keys from the environment', async () => {
    const m = await loadKeyMaterial(config('  keyVersion: 2\n  previousKeys:\n    - { version: 1, env: OLD }\n'), {
      PGVEIL_MASTER_KEY: current.toString('base64'), OLD: previous.toString('base64'),
    });
    expect(m.previousKeys[0]?.key).toEqual(previous);
  });

  it('warns about a key file others can read', async () => {
    const m = await loadKeyMaterial(config('  masterKeyFile: open.key\n'), {});
    expect(m.warnings[0]).toContain('readable by other users');
  });

  it('explains a missing key and how to make one', async () => {
    const err = await loadKeyMaterial(config('  keyVersion: 1\n'), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('no master key: set the environment variable PGVEIL_MASTER_KEY or keys.masterKeyFile');
    expect((err as Error).message).toContain('pgveil keys generate');
    await expect(loadKeyMaterial(config('  masterKeyFile: missing.key\n'), {})).rejects.toThrow('ENOENT');
  });

  it('rejects malformed keys without printing them', async () => {
    const err = await loadKeyMaterial(config('  masterKeyFile: bad.key\n'), {}).catch((e: unknown) => e) as Error;
    expect(err.message).toContain('master key must be 32 bytes');
    expect(err.message).not.toContain('maybe a secret');
    const short = Buffer.alloc(16, 7).toString('base64');
    const envErr = await loadKeyMaterial(config('  keyVersion: 1\n'), { PGVEIL_MASTER_KEY: short }).catch((e: unknown) => e) as Error;
    expect(envErr.message).toContain('environment variable PGVEIL_MASTER_KEY');
    expect(envErr.message).not.toContain(short);
  });
});
