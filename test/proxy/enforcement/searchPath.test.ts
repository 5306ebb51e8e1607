/**
 * Unqualified names follow the session's own search_path: crm.customers has a protected column,
 * sales.customers has none. Through the proxy, an INSERT into `customers` stores tokens only
 * when the session's path selects crm — with SET, SET LOCAL, savepoints, RESET, set_config, a
 * startup option — and, where pgveil cannot know the path, errs on the protected side or refuses.
 * The database is read directly to prove what was stored.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

const SCHEMA = `
CREATE SCHEMA crm;
CREATE SCHEMA sales;
CREATE SCHEMA vault;
CREATE TABLE crm.customers (id serial PRIMARY KEY, ssn text, note text);
CREATE TABLE sales.customers (id serial PRIMARY KEY, ssn text, note text);
CREATE TABLE crm.accounts (id serial PRIMARY KEY, ssn text, note text);
CREATE TABLE vault.accounts (id serial PRIMARY KEY, ssn text, note text);
`;

const POLICIES = `
columns:
  crm.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext } }
  crm.accounts.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext } }
  vault.accounts.ssn: { kind: ssn, method: fpe, scope: vault, reveal: { app: plaintext } }
`;

const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;

let harness: PolicyHarness;
let direct: pg.Client;
const clients: pg.Client[] = [];

beforeAll(async () => {
  harness = await startPolicyHarness(SCHEMA, POLICIES);
  direct = await harness.direct();
});

afterAll(async () => {
  for (const client of [...clients, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

async function session(extra?: pg.ClientConfig): Promise<pg.Client> {
  const client = await harness.connect(APP, extra);
  clients.push(client);
  return client;
}

/** The ssn values stored for `note` in `schema`.customers, read straight from the database. */
async function storedSsn(schema: string, note: string, table = 'customers'): Promise<string[]> {
  const result = await direct.query<{ ssn: string }>(`SELECT ssn FROM ${schema}.${table} WHERE note = $1 ORDER BY id`, [note]);
  return result.rows.map((row) => row.ssn);
}

function expectTokens(values: readonly string[], plaintexts: readonly string[]): void {
  expect(values).toHaveLength(plaintexts.length);
  values.forEach((value, index) => {
    expect(value).toMatch(SSN_SHAPE);
    expect(value).not.toBe(plaintexts[index]);
  });
}

