import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseMasterKey } from '../../src/keys/masterKey.js';
import { captureIo } from './support/cliHarness.js';

describe('pgveil keys generate', () => {
  it('writes a 256-bit key readable by its owner only, and never overwrites it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-keygen-'));
    const out = join(dir, 'nested', 'master.key');
    const io = captureIo();
    expect(await main(['keys', 'generate', '--out', out], io)).toBe(0);
    const key = await readFile(out, 'utf8');
    expect(parseMasterKey(key)).toHaveLength(32);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(io.stdout.join('')).toContain('keys.masterKeyFile');
    expect(io.stdout.join('')).not.toContain(key.trim());

    const again = captureIo();
    expect(await main(['keys', 'generate', '--out', out], again)).toBe(1);
    expect(again.stderr.join('')).toContain('already exists');
    expect(await readFile(out, 'utf8')).toBe(key);

    expect(await main(['keys', 'generate', '--out', out, '--force'], captureIo())).toBe(0);
    expect(await readFile(out, 'utf8')).not.toBe(key);
  });

  it('prints a key with --stdout', async () => {
    const io = captureIo();
    expect(await main(['keys', 'generate', '--stdout'], io)).toBe(0);
    expect(parseMasterKey(io.stdout.join(''))).toHaveLength(32);
  });

  it('answers usage mistakes with exit code 2', async () => {
    const io = captureIo();
    expect(await main(['keys', 'generate', '--bogus'], io)).toBe(2);
    expect(io.stderr.join('')).toContain('Usage: pgveil keys generate');
    expect(await main(['frobnicate'], captureIo())).toBe(2);
    const help = captureIo();
    expect(await main(['--help'], help)).toBe(0);
    expect(help.stdout.join('')).toContain('pgveil serve');
  });
});
