/**
 * The demo's table, column policies and roles (app: plaintext, support: masks, analyst: tokens)
 * behind one proxy and one PostgreSQL, for the tests that drive it with other clients. Rows come
 * from the demo's generator; each client file writes its own slice of them.
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { DEMO_POLICIES_FILE } from '../../../src/cli/demo/demoConfig.js';
import { generateDemoRows, type DemoCustomer } from '../../../src/cli/demo/demoRows.js';
import { CUSTOMERS_TABLE_SQL, DEMO_UPSTREAM_ROLES, demoUpstreamRolesSql } from '../../../src/cli/demo/demoSchema.js';
import {
  ANALYST, APP, startPolicyHarness, SUPPORT, type PolicyHarness, type PolicyHarnessOptions, type TestAccount,
} from '../../proxy/enforcement/support/policyHarness.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';

export { ANALYST, APP, SUPPORT, type DemoCustomer, type PolicyHarness, type TestAccount };

/** The columns of public.customers a client writes, in the demo's order. */
export const CUSTOMER_COLUMNS = [
  'full_name', 'email', 'ssn', 'phone', 'card_number', 'birth_date', 'city', 'ip_address', 'external_id',
] as const satisfies readonly (keyof DemoCustomer)[];

/** Protected columns whose stored value must never equal the plaintext (phone and city are passthrough). */
export const STORED_AS_TOKENS = ['full_name', 'email', 'ssn', 'card_number', 'birth_date', 'ip_address', 'external_id'] as const;

export type CustomerRow = Record<(typeof CUSTOMER_COLUMNS)[number], string | null>;

/** The password of the demo's upstream roles on test servers. */
const UPSTREAM_PASSWORD = 'pgveil-least-privilege';

/**
 * The demo's table and policy behind the proxy, each pgveil role logging in upstream as the demo's
 * least-privilege role (pgveil_app writes the table, pgveil_support and pgveil_analyst only read it),
 * as the demo does, so PostgreSQL's privileges back pgveil's rules up.
 */
export async function startDemoHarness(options: PolicyHarnessOptions = {}): Promise<PolicyHarness> {
  const upstreamLogins = new Map(Object.entries(DEMO_UPSTREAM_ROLES).map(([role, user]) => [role, { user, password: UPSTREAM_PASSWORD }]));
  const startDatabase = options.startDatabase ?? startTestPostgres;
  const withDemoRoles = async (): Promise<TestPostgres> => {
    const database = await startDatabase();
    await createTableAndRoles(database);
    return database;
  };
  return startPolicyHarness(CUSTOMERS_TABLE_SQL, await readFile(DEMO_POLICIES_FILE, 'utf8'), { upstreamLogins, ...options, startDatabase: withDemoRoles });
}

/**
 * The table and the demo's roles with their grants. Roles belong to the whole server: test files
 * sharing one (PGVEIL_TEST_DATABASE_URL) may create or alter them at once, so a conflict is retried.
 */
async function createTableAndRoles(database: TestPostgres): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(CUSTOMERS_TABLE_SQL);
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(demoUpstreamRolesSql(UPSTREAM_PASSWORD));
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await client.end();
  }
}

/** `count` demo customers from `offset`: each client file takes a slice of its own. */
export function demoCustomers(offset: number, count: number): DemoCustomer[] {
  return generateDemoRows().slice(offset, offset + count);
}

/**
 * Bare columns (a masked column may only be selected bare); pg reads each in PostgreSQL's text form,
 * the form every client's output is compared in.
 */
export const SELECT_AS_TEXT = `SELECT ${CUSTOMER_COLUMNS.join(', ')} FROM public.customers`;

/** pg keeps every value as PostgreSQL's text, so dates and addresses compare as strings. */
const AS_TEXT = { getTypeParser: () => (value: string) => value };

/** Normalises a value a client printed: inet of one host prints without /32 in every client. */
export function normalised(row: Record<string, unknown>): CustomerRow {
  const out = {} as CustomerRow;
  for (const column of CUSTOMER_COLUMNS) {
    const value = row[column];
    out[column] = value === null || value === undefined ? null : String(value).replace(/\/32$/, '');
  }
  return out;
}

/**
 * What `account` reads of the rows `ids`, in id order, read with pg through the proxy (the
 * reference reader), or straight from PostgreSQL when `account` is 'direct'.
 */
export async function rowsAs(harness: PolicyHarness, account: TestAccount | 'direct', ids: readonly number[]): Promise<CustomerRow[]> {
  const client = account === 'direct' ? await harness.direct() : await harness.connect(account);
  try {
    const result = await client.query({ text: `${SELECT_AS_TEXT} WHERE id = ANY($1::bigint[]) ORDER BY id`, values: [ids], types: AS_TEXT });
    return result.rows.map((row: Record<string, unknown>) => normalised(row));
  } finally {
    await client.end();
  }
}

/** Ids of the stored rows whose app-visible e-mail is one of `emails` (read as app, so by plaintext). */
export async function idsOf(harness: PolicyHarness, emails: readonly string[]): Promise<number[]> {
  const client = await harness.connect(APP);
  try {
    const result = await client.query<{ id: string }>('SELECT id FROM public.customers WHERE email = ANY($1::text[]) ORDER BY id', [emails]);
    return result.rows.map((row) => Number(row.id));
  } finally {
    await client.end();
  }
}

