/**
 * One PostgreSQL, one proxy with column policies, three accounts (app: plaintext, support: masks,
 * analyst: tokens) and a direct connection, for the policy tests. The schema is the customers
 * table of the issue plus an orders table for joins on tokens.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import pino from 'pino';
import type { AuditLog } from '../../../../src/audit/index.js';
import { createAccountAuthenticator } from '../../../../src/auth/authService.js';
import { generateApiKey, hashApiKey } from '../../../../src/auth/apiKey.js';
import { hashPassword } from '../../../../src/auth/passwordHash.js';
import { createEngine } from '../../../../src/engine/engine.js';
import type { Engine } from '../../../../src/engine/engineTypes.js';
import { Keyring } from '../../../../src/keys/keyring.js';
import { openPolicyStore, type PolicyStore } from '../../../../src/policy/index.js';
import { startProxy, type RunningProxy, type UpstreamLogin } from '../../../../src/proxy/index.js';
import { createPolicyHooks, type PolicyHooks } from '../../../../src/proxy/enforcement/index.js';
import { upstreamCatalogLoader, type CatalogLoader } from '../../../../src/proxy/enforcement/catalog/upstreamCatalogReader.js';
import { startTestPostgres, type TestPostgres } from '../../../support/postgres.js';

export interface TestAccount {
  readonly email: string;
  readonly password: string;
  readonly roles: string[];
}

export const APP: TestAccount = { email: 'app@example.com', password: 'app-password', roles: ['app'] };
export const SUPPORT: TestAccount = { email: 'support@example.com', password: 'support-password', roles: ['support'] };
export const ANALYST: TestAccount = { email: 'analyst@example.com', password: 'analyst-password', roles: ['analyst'] };

export const SCHEMA_SQL = `
CREATE TABLE customers (
  id serial PRIMARY KEY,
  full_name text,
  email text UNIQUE,
  ssn text,
  card_number text,
  birth_date date,
  ip_address inet,
  external_id uuid,
  phone text,
  note text
);
CREATE TABLE orders (id serial PRIMARY KEY, customer_email text, amount int);
`;

export const POLICIES_YAML = `
columns:
  public.customers.full_name: { kind: name, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.email: { kind: email, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { app: plaintext, support: mask, analyst: redact } }
  public.customers.birth_date: { kind: date, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.ip_address: { kind: ipv4, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.external_id: { kind: uuid, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.phone: { kind: phone, method: passthrough, reveal: { app: plaintext, "*": mask } }
  public.orders.customer_email: { kind: email, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }
`;

export interface PolicyHarness {
  readonly database: TestPostgres;
  readonly proxy: RunningProxy;
  readonly engine: Engine;
  readonly hooks: PolicyHooks;
  readonly store: PolicyStore;
  /** The policy file the store reads (write it, then `store.reload()`). */
  readonly policyFile: string;
  /** pg settings for the proxy as `account`. */
  via(account: TestAccount, extra?: pg.ClientConfig): pg.ClientConfig;
  connect(account: TestAccount, extra?: pg.ClientConfig): Promise<pg.Client>;
  direct(): Promise<pg.Client>;
  stop(): Promise<void>;
}

