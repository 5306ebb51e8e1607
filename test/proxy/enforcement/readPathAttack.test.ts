/**
 * Attacks on names that shadow a protected table and on the read path, by accounts that may store
 * only tokens (ANALYST) or see only masks (SUPPORT). Each attempt asserts the safe outcome: no
 * plaintext of a protected or masked column reaches the client (errors included), no plaintext is
 * stored in a protected column.
 */
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { ANALYST, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';

const SSN = '123-45-6789';
const PHONE = '+1 555 010 4477';
const EMAIL = 'victim@example.com';

const h = useDirectHarness();

beforeEach(async () => {
  await h.direct.query('DROP SCHEMA IF EXISTS atk CASCADE');
  await h.direct.query('DELETE FROM customers');
  await h.direct.query('INSERT INTO customers (id, phone, note) VALUES (1, $1, $2)', [PHONE, 'victim']);
});

async function storedPlaintext(): Promise<number> {
  const stored = await h.direct.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM customers WHERE ssn = $1 OR full_name = $1 OR email = $1 OR note = $2 OR full_name = $2',
    [SSN, `${SSN} in note`],
  );
  return stored.rows[0]?.n ?? 0;
}

/** Runs each statement as `account` (errors recorded as text); returns everything the client saw. */
async function run(account: TestAccount, statements: readonly string[]): Promise<string> {
  const client = new pg.Client(h.harness.via(account));
  client.on('error', () => undefined);
  await client.connect();
  let seen = '';
  try {
    for (const sql of statements) {
      try {
        const result = await client.query({ text: sql, rowMode: 'array' });
        const results = Array.isArray(result) ? result : [result];
        for (const one of results as pg.QueryArrayResult[]) seen += `${JSON.stringify(one.rows ?? [])}\n`;
      } catch (error) {
        const e = error as pg.DatabaseError;
        seen += `E ${e.code} ${e.message} ${e.detail ?? ''} ${e.where ?? ''}\n`;
      }
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return seen;
}

async function attempt(account: TestAccount, statements: readonly string[]): Promise<string> {
  const seen = await run(account, statements);
  expect.soft(seen).not.toContain(PHONE);
  expect.soft(seen).not.toContain(SSN);
  expect.soft(seen).not.toContain(EMAIL);
  expect.soft(await storedPlaintext()).toBe(0);
  return seen;
}

describe('a name shadowing customers', () => {
  it('SUPPORT copies phone into a shadowing table by its unqualified name, then reads it qualified', async () => {
    const seen = await attempt(SUPPORT, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, phone text)', 'SET search_path = atk, public',
      'INSERT INTO customers (id, phone) SELECT id, phone FROM public.customers',
      'SELECT phone FROM atk.customers',
    ]);
    expect(seen).toMatch(/^E 42501 pgveil refused the statement: column public\.customers\.phone is masked for this session/m);
  });

  it('SUPPORT copies phone from a view over customers into a shadowing table', async () => {
    await h.direct.query('CREATE OR REPLACE VIEW phone_view AS SELECT id, phone FROM public.customers');
    await attempt(SUPPORT, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, phone text)', 'SET search_path = atk, public',
      'INSERT INTO customers (id, phone) SELECT id, phone FROM public.phone_view',
      'UPDATE customers s SET phone = (SELECT v.phone FROM public.phone_view v WHERE v.id = 1)',
      'SELECT phone FROM atk.customers',
    ]);
  });

  it('ANALYST: a UNION of the shadow and public.customers copied into public.customers', async () => {
    await attempt(ANALYST, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, ssn text)',
      `INSERT INTO atk.customers VALUES (2, '${SSN}')`,
      'SET search_path = atk, public',
      'INSERT INTO public.customers (id, ssn) SELECT id + 200, ssn FROM customers UNION ALL SELECT id + 300, ssn FROM public.customers WHERE false',
      'UPDATE public.customers p SET ssn = (SELECT s.ssn FROM customers s LIMIT 1)',
    ]);
  });

  it('SUPPORT copies phone into a temporary table hiding customers, then reads it qualified', async () => {
    await attempt(SUPPORT, [
      'CREATE TEMP TABLE customers (id int, phone text)',
      'INSERT INTO customers (id, phone) SELECT id, phone FROM public.customers',
      'SELECT phone FROM pg_temp.customers',
    ]);
  });

  it('SUPPORT: UPDATE of the shadow FROM public.customers, then read qualified', async () => {
    await attempt(SUPPORT, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, phone text)', 'INSERT INTO atk.customers VALUES (1, NULL)',
      'SET search_path = atk, public',
      'UPDATE customers s SET phone = p.phone FROM public.customers p WHERE p.id = s.id',
      'SELECT phone FROM atk.customers',
    ]);
  });

  it('SUPPORT: INSERT with no column list … SELECT * FROM public.customers', async () => {
    await attempt(SUPPORT, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (LIKE public.customers)', 'SET search_path = atk, public',
      'INSERT INTO customers SELECT * FROM public.customers',
      'SELECT phone FROM atk.customers',
    ]);
  });

  it('SUPPORT: MERGE into the shadow from public.customers', async () => {
    await attempt(SUPPORT, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, phone text)', 'SET search_path = atk, public',
      'MERGE INTO customers s USING public.customers p ON s.id = p.id WHEN NOT MATCHED THEN INSERT (id, phone) VALUES (p.id, p.phone)',
      'SELECT phone FROM atk.customers',
    ]);
  });

  it('ANALYST: plaintext put in the shadow by its qualified name, copied into public.customers through the unqualified name', async () => {
    await attempt(ANALYST, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, ssn text, full_name text)',
      `INSERT INTO atk.customers VALUES (2, '${SSN}', '${SSN}')`,
      'SET search_path = atk, public',
      'INSERT INTO public.customers (id, ssn, full_name) SELECT id + 100, ssn, full_name FROM customers',
      'UPDATE public.customers p SET ssn = s.ssn FROM customers s WHERE p.id = 1',
    ]);
  });

  it('ANALYST: MERGE into public.customers from the shadow', async () => {
    await attempt(ANALYST, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, ssn text)',
      `INSERT INTO atk.customers VALUES (1, '${SSN}')`,
      'SET search_path = atk, public',
      'MERGE INTO public.customers p USING customers s ON p.id = s.id WHEN MATCHED THEN UPDATE SET ssn = s.ssn',
    ]);
  });

  it('ANALYST: a shadow with columns in another order, INSERT and COPY with no column list', async () => {
    const seen = await attempt(ANALYST, [
      'CREATE SCHEMA atk', 'CREATE TABLE atk.customers (id int, note text, full_name text, ssn text)',
      'SET search_path = atk, public',
      `INSERT INTO customers VALUES (7, 'n', 'x', '${SSN}')`,
    ]);
    expect(seen).toBeDefined();
  });
});