async function refusal(client: pg.Client, query: string | pg.QueryConfig, values?: unknown[]): Promise<{ code?: string; message: string }> {
  try {
    if (typeof query === 'string') await client.query(query, values);
    else await client.query(query);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error(`not refused: ${typeof query === 'string' ? query : query.text}`);
}

describe('SET search_path', () => {
  it('stores tokens in the protected schema and plaintext in the other (bind parameters and literals)', async () => {
    const client = await session();
    await client.query('SET search_path TO crm');
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['123-45-6789', 'set-crm']);
    await client.query("INSERT INTO customers (ssn, note) VALUES ('234-56-7890', 'set-crm')");
    await client.query('SET search_path TO sales, public');
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['123-45-6789', 'set-sales']);
    await client.query("INSERT INTO customers (ssn, note) VALUES ('234-56-7890', 'set-sales')");
    expectTokens(await storedSsn('crm', 'set-crm'), ['123-45-6789', '234-56-7890']);
    expect(await storedSsn('sales', 'set-sales')).toEqual(['123-45-6789', '234-56-7890']);
    expect(await storedSsn('sales', 'set-crm')).toEqual([]);
    // The app role reads plaintext back from both, by the same unqualified name.
    await client.query('SET search_path = "crm"');
    expect((await client.query("SELECT ssn FROM customers WHERE note = 'set-crm' ORDER BY id")).rows).toEqual([{ ssn: '123-45-6789' }, { ssn: '234-56-7890' }]);
    expect((await client.query('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', ['123-45-6789'])).rows).toEqual([{ n: 1 }]);
  });

  it('follows a SET earlier in the same multi-statement text', async () => {
    const client = await session();
    await client.query("SET search_path TO sales; INSERT INTO customers (ssn, note) VALUES ('345-67-8901', 'multi'); SET search_path TO crm; INSERT INTO customers (ssn, note) VALUES ('345-67-8901', 'multi')");
    expect(await storedSsn('sales', 'multi')).toEqual(['345-67-8901']);
    expectTokens(await storedSsn('crm', 'multi'), ['345-67-8901']);
  });

  it('undoes a SET inside a transaction that rolls back, or a savepoint rolled back to', async () => {
    const client = await session();
    await client.query('SET search_path TO crm');
    await client.query('BEGIN');
    await client.query('SET search_path TO sales');
    await client.query('ROLLBACK');
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['456-78-9012', 'rolled-back']);
    await client.query('BEGIN');
    await client.query('SAVEPOINT s');
    await client.query('SET search_path TO sales');
    await client.query('ROLLBACK TO SAVEPOINT s');
    await client.query("INSERT INTO customers (ssn, note) VALUES ('456-78-9012', 'rolled-back')");
    await client.query('COMMIT');
    expectTokens(await storedSsn('crm', 'rolled-back'), ['456-78-9012', '456-78-9012']);
    expect(await storedSsn('sales', 'rolled-back')).toEqual([]);
    // A SET in a transaction that failed is undone too.
    await client.query('BEGIN');
    await client.query('SET search_path TO sales');
    await refusal(client, 'SELECT 1/0');
    await client.query('COMMIT'); // answers ROLLBACK
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['456-78-9012', 'failed-tx']);
    expectTokens(await storedSsn('crm', 'failed-tx'), ['456-78-9012']);
  });

  it('ends SET LOCAL with its transaction', async () => {
    const client = await session();
    await client.query('SET search_path TO sales');
    await client.query('BEGIN');
    await client.query('SET LOCAL search_path TO crm');
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['567-89-0123', 'local']);
    await client.query('COMMIT');
    await client.query("INSERT INTO customers (ssn, note) VALUES ('567-89-0123', 'local')");
    expectTokens(await storedSsn('crm', 'local'), ['567-89-0123']);
    expect(await storedSsn('sales', 'local')).toEqual(['567-89-0123']);
    expect((await client.query('SHOW search_path')).rows).toEqual([{ search_path: 'sales' }]);
  });

  it('returns to the session’s startup path on RESET, RESET ALL and DISCARD ALL', async () => {
    const client = await session({ options: '-c search_path=sales' });
    for (const reset of ['RESET search_path', 'RESET ALL', 'DISCARD ALL', 'SET search_path TO DEFAULT']) {
      await client.query('SET search_path TO crm');
      await client.query(reset);
      await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['678-90-1234', 'reset']);
    }
    expect(await storedSsn('sales', 'reset')).toEqual(Array(4).fill('678-90-1234'));
    expect(await storedSsn('crm', 'reset')).toEqual([]);
  });

  it('reads set_config with constant arguments, session-wide or local', async () => {
    const client = await session();
    await client.query("SELECT set_config('search_path', 'crm', false)");
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['789-01-2345', 'set-config']);
    await client.query('BEGIN');
    await client.query("SELECT set_config('search_path', 'sales', true)");
    await client.query("INSERT INTO customers (ssn, note) VALUES ('789-01-2345', 'set-config')");
    await client.query('COMMIT');
    await client.query("INSERT INTO customers (ssn, note) VALUES ('789-01-2345', 'set-config')");
    expectTokens(await storedSsn('crm', 'set-config'), ['789-01-2345', '789-01-2345']);
    expect(await storedSsn('sales', 'set-config')).toEqual(['789-01-2345']);
  });
});