async function connected(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Extra settings: an audit log for the hooks and proxy, and a server to use instead of the usual test PostgreSQL. */
export interface PolicyHarnessOptions {
  audit?: AuditLog;
  startDatabase?: () => Promise<TestPostgres>;
  /** pgveil role → the upstream login its sessions use (proxy.upstreamRoles); the database's superuser otherwise. */
  upstreamLogins?: ReadonlyMap<string, UpstreamLogin>;
  /** Wraps the hooks' catalog loader (to count or slow its readings). */
  wrapCatalogLoader?: (loader: CatalogLoader) => CatalogLoader;
}

export async function startPolicyHarness(schemaSql = SCHEMA_SQL, policiesYaml = POLICIES_YAML, options: PolicyHarnessOptions = {}): Promise<PolicyHarness> {
  const { startDatabase = startTestPostgres, upstreamLogins, wrapCatalogLoader, ...extra } = options;
  const database = await startDatabase();
  const setup = new pg.Client({ connectionString: database.url });
  await setup.connect();
  await setup.query(schemaSql);
  await setup.end();
  const folder = await mkdtemp(path.join(tmpdir(), 'pgveil-policy-test-'));
  const policyFile = path.join(folder, 'policies.yaml');
  await writeFile(policyFile, policiesYaml);
  const store = await openPolicyStore({ file: policyFile, watchFile: false, reloadOnSighup: false });
  const engine = createEngine({ masterKey: randomBytes(32) });
  const logger = pino({ level: process.env.PGVEIL_TEST_LOG ?? 'silent' });
  const upstream = {
    host: database.host, port: database.port, user: database.user, password: database.password,
    database: database.database, sslmode: 'disable' as const,
  };
  const catalogLoader = wrapCatalogLoader?.(upstreamCatalogLoader(upstream));
  const hooks = await createPolicyHooks({ policies: store, engine, upstream, logger, ...extra, ...(catalogLoader === undefined ? {} : { catalogLoader }) });
  const accounts = await Promise.all([APP, SUPPORT, ANALYST].map(async (account) => ({
    email: account.email,
    passwordHash: await hashPassword(account.password, 4),
    apiKeyHash: hashApiKey(generateApiKey()),
    roles: account.roles,
    enabled: true,
  })));
  const authenticator = createAccountAuthenticator({
    accounts,
    keyring: new Keyring([{ version: 1, key: Buffer.alloc(32, 7) }]),
    loginRateLimit: { maxFailuresPerAccount: 1_000, maxFailuresPerClient: 1_000, windowSeconds: 60 },
  });
  const proxy = await startProxy({
    host: '127.0.0.1', port: 0, tls: { mode: 'disable' }, allowCleartextFromLoopback: true,
    maxClientConnections: 50, idleTimeoutSeconds: 0, upstream, databases: {}, authenticator, logger, upstreamLogins, ...extra,
    hooks: hooks.factory,
  });
  const via = (account: TestAccount, extra: pg.ClientConfig = {}): pg.ClientConfig => ({
    host: '127.0.0.1', port: proxy.port, user: account.email, password: account.password, database: database.database, ...extra,
  });
  return {
    database, proxy, engine, hooks, store, policyFile, via,
    connect: (account, extra) => connected(via(account, extra)),
    direct: () => connected({ connectionString: database.url }),
    stop: async () => {
      await proxy.close();
      hooks.close();
      store.close();
      await database.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** A test file's harness with the app's session and a direct connection: started before its tests, stopped after. */
export interface AppHarness {
  readonly harness: PolicyHarness;
  readonly app: pg.Client;
  readonly direct: pg.Client;
}

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function useAppHarness(): AppHarness {
  const shared = {} as { harness: PolicyHarness; app: pg.Client; direct: pg.Client };
  beforeAll(async () => {
    shared.harness = await startPolicyHarness();
    shared.app = await shared.harness.connect(APP);
    shared.direct = await shared.harness.direct();
  });
  afterAll(async () => {
    await shared.app?.end().catch(() => undefined);
    await shared.direct?.end().catch(() => undefined);
    await shared.harness?.stop();
  });
  return shared;
}

/** A test file's harness and a direct connection, `setupSql` run on it first: started before its tests, stopped after. */
export interface DirectHarness {
  readonly harness: PolicyHarness;
  readonly direct: pg.Client;
}

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function useDirectHarness(setupSql?: string): DirectHarness {
  const shared = {} as { harness: PolicyHarness; direct: pg.Client };
  beforeAll(async () => {
    shared.harness = await startPolicyHarness();
    shared.direct = await shared.harness.direct();
    if (setupSql !== undefined) await shared.direct.query(setupSql);
  });
  afterAll(async () => {
    await shared.direct?.end().catch(() => undefined);
    await shared.harness?.stop();
  });
  return shared;
}