/** The demo rows as PostgreSQL prints them (what app must read back). */
export function asText(customer: DemoCustomer): CustomerRow {
  return normalised({ ...customer });
}

/** Each role's view and the stored form of the rows a client wrote, by id. */
export async function policyViews(harness: PolicyHarness, written: readonly DemoCustomer[]): Promise<{ app: CustomerRow[]; support: CustomerRow[]; analyst: CustomerRow[]; stored: CustomerRow[]; ids: number[] }> {
  const ids = await idsOf(harness, written.map((c) => c.email));
  const [app, support, analyst, stored] = await Promise.all([
    rowsAs(harness, APP, ids), rowsAs(harness, SUPPORT, ids), rowsAs(harness, ANALYST, ids), rowsAs(harness, 'direct', ids),
  ]);
  return { app, support, analyst, stored, ids };
}

export type Expect = typeof import('vitest').expect;

/**
 * Asserts the demo policy on rows a client wrote, with the reference reader: app reads them back as
 * written, support reads masks (never the plaintext of a masked column), analyst reads the stored
 * tokens with city redacted, and PostgreSQL holds no plaintext of a tokenised or fpe column.
 */
export async function expectDemoPolicy(expect: Expect, harness: PolicyHarness, written: readonly DemoCustomer[]): Promise<{ support: CustomerRow[]; analyst: CustomerRow[]; stored: CustomerRow[]; ids: number[] }> {
  const views = await policyViews(harness, written);
  expect(views.ids).toHaveLength(written.length);
  const byEmail = new Map(written.map((c) => [c.email, asText(c)]));
  expect(views.app).toEqual(views.app.map((row) => byEmail.get(row.email ?? '')));
  for (const [index, plain] of views.app.entries()) {
    const stored = views.stored[index]!;
    const support = views.support[index]!;
    const analyst = views.analyst[index]!;
    for (const column of STORED_AS_TOKENS) {
      expect(stored[column], column).not.toBe(plain[column]);
      expect(support[column], column).not.toBe(plain[column]);
      expect(analyst[column], column).toBe(stored[column]);
    }
    expect(stored.phone).toBe(plain.phone);
    expect(stored.city).toBe(plain.city);
    expect(support.city).toBe(plain.city);
    expect(support.phone).not.toBe(plain.phone);
    expect(support.ssn).toBe(`***-**-${plain.ssn!.slice(-4)}`);
    expect(support.card_number).toMatch(/^[* -]+\d{4}$/);
    expect(support.card_number!.slice(-4)).toBe(plain.card_number!.slice(-4));
    expect(analyst.city).toBeNull();
    expect(analyst.phone).not.toBe(plain.phone);
  }
  return views;
}

/** libpq environment variables for the proxy as `account` (or the database directly), for psql and pg_dump. */
export function libpqEnv(harness: PolicyHarness, account: TestAccount | 'direct'): Record<string, string> {
  if (account === 'direct') {
    const { host, port, user, password, database } = harness.database;
    return { PGHOST: host, PGPORT: String(port), PGUSER: user, PGPASSWORD: password, PGDATABASE: database };
  }
  return {
    PGHOST: '127.0.0.1', PGPORT: String(harness.proxy.port), PGUSER: account.email, PGPASSWORD: account.password,
    PGDATABASE: harness.database.database, PGSSLMODE: 'disable',
  };
}

/**
 * What the client programs (support/*.py, PgjdbcClient.java) read to reach the proxy as each role:
 * PROXY_HOST, PROXY_PORT, DATABASE and <ROLE>_USER / <ROLE>_PASSWORD.
 */
export function clientProgramEnv(harness: PolicyHarness): Record<string, string> {
  return {
    PROXY_HOST: '127.0.0.1', PROXY_PORT: String(harness.proxy.port), DATABASE: harness.database.database,
    APP_USER: APP.email, APP_PASSWORD: APP.password, SUPPORT_USER: SUPPORT.email, SUPPORT_PASSWORD: SUPPORT.password,
    ANALYST_USER: ANALYST.email, ANALYST_PASSWORD: ANALYST.password,
  };
}

/** A libpq connection string (key=value) for the proxy as `account`. */
export function libpqDsn(harness: PolicyHarness, account: TestAccount): string {
  const env = libpqEnv(harness, account);
  const quote = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return [
    `host=${env.PGHOST}`, `port=${env.PGPORT}`, `user=${quote(env.PGUSER!)}`, `password=${quote(env.PGPASSWORD!)}`,
    `dbname=${quote(env.PGDATABASE!)}`, 'sslmode=disable',
  ].join(' ');
}

/** Role → rows a client program printed, normalised. */
export type ClientReads = Record<'app' | 'support' | 'analyst', readonly Record<string, unknown>[]>;

/** Asserts a client read, for each role, what the reference reader (pg, text) reads of the same rows. */
export async function expectReadsAsReference(expect: Expect, harness: PolicyHarness, ids: readonly number[], reads: ClientReads, label: string): Promise<void> {
  const accounts = { app: APP, support: SUPPORT, analyst: ANALYST } as const;
  for (const role of ['app', 'support', 'analyst'] as const) {
    const reference = await rowsAs(harness, accounts[role], ids);
    expect(reads[role].map((row) => normalised(row)), `${label}: ${role}`).toEqual(reference);
  }
}
