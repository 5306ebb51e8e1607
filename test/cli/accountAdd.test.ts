import { copyFile, mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createLogger } from '../../src/cli/logger.js';
import { startServices } from '../../src/cli/services.js';
import { loadConfig } from '../../src/config/loadConfig.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { captureIo, printedSecrets } from './support/cliHarness.js';

describe('pgveil account add', () => {
  it('adds an account whose printed password and API key work, storing only hashes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-account-'));
    const file = join(dir, 'pgveil.yaml');
    await copyFile('config/pgveil.example.yaml', file);
    const modeBefore = (await stat(file)).mode;

    const io = captureIo();
    expect(await main(['account', 'add', '--config', file, '--email', 'Dana@Example.com', '--roles', 'analyst, support'], io)).toBe(0);
    const out = io.stdout.join('\n');
    const { password, apiKey } = printedSecrets(out);
    expect(out).toContain('shown only this once');

    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(password);
    expect(text).not.toContain(apiKey);
    expect(text).toContain('# pgveil configuration — example');
    expect((await stat(file)).mode).toBe(modeBefore);

    const env = { PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: '0' };
    const config = await loadConfig(file, { env });
    expect(config.accounts).toEqual([expect.objectContaining({ email: 'dana@example.com', roles: ['analyst', 'support'], enabled: true })]);

    const services = await startServices(config, { logger: createLogger('silent'), env });
    try {
      const url = services.api?.url ?? '';
      const login = await fetch(`${url}/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'dana@example.com', password }),
      });
      expect(login.status).toBe(201);
      const tokens = (await login.json()) as { jwt_token: string; svc_token: string };
      const r = await fetch(`${url}/api/ssn`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, authorization: tokens.jwt_token, 'svc-token': tokens.svc_token },
        body: JSON.stringify({ id: 1, operation: 'protect', data: ['123-45-6789'], options: { method: 'mask' } }),
      });
      expect(r.status).toBe(200);
    } finally {
      await services.close();
    }

    const dup = captureIo();
    expect(await main(['account', 'add', '--config', file, '--email', 'dana@example.com', '--roles', 'x'], dup)).toBe(1);
    expect(dup.stderr.join('')).toContain('already exists');
  });

  it('can add a disabled account, and explains missing options', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-account-'));
    const file = join(dir, 'pgveil.yaml');
    await copyFile('config/pgveil.example.yaml', file);
    expect(await main(['account', 'add', '--config', file, '--email', 'e@example.com', '--roles', 'analyst', '--disabled'], captureIo())).toBe(0);
    expect((await loadConfig(file, { env: {} })).accounts[0]?.enabled).toBe(false);

    const noRoles = captureIo();
    expect(await main(['account', 'add', '--config', file, '--email', 'f@example.com'], noRoles)).toBe(2);
    expect(noRoles.stderr.join('')).toContain('--roles is required');
    const badRole = captureIo();
    expect(await main(['account', 'add', '--config', file, '--email', 'f@example.com', '--roles', 'two words'], badRole)).toBe(2);
    expect(badRole.stderr.join('')).toContain('roles[0]: must be a role name');
    const noFile = captureIo();
    expect(await main(['account', 'add', '--config', join(dir, 'none.yaml'), '--email', 'f@example.com', '--roles', 'a'], noFile)).toBe(2);
  });
});