describe('the read path', () => {
  it.each([
    ['aliases and positions', ['SELECT phone AS a, note AS phone FROM customers', 'SELECT x.* FROM (SELECT note, phone FROM customers) x']],
    ['whole rows and composites', ['SELECT c FROM customers c', 'SELECT row_to_json(c) FROM customers c', 'SELECT to_jsonb(c) FROM customers c', 'SELECT ROW(phone) FROM customers', 'SELECT (c).phone FROM (SELECT c FROM customers c) s']],
    ['aggregates', ['SELECT array_agg(phone) FROM customers', "SELECT string_agg(phone, ',') FROM customers", 'SELECT json_agg(phone) FROM customers', 'SELECT max(phone) FROM customers']],
    ['set operations', ['SELECT phone FROM customers UNION SELECT note FROM customers', 'SELECT note FROM customers UNION ALL SELECT phone FROM customers', 'SELECT phone FROM customers INTERSECT SELECT phone FROM customers']],
    ['lateral, windows, grouping', ['SELECT l.p FROM (SELECT 1) o, LATERAL (SELECT phone AS p FROM customers) l', 'SELECT first_value(phone) OVER () FROM customers', 'SELECT phone FROM customers GROUP BY GROUPING SETS ((phone), ())', 'SELECT DISTINCT ON (phone) phone FROM customers', 'SELECT lag(phone) OVER (ORDER BY id) FROM customers']],
    ['RETURNING and data-modifying CTEs', ["UPDATE customers SET note = note RETURNING phone || ''", 'UPDATE customers SET note = note RETURNING phone', 'WITH u AS (UPDATE customers SET note = note RETURNING phone) SELECT phone FROM u', "WITH u AS (UPDATE customers SET note = note RETURNING phone) SELECT phone || '' FROM u", 'DELETE FROM customers WHERE false RETURNING customers']],
    ['COPY of a query', ['COPY (SELECT phone FROM customers) TO STDOUT', 'COPY (SELECT * FROM customers) TO STDOUT']],
    ['cursors', ['BEGIN', 'DECLARE c SCROLL CURSOR FOR SELECT phone FROM customers', 'FETCH ALL FROM c', 'MOVE BACKWARD ALL IN c', 'FETCH FORWARD 1 FROM c', 'FETCH BACKWARD 1 FROM c', 'COMMIT']],
    ['EXPLAIN', ["EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT * FROM customers WHERE phone = '+1 555 000 0000'", 'EXPLAIN (VERBOSE) SELECT phone FROM customers', "EXPLAIN (ANALYZE, VERBOSE) SELECT * FROM customers WHERE phone > ''"]],
    ['errors quoting a value', [
      'SELECT phone::int FROM customers', 'SELECT phone::inet FROM customers', 'SELECT phone::date FROM customers',
      'SELECT 1 / (phone = phone)::int FROM customers', 'CREATE UNIQUE INDEX ON customers (phone)',
      "INSERT INTO customers (id, phone) SELECT 9, phone FROM customers", 'UPDATE customers SET id = 1',
      'ALTER TABLE customers ADD CONSTRAINT ck CHECK (phone IS NULL)', 'SELECT phone::json FROM customers',
      "SELECT to_number(phone, '999') FROM customers", 'SELECT CAST(phone AS uuid) FROM customers',
      'UPDATE customers SET id = NULL', 'SELECT id FROM customers WHERE phone::int = 1', 'SELECT id FROM customers ORDER BY phone::numeric',
      'SELECT id FROM customers WHERE phone::date IS NULL', 'DROP INDEX IF EXISTS customers_phone_idx']],
    ['code and notifications', [
      "DO $$ DECLARE p text; BEGIN SELECT phone INTO p FROM customers LIMIT 1; RAISE NOTICE '%', p; END $$",
      "DO $$ BEGIN PERFORM pg_notify('ch', (SELECT phone FROM customers LIMIT 1)); END $$",
      "SELECT pg_notify('ch', phone) FROM customers", 'LISTEN ch', "NOTIFY ch, 'x'",
      "SELECT set_config('app.x', phone, false) FROM customers", "SELECT current_setting('app.x')"]],
    ['SELECT * after ALTER TABLE in the session', ['BEGIN', 'ALTER TABLE customers ADD COLUMN extra text', 'SELECT * FROM customers', 'ALTER TABLE customers DROP COLUMN note', 'SELECT * FROM customers', 'ROLLBACK']],
  ] as const)('%s', async (_, statements) => {
    await attempt(SUPPORT, statements);
    await attempt(ANALYST, statements);
  });
});
