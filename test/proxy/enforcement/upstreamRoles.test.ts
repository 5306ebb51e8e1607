/**
 * Each pgveil role reaches PostgreSQL as a least-privilege login of its own (proxy.upstreamRoles),
 * so PostgreSQL's privileges back pgveil up: even with pgveil's own statement rules lifted, a
 * masked account cannot read the server's files, run programs, switch to a superuser or read
 * another session's query text. pgveil refuses to start (or reload) when a role that does not see
 * every protected column in plaintext would log in as a superuser, a reader of server files or
 * programs, or a BYPASSRLS role.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountAuthenticator } from '../../../src/auth/authService.js';
import { generateApiKey, hashApiKey } from '../../../src/auth/apiKey.js';
import { hashPassword } from '../../../src/auth/passwordHash.js';
import type { AccountConfig, ProxyConfig, UpstreamLoginConfig } from '../../../src/config/configTypes.js';
import { createEngine } from '../../../src/engine/engine.js';
import { Keyring } from '../../../src/keys/keyring.js';
import { startConfiguredProxy, type ConfiguredProxy } from '../../../src/proxy/configuredProxy.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { ANALYST, APP, POLICIES_YAML, SCHEMA_SQL, SUPPORT, type TestAccount } from './support/policyHarness.js';

const PHONE = '+1 (555) 010-4477';
const PASSWORD = 'least-privilege-password';

let database: TestPostgres;
let folder: string;
let policiesFile: string;
let accounts: AccountConfig[];
const running: ConfiguredProxy[] = [];

const LEAST_PRIVILEGE = { app: 'lp_app', support: 'lp_support', analyst: 'lp_analyst' };

beforeAll(async () => {
  database = await startTestPostgres();
  const setup = new pg.Client({ connectionString: database.url });
  await setup.connect();
  await setup.query(SCHEMA_SQL);
  for (const role of [...Object.values(LEAST_PRIVILEGE), 'lp_programs', 'lp_bypass']) {
    await setup.query(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
  }
  await setup.query('GRANT pg_execute_server_program TO lp_programs');
  await setup.query('ALTER ROLE lp_bypass BYPASSRLS');
  await setup.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  await setup.query('GRANT USAGE ON SCHEMA public TO lp_app, lp_support, lp_analyst');
  await setup.query('GRANT SELECT, INSERT, UPDATE, DELETE ON customers, orders TO lp_app');
  await setup.query('GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO lp_app');
  await setup.query('GRANT SELECT ON customers, orders TO lp_support, lp_analyst');
  await setup.end();
  folder = await mkdtemp(path.join(tmpdir(), 'pgveil-upstream-roles-'));
  policiesFile = path.join(folder, 'policies.yaml');
  // The statement rules are lifted for the analyst: here PostgreSQL alone must hold.
  await writeFile(policiesFile, `${POLICIES_YAML}privileges:\n  analyst: [server-files, role-switch, monitor, code]\n`);
  accounts = await Promise.all([APP, SUPPORT, ANALYST].map(async (account) => ({
    email: account.email, passwordHash: await hashPassword(account.password, 4), apiKeyHash: hashApiKey(generateApiKey()),
    roles: account.roles, enabled: true,
  })));
});

afterAll(async () => {
  for (const proxy of running) await proxy.close();
  await database?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

function proxyConfig(upstreamRoles: Record<string, UpstreamLoginConfig>): ProxyConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 }, tls: { mode: 'disable' }, allowCleartextFromLoopback: true,
    maxClientConnections: 50, maxPendingLogins: 50, loginTimeoutSeconds: 10, idleTimeoutSeconds: 0, nativeSocketIo: true, maxProtectedValueBytes: 4096,
    upstream: { host: database.host, port: database.port, user: database.user, password: database.password, database: database.database, sslmode: 'disable' },
    databases: {},
    upstreamRoles,
    workers: 1,
    peerId: 0,
    peers: [],
  };
}

function mapped(roles: Record<string, string>): Record<string, UpstreamLoginConfig> {
  return Object.fromEntries(Object.entries(roles).map(([role, user]) => [role, { user, password: PASSWORD }]));
}

async function start(upstreamRoles: Record<string, UpstreamLoginConfig>, accountList = accounts): Promise<ConfiguredProxy> {
  const proxy = await startConfiguredProxy({
    config: proxyConfig(upstreamRoles), policiesFile, accounts: () => accountList,
    engine: createEngine({ masterKey: randomBytes(32) }),
    auth: createAccountAuthenticator({
      accounts: accountList, keyring: new Keyring([{ version: 1, key: Buffer.alloc(32, 3) }]),
      loginRateLimit: { maxFailuresPerAccount: 1000, maxFailuresPerClient: 1000, windowSeconds: 60 },
    }),
    logger: pino({ level: 'silent' }),
  });
  running.push(proxy);
  return proxy;
}

async function connect(proxy: ConfiguredProxy, account: TestAccount): Promise<pg.Client> {
  const client = new pg.Client({ host: '127.0.0.1', port: proxy.port, user: account.email, password: account.password, database: database.database });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function failure(client: pg.Client, sql: string): Promise<{ code?: string; message: string }> {
  try {
    await client.query(sql);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error(`expected ${sql} to fail`);
}

describe('least-privilege upstream logins per role', () => {
  let proxy: ConfiguredProxy;
  beforeAll(async () => {
    proxy = await start(mapped(LEAST_PRIVILEGE));
  });

  it('each account\'s sessions run as its role\'s upstream login', async () => {
    for (const [account, user] of [[APP, 'lp_app'], [SUPPORT, 'lp_support'], [ANALYST, 'lp_analyst']] as const) {
      const client = await connect(proxy, account);
      expect((await client.query('SELECT current_user AS c, session_user AS s')).rows).toEqual([{ c: user, s: user }]);
      await client.end();
    }
  });

  it('the app still writes and reads plaintext through its least-privilege login', async () => {
    const app = await connect(proxy, APP);
    await app.query("INSERT INTO customers (ssn, phone, note) VALUES ('123-45-6789', $1, 'lp')", [PHONE]);
    expect((await app.query("SELECT ssn FROM customers WHERE note = 'lp'")).rows).toEqual([{ ssn: '123-45-6789' }]);
    await app.end();
  });

  it('with pgveil\'s own rules lifted, PostgreSQL still refuses the escape hatches to a masked role', async () => {
    const analyst = await connect(proxy, ANALYST);
    for (const sql of [
      "COPY customers TO PROGRAM 'cat'",
      "COPY customers TO '/tmp/pgveil-lp.csv'",
      "SELECT pg_read_file('postgresql.conf')",
      "SELECT lo_import('/etc/hostname')",
      `SET ROLE ${database.user}`,
      `SET SESSION AUTHORIZATION ${database.user}`,
    ]) {
      const error = await failure(analyst, sql);
      expect(error.code, sql).toBe('42501');
      expect(error.message).not.toContain(PHONE);
    }
    await analyst.end();
  });

  it('another role\'s query text is hidden by PostgreSQL', async () => {
    const app = await connect(proxy, APP);
    await app.query(`SELECT count(*) FROM customers WHERE phone = '${PHONE}'`);
    const analyst = await connect(proxy, ANALYST);
    const seen = await analyst.query("SELECT usename, query FROM pg_stat_activity WHERE usename = 'lp_app'");
    expect(seen.rows.length).toBeGreaterThan(0);
    for (const row of seen.rows) expect(String(row.query)).not.toContain(PHONE);
    await analyst.end();
    await app.end();
  });
});

describe('pgveil refuses powerful logins for roles without plaintext', () => {
  const cases: [string, Record<string, UpstreamLoginConfig>, RegExp][] = [
    ['a superuser for support', { ...mapped(LEAST_PRIVILEGE), support: { user: '', password: '' } }, /support@example.com.*proxy\.upstreamRoles\.support.*is a superuser/],
    ['a member of pg_execute_server_program', mapped({ ...LEAST_PRIVILEGE, analyst: 'lp_programs' }), /proxy\.upstreamRoles\.analyst.*pg_execute_server_program/],
    ['a BYPASSRLS role', mapped({ ...LEAST_PRIVILEGE, support: 'lp_bypass' }), /bypasses row-level security/],
    ['the default login, a superuser, for unmapped roles', mapped({ app: 'lp_app' }), /proxy\.upstream\.user.*is a superuser/],
    ['a login that does not exist', mapped({ ...LEAST_PRIVILEGE, analyst: 'nobody_here' }), /"nobody_here".*does not exist/],
  ];
  for (const [label, roles, message] of cases) {
    it(label, async () => {
      const withSuperuser = Object.fromEntries(Object.entries(roles).map(([role, login]) => [role, login.user === '' ? { user: database.user, password: database.password } : login]));
      await expect(start(withSuperuser)).rejects.toThrow(message);
    });
  }

  it('allows a powerful login for a role that sees every column in plaintext', async () => {
    const proxy = await start({ ...mapped(LEAST_PRIVILEGE), app: { user: database.user, password: database.password } });
    const app = await connect(proxy, APP);
    expect((await app.query('SELECT current_user AS c')).rows).toEqual([{ c: database.user }]);
    await app.end();
  });

  it('refuses a policy reload that would leave a powerful login to a role without plaintext, keeping the previous policies', async () => {
    const proxy = await start({ ...mapped(LEAST_PRIVILEGE), app: { user: database.user, password: database.password } });
    const before = proxy.policies?.current;
    await writeFile(policiesFile, POLICIES_YAML.replace('reveal: { app: plaintext, support: mask } }\n  public.customers.ssn', 'reveal: { app: mask, support: mask } }\n  public.customers.ssn'));
    try {
      const outcome = await proxy.policies?.reload();
      expect(outcome?.ok).toBe(false);
      expect(String((outcome as { error?: unknown }).error)).toMatch(/app@example.com.*is a superuser/);
      expect(proxy.policies?.current).toBe(before);
    } finally {
      await writeFile(policiesFile, `${POLICIES_YAML}privileges:\n  analyst: [server-files, role-switch, monitor, code]\n`);
    }
  });

  it('refuses reloaded accounts whose login would be powerful', async () => {
    const proxy = await start(mapped(LEAST_PRIVILEGE));
    const intern = { ...accounts[2] as AccountConfig, email: 'intern@example.com', roles: ['intern'] };
    await expect(proxy.checkAccounts([...accounts, intern])).rejects.toThrow(/intern@example.com.*proxy\.upstream\.user.*superuser/);
    await expect(proxy.checkAccounts(accounts)).resolves.toBeUndefined();
  });
});
