import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { main } from '../../src/cli/main.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { captureIo, freePort, printedSecrets, waitForHttp } from './support/cliHarness.js';

async function configWithAccount(): Promise<{ file: string; password: string; apiKey: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pgveil-serve-'));
  const file = join(dir, 'pgveil.yaml');
  await copyFile('config/pgveil.example.yaml', file);
  const io = captureIo();
  expect(await main(['account', 'add', '--config', file, '--email', 'ops@example.com', '--roles', 'admin'], io)).toBe(0);
  return { file, ...printedSecrets(io.stdout.join('\n')) };
}

async function loginAndProtect(url: string, password: string, apiKey: string): Promise<number> {
  const login = await fetch(`${url}/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ops@example.com', password }),
  });
  if (login.status !== 201) return login.status;
  const t = (await login.json()) as { jwt_token: string; svc_token: string };
  const res = await fetch(`${url}/api/ccn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, authorization: `Bearer ${t.jwt_token}`, 'svc-token': t.svc_token },
    // mask needs no API right: the example configuration grants none, and has no policy file.
    body: JSON.stringify({ id: 1, operation: 'protect', data: ['4111 1111 1111 1111'], options: { method: 'mask' } }),
  });
  return res.status;
}

describe('pgveil serve', () => {
  it('serves the API from the configuration until stopped, reloading accounts on change', async () => {
    const { file, password, apiKey } = await configWithAccount();
    const port = await freePort();
    const stop = new AbortController();
    const io = captureIo({ PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: String(port), PGVEIL_LOG_LEVEL: 'warn' }, stop.signal);
    const running = main(['serve', '--config', file], io);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${url}/healthz`);
      expect(await loginAndProtect(url, password, apiKey)).toBe(200);

      // Disabling the account in the file ends its access without a restart.
      const doc = parseDocument(await readFile(file, 'utf8'));
      doc.setIn(['accounts', 0, 'enabled'], false);
      await writeFile(file, doc.toString());
      const deadline = Date.now() + 5000;
      let status = 0;
      while (Date.now() < deadline) {
        status = await loginAndProtect(url, password, apiKey);
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
    } finally {
      stop.abort();
      expect(await running).toBe(0);
    }
    expect(io.stderr).toEqual([]);
  });

  it('stops at start on a configuration mistake with file:line and exit code 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-serve-'));
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'api:\n  listen:\n    port: 8080\n    hots: 0.0.0.0\n');
    const io = captureIo({});
    expect(await main(['serve', '--config', file], io)).toBe(2);
    expect(io.stderr.join('')).toContain(`${file}:4:5: api.listen.hots: unknown setting; valid settings here: host, port`);
  });

  it('stops at start without a master key, saying how to make one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgveil-serve-'));
    const file = join(dir, 'nokey.yaml');
    await writeFile(file, 'api: { listen: { port: 0 } }\n');
    const io = captureIo({});
    expect(await main(['serve', '--config', file], io)).toBe(2);
    expect(io.stderr.join('')).toContain('pgveil keys generate');
  });

  it('runs as a process and exits cleanly on SIGTERM', async () => {
    const { file, password, apiKey } = await configWithAccount();
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', file], {
      env: { ...process.env, PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      expect(await loginAndProtect(`http://127.0.0.1:${port}`, password, apiKey)).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('protection API listening');
    for (const secret of [password, apiKey]) expect(stdout).not.toContain(secret);
  });
});

