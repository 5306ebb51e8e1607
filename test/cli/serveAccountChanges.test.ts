/**
 * Authorisation over time: what an account may see is decided by the configuration in force, not
 * by the one it logged in under. An open proxy session of an account that a reload disables,
 * removes, gives other roles or a new password must stop revealing at once: pgveil ends it with
 * FATAL 57P01, whatever it had open (a cursor WITH HOLD, a prepared statement), and an unchanged
 * account's session goes on.
 */
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { main } from '../../src/cli/main.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { captureIo, freePort, printedSecrets, waitForHttp } from './support/cliHarness.js';

const PLAIN = '123-45-6789';
const POLICIES = 'columns:\n  public.time_people.ssn: { kind: ssn, method: fpe, scope: people, reveal: { app: plaintext, "*": token } }\n';
const NAMES = ['roles', 'disabled', 'removed', 'password', 'kept'] as const;
type Name = (typeof NAMES)[number];

let database: TestPostgres;
beforeAll(async () => { database = await startTestPostgres(); });
afterAll(async () => database?.stop());

async function addAccount(file: string, email: string): Promise<string> {
  const io = captureIo();
  expect(await main(['account', 'add', '--config', file, '--email', email, '--roles', 'app'], io)).toBe(0);
  return printedSecrets(io.stdout.join('\n')).password;
}