describe('the session’s default search_path', () => {
  it('is the database’s own default when pgveil’s catalog readings before and after the login agree', async () => {
    const database = harness.database.database;
    const admin = await session();
    const setDefault = async (path: string): Promise<void> => {
      await admin.query(`ALTER DATABASE "${database}" SET search_path = ${path}`);
      await admin.query('SELECT 1'); // after DDL through pgveil, its next statement reads the catalog again
    };
    await setDefault('crm, public');
    const onCrm = await session();
    await onCrm.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['333-44-5555', 'db-default']);
    await setDefault('sales');
    const onSales = await session();
    await onSales.query("INSERT INTO customers (ssn, note) VALUES ('333-44-5555', 'db-default')");
    // A session keeps the default it logged in with.
    await onCrm.query("INSERT INTO customers (ssn, note) VALUES ('333-44-5556', 'db-default')");
    expectTokens(await storedSsn('crm', 'db-default'), ['333-44-5555', '333-44-5556']);
    expect(await storedSsn('sales', 'db-default')).toEqual(['333-44-5555']);
    // Changed where pgveil cannot see it: a session that logs in meanwhile is not vouched for.
    await setDefault('crm');
    await direct.query(`ALTER DATABASE "${database}" SET search_path = sales`);
    const unseen = await session();
    await unseen.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['333-44-5557', 'unseen-default']);
    await direct.query(`ALTER DATABASE "${database}" RESET search_path`);
    expectTokens(await storedSsn('sales', 'unseen-default'), ['333-44-5557']); // conservative: tokens, not plaintext
  });
});

describe('a search_path pgveil cannot read', () => {
  it('falls back to the conservative rule: a name that may denote a protected table is protected', async () => {
    const client = await session();
    await client.query("SELECT set_config('search_path', (SELECT 'sales'), false)");
    expect((await client.query('SHOW search_path')).rows).toEqual([{ search_path: 'sales' }]);
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['890-12-3456', 'unknown']);
    await client.query("INSERT INTO customers (ssn, note) VALUES ('890-12-3456', 'unknown')");
    // The rows went to sales.customers (the server's path) — as tokens, never as plaintext.
    expectTokens(await storedSsn('sales', 'unknown'), ['890-12-3456', '890-12-3456']);
    // Two tables with policies behind one name cannot be told apart: refused, qualified names pass.
    const refused = await refusal(client, 'INSERT INTO accounts (ssn, note) VALUES ($1, $2)', ['890-12-3456', 'unknown']);
    expect(refused.code).toBe('0A000');
    expect(refused.message).toMatch(/"accounts" may denote/);
    await client.query('INSERT INTO vault.accounts (ssn, note) VALUES ($1, $2)', ['890-12-3456', 'unknown']);
    expectTokens(await storedSsn('vault', 'unknown', 'accounts'), ['890-12-3456']);
    // A constant SET makes the path known again.
    await client.query('SET search_path TO sales');
    await client.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', ['901-23-4567', 'known-again']);
    expect(await storedSsn('sales', 'known-again')).toEqual(['901-23-4567']);
  });

  it('treats a DO block as changing the path in an unknown way', async () => {
    const client = await session();
    await client.query('SET search_path TO crm');
    await client.query("DO $$ BEGIN PERFORM set_config('search_path', 'sales', false); END $$");
    await client.query("INSERT INTO customers (ssn, note) VALUES ('012-34-5678', 'do-block')");
    expectTokens(await storedSsn('sales', 'do-block'), ['012-34-5678']);
  });
});

describe('prepared statements across a search_path change', () => {
  it('refuses to bind a statement prepared under a path where its names meant other tables', async () => {
    const client = await session();
    await client.query('SET search_path TO sales');
    const insert = { name: 'insert-customer', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' };
    await client.query({ ...insert, values: ['111-22-3333', 'prepared'] });
    await client.query('SET search_path TO crm');
    const refused = await refusal(client, { ...insert, values: ['111-22-3333', 'prepared'] });
    expect(refused.message).toMatch(/prepared under another search_path/);
    expect(await storedSsn('sales', 'prepared')).toEqual(['111-22-3333']);
    expect(await storedSsn('crm', 'prepared')).toEqual([]);
    // Back on the path it was prepared under, it binds again.
    await client.query('SET search_path TO sales');
    await client.query({ ...insert, values: ['111-22-3333', 'prepared'] });
    expect(await storedSsn('sales', 'prepared')).toHaveLength(2);
  });

  it('refuses SQL PREPARE of a name another path would resolve to a protected table', async () => {
    const client = await session();
    await client.query('SET search_path TO sales');
    const refused = await refusal(client, "PREPARE p AS INSERT INTO customers (ssn, note) VALUES ('222-33-4444', 'sql-prepare')");
    expect(refused.message).toMatch(/another search_path/);
    await client.query("PREPARE q AS INSERT INTO sales.customers (ssn, note) VALUES ('222-33-4444', 'sql-prepare')");
  });
});