describe('pgveil serve with the proxy', () => {
  let database: TestPostgres;
  beforeAll(async () => { database = await startTestPostgres(); });
  afterAll(async () => database?.stop());

  async function proxyConfig(proxyPort: number): Promise<{ file: string; password: string; apiKey: string }> {
    const setup = await configWithAccount();
    const doc = parseDocument(await readFile(setup.file, 'utf8'));
    doc.set('proxy', doc.createNode({
      listen: { host: '127.0.0.1', port: proxyPort },
      tls: { mode: 'disable' },
      allowCleartextFromLoopback: true,
      upstream: { host: database.host, port: database.port, user: database.user, sslmode: 'disable' },
    }));
    await writeFile(setup.file, doc.toString());
    return setup;
  }

  it('records policy reloads of the proxy in the audit log, with a digest and never the policies', async () => {
    const proxyPort = await freePort();
    const { file, password, apiKey } = await proxyConfig(proxyPort);
    const folder = dirname(file);
    const policies = join(folder, 'policies.yaml');
    const column = (method: string) => `columns:\n  public.customers.ssn: { kind: ssn, method: ${method}, scope: customers, reveal: { admin: plaintext } }\n`;
    await writeFile(policies, column('fpe'));
    const doc = parseDocument(await readFile(file, 'utf8'));
    doc.set('policies', 'policies.yaml');
    doc.set('audit', doc.createNode({ destination: 'file', file: 'audit.log' }));
    await writeFile(file, doc.toString());
    const stop = new AbortController();
    const io = captureIo({
      PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: String(await freePort()), PGVEIL_UPSTREAM_PASSWORD: database.password, PGVEIL_LOG_LEVEL: 'silent',
    }, stop.signal);
    const running = main(['serve', '--config', file], io);
    const reloads = async () => (await readFile(join(folder, 'audit.log'), 'utf8').catch(() => ''))
      .split('\n').filter((line) => line.includes('"policy.reload"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    try {
      await waitForHttp(`http://127.0.0.1:${io.env['PGVEIL_API_PORT'] ?? ''}/healthz`);
      await writeFile(policies, column('tokenise'));
      const deadline = Date.now() + 5000;
      while ((await reloads()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(await reloads()).toEqual([expect.objectContaining({ outcome: 'ok', generation: 2, columns: 1, digest: expect.stringMatching(/^sha256:/) })]);
    } finally {
      stop.abort();
      expect(await running).toBe(0);
    }
    const audit = await readFile(join(folder, 'audit.log'), 'utf8');
    for (const secret of ['tokenise', 'customers.ssn', password, apiKey, database.password]) expect(audit).not.toContain(secret);
    expect(io.stderr).toEqual([]);
  });

  it('ends every proxy session with 57P01 on SIGINT, stops the API and says it stopped', async () => {
    const proxyPort = await freePort();
    const apiPort = await freePort();
    const { file, password, apiKey } = await proxyConfig(proxyPort);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', file], {
      env: {
        ...process.env, PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: String(apiPort),
        PGVEIL_UPSTREAM_PASSWORD: database.password, PGVEIL_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const clients: pg.Client[] = [];
    try {
      await waitForHttp(`http://127.0.0.1:${apiPort}/healthz`);
      const errors: { code?: string; message: string }[][] = [];
      const ended: Promise<unknown>[] = [];
      for (let i = 0; i < 2; i += 1) {
        const client = new pg.Client({ host: '127.0.0.1', port: proxyPort, user: 'ops@example.com', password, database: database.database });
        const seen: { code?: string; message: string }[] = [];
        client.on('error', (error) => seen.push(error as { code?: string; message: string }));
        ended.push(new Promise((resolve) => client.once('end', resolve)));
        await client.connect();
        expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        clients.push(client);
        errors.push(seen);
      }
      // And one still logging in: asked for its password, it has not answered yet.
      let asked: () => void = () => undefined;
      const askedForPassword = new Promise<void>((resolve) => { asked = resolve; });
      const loggingIn = new pg.Client({
        host: '127.0.0.1', port: proxyPort, user: 'ops@example.com', database: database.database,
        password: () => { asked(); return new Promise<string>(() => undefined); },
      });
      loggingIn.on('error', () => undefined);
      const refused = loggingIn.connect().then(() => undefined, (error: unknown) => error as { code?: string });
      await askedForPassword;

      child.kill('SIGINT');
      await Promise.all(ended);
      expect(await refused).toMatchObject({ code: '57P01' });
      expect(await exited).toBe(0);
      for (const seen of errors) {
        expect(seen[0]).toMatchObject({ code: '57P01', message: 'terminating connection due to administrator command' });
      }
      await expect(fetch(`http://127.0.0.1:${apiPort}/healthz`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const client of clients) await client.end().catch(() => undefined);
    }
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { msg: string; why?: string });
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'stopping', why: 'SIGINT' }));
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
    for (const secret of [password, apiKey, database.password]) expect(stdout + stderr).not.toContain(secret);
  });
});