async function until(done: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface Served {
  readonly folder: string;
  readonly file: string;
  readonly proxyPort: number;
  readonly apiPort: number;
  readonly passwords: Map<string, string>;
  /** Stops the served process; resolves to its exit code. */
  stop(): Promise<number>;
}

/** `pgveil serve` with an account (role app) per name, the proxy, the policies and a file audit log. */
async function serve(names: readonly string[], upstreamRoles?: Record<string, { user: string; password: string }>): Promise<Served> {
  const folder = await mkdtemp(join(tmpdir(), 'pgveil-accounts-time-'));
  const file = join(folder, 'pgveil.yaml');
  await copyFile('config/pgveil.example.yaml', file);
  const passwords = new Map<string, string>();
  for (const name of names) passwords.set(name, await addAccount(file, `${name}@example.com`));
  const proxyPort = await freePort();
  const apiPort = await freePort();
  const doc = parseDocument(await readFile(file, 'utf8'));
  doc.set('proxy', doc.createNode({
    listen: { host: '127.0.0.1', port: proxyPort }, tls: { mode: 'disable' }, allowCleartextFromLoopback: true,
    upstream: { host: database.host, port: database.port, user: database.user, sslmode: 'disable' },
    ...(upstreamRoles === undefined ? {} : { upstreamRoles }),
  }));
  doc.set('policies', 'policies.yaml');
  doc.set('audit', doc.createNode({ destination: 'file', file: 'audit.log' }));
  await writeFile(file, doc.toString());
  await writeFile(join(folder, 'policies.yaml'), POLICIES);
  const abort = new AbortController();
  const io = captureIo({
    PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_API_PORT: String(apiPort), PGVEIL_UPSTREAM_PASSWORD: database.password, PGVEIL_LOG_LEVEL: 'silent',
  }, abort.signal);
  const running = main(['serve', '--config', file], io);
  await waitForHttp(`http://127.0.0.1:${apiPort}/healthz`);
  return { folder, file, proxyPort, apiPort, passwords, stop: () => { abort.abort(); return running; } };
}

/** A proxy session per name, and the errors each one's client reported. */
async function openSessions(served: Served, names: readonly string[]): Promise<{ clients: Map<string, pg.Client>; errors: Map<string, { code?: string }[]> }> {
  const clients = new Map<string, pg.Client>();
  const errors = new Map<string, { code?: string }[]>();
  for (const name of names) {
    const client = new pg.Client({ host: '127.0.0.1', port: served.proxyPort, user: `${name}@example.com`, password: served.passwords.get(name), database: database.database });
    const seen: { code?: string }[] = [];
    client.on('error', (error) => seen.push(error as { code?: string }));
    await client.connect();
    clients.set(name, client);
    errors.set(name, seen);
  }
  return { clients, errors };
}

/** Waits until the served process's audit log holds `text`. */
async function audited(served: Served, text: string): Promise<void> {
  await until(async () => (await readFile(join(served.folder, 'audit.log'), 'utf8').catch(() => '')).includes(text));
}

describe('pgveil serve: open proxy sessions after an accounts reload', () => {
  it('ends the sessions of accounts disabled, removed, given other roles or another password; others go on', async () => {
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    await direct.query('DROP TABLE IF EXISTS time_people; CREATE TABLE time_people (id int, ssn text)');
    // pgveil refuses a superuser login for a role that does not see every column in plaintext.
    await direct.query(`DO $$ BEGIN CREATE ROLE time_analyst LOGIN PASSWORD 'time-analyst'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await direct.query('GRANT SELECT ON time_people TO time_analyst');
    await direct.end();
    const served = await serve(NAMES, { analyst: { user: 'time_analyst', password: 'time-analyst' } });
    const { file, folder, passwords } = served;
    let opened: Awaited<ReturnType<typeof openSessions>> | undefined;
    try {
      opened = await openSessions(served, NAMES);
      const { clients, errors } = opened;
      const first = clients.get('kept') as pg.Client;
      await first.query('INSERT INTO time_people VALUES (1, $1)', [PLAIN]);
      for (const client of clients.values()) {
        expect((await client.query<{ ssn: string }>('SELECT ssn FROM time_people')).rows).toEqual([{ ssn: PLAIN }]);
        // Things planned under the old account: a held cursor and a prepared statement.
        await client.query('DECLARE held CURSOR WITH HOLD FOR SELECT ssn FROM time_people');
        await client.query({ name: 'q', text: 'SELECT ssn FROM time_people WHERE id = $1', values: [1] });
      }

      const next = parseDocument(await readFile(file, 'utf8'));
      const index = (name: Name) => NAMES.indexOf(name);
      next.setIn(['accounts', index('roles'), 'roles'], next.createNode(['analyst']));
      next.setIn(['accounts', index('disabled'), 'enabled'], false);
      next.setIn(['accounts', index('password'), 'passwordHash'], next.getIn(['accounts', index('kept'), 'passwordHash']));
      next.deleteIn(['accounts', index('removed')]);
      await writeFile(file, next.toString());
      await audited(served, '"accounts.reload","outcome":"ok"');

      for (const name of NAMES) {
        const client = clients.get(name) as pg.Client;
        const reads = [
          client.query<{ ssn: string }>('SELECT ssn FROM time_people'),
          client.query<{ ssn: string }>('FETCH ALL FROM held'),
          client.query<{ ssn: string }>({ name: 'q', text: 'SELECT ssn FROM time_people WHERE id = $1', values: [1] }),
        ];
        const outcomes = await Promise.all(reads.map((read) => read.then((result) => result.rows, (error: { code?: string }) => error)));
        if (name === 'kept') {
          expect(outcomes).toEqual([[{ ssn: PLAIN }], [{ ssn: PLAIN }], [{ ssn: PLAIN }]]);
          continue;
        }
        for (const outcome of outcomes) expect(JSON.stringify(outcome), name).not.toContain(PLAIN);
        expect(errors.get(name)?.[0], name).toMatchObject({ code: '57P01' });
      }
    } finally {
      for (const client of opened?.clients.values() ?? []) await client.end().catch(() => undefined);
      expect(await served.stop()).toBe(0);
    }
    const audit = await readFile(join(folder, 'audit.log'), 'utf8');
    for (const secret of passwords.values()) expect(audit).not.toContain(secret);
  });
});

describe('pgveil serve: an accounts reload refused for an upstream login', () => {
  it('still disables and removes what it disables and removes, disables an account it takes a role from, and ends those sessions; the rest stays as it was', async () => {
    const names = ['gone', 'removed', 'narrowed', 'widened'] as const;
    const served = await serve(names);
    const { file, folder, apiPort, passwords } = served;
    const apiLogin = async (name: string) => (await fetch(`http://127.0.0.1:${apiPort}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${name}@example.com`, password: passwords.get(name) }),
    })).status;
    let opened: Awaited<ReturnType<typeof openSessions>> | undefined;
    try {
      opened = await openSessions(served, names);
      const { clients, errors } = opened;
      // One file change: an account disabled, one removed, one moved from app to analyst (whose
      // upstream login, the superuser, pgveil refuses for a role that lacks plaintext), and one
      // given analyst beside app.
      const next = parseDocument(await readFile(file, 'utf8'));
      next.setIn(['accounts', 0, 'enabled'], false);
      next.setIn(['accounts', 2, 'roles'], next.createNode(['analyst']));
      next.setIn(['accounts', 3, 'roles'], next.createNode(['app', 'analyst']));
      next.deleteIn(['accounts', 1]);
      await writeFile(file, next.toString());
      await audited(served, '"accounts.reload"');
      expect(await readFile(join(folder, 'audit.log'), 'utf8')).toContain('"reason":"upstream_login_refused"');

      // narrowed keeps neither app (taken away) nor analyst (refused): disabled until a reload succeeds.
      for (const name of ['gone', 'removed', 'narrowed']) {
        expect(await apiLogin(name), name).toBe(401);
        const outcome = await (clients.get(name) as pg.Client).query('SELECT 1 AS one').then(() => 'ran', (error: { code?: string }) => error.code);
        expect(outcome, name).not.toBe('ran');
        expect(errors.get(name)?.[0], name).toMatchObject({ code: '57P01' });
      }
      // A role only added is not in force: the account keeps its roles, and its session goes on.
      expect(await apiLogin('widened')).toBe(201);
      expect((await (clients.get('widened') as pg.Client).query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      for (const client of opened?.clients.values() ?? []) await client.end().catch(() => undefined);
      expect(await served.stop()).toBe(0);
    }
  });
});
