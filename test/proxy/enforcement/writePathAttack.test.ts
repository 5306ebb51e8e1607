/**
 * Write-path and in-database-object attacks through the proxy (upstream login: a superuser, so
 * nothing but pgveil stands in the way). Code pgveil does not analyse (DO, function bodies) is
 * refused when it names a table with protected columns — however the name is spelled once the
 * server decodes its escapes; and DDL that rewrites a column may not copy a masked
 * plaintext-at-rest column into one read unmasked.
 */
import { describe, expect, it } from 'vitest';
import { APP, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
import { ATTACK_PHONE, ATTACK_SSN, storedPlaintextSsn } from './support/rawAttempts.js';

const h = useDirectHarness(`
  INSERT INTO customers (id, phone, note) VALUES (100000, '${ATTACK_PHONE}', 'plain note');
  CREATE TABLE plain_notes (id int, note text);
`);

interface Outcome {
  readonly code?: string;
  readonly text: string;
}

async function run(account: TestAccount, sql: string): Promise<Outcome> {
  const client = await h.harness.connect(account);
  try {
    const result = await client.query(sql);
    return { text: JSON.stringify(Array.isArray(result) ? result.map((r) => r.rows) : result.rows) };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { code: e.code, text: e.message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('code naming a protected table through escapes the server decodes', () => {
  it.each([
    ['a DO block, U&"…" name', `DO $$ BEGIN INSERT INTO U&"\\0063ustomers" (ssn) VALUES ('${ATTACK_SSN}'); END $$`],
    ['a DO block, U&"…" name with UESCAPE', `DO $$ BEGIN INSERT INTO U&"!0063ustomers" UESCAPE '!' (ssn) VALUES ('${ATTACK_SSN}'); END $$`],
    ['a DO block, UESCAPE naming its character past a nested comment', `DO $$ BEGIN INSERT INTO U&"#0063ustomers" UESCAPE /* /* */ '!' */ '#' (ssn) VALUES ('${ATTACK_SSN}'); END $$`],
    ['a DO block, UESCAPE naming its character in a string continued on the next line', `DO $$ BEGIN INSERT INTO U&"#0063ustomers" UESCAPE ''\n'#' (ssn) VALUES ('${ATTACK_SSN}'); END $$`],
    ['a DO block written as an E\'\' string', `DO E'BEGIN INSERT INTO cust\\x6fmers (ssn) VALUES (''${ATTACK_SSN}''); END'`],
    ['a DO block creating a function whose E\'\' body names it', `DO $$ BEGIN CREATE FUNCTION nested_insert(x text) RETURNS void LANGUAGE sql AS E'INSERT INTO cust\\x6fmers (ssn) VALUES (x)'; END $$`],
  ])('%s is refused and stores nothing', async (_name, sql) => {
    const outcome = await run(APP, sql);
    expect(outcome.code).toBe('0A000');
    expect(outcome.text).not.toContain(ATTACK_SSN);
    expect(await run(APP, `SELECT nested_insert('${ATTACK_SSN}')`)).toMatchObject({ code: '42883' });
    expect(await storedPlaintextSsn(h)).toBe(0);
  });

  it.each([
    ['an E\'\' body', 'escaped_e', `CREATE FUNCTION escaped_e(x text) RETURNS void LANGUAGE sql AS E'INSERT INTO cust\\x6fmers (ssn) VALUES (x)'`],
    ['a U&\'\' body', 'escaped_u', `CREATE FUNCTION escaped_u(x text) RETURNS void LANGUAGE sql AS U&'INSERT INTO cust\\006Fmers (ssn) VALUES (x)'`],
    ['a BEGIN ATOMIC body with a U&"…" name', 'escaped_atomic', 'CREATE FUNCTION escaped_atomic(x text) RETURNS void LANGUAGE sql BEGIN ATOMIC INSERT INTO U&"\\0063ustomers" (ssn) VALUES (x); END'],
  ])('a function with %s is refused: calling it cannot store plaintext', async (_name, fn, sql) => {
    expect((await run(APP, sql)).code).toBe('0A000');
    expect((await run(APP, `SELECT ${fn}('${ATTACK_SSN}')`)).code).toBe('42883');
    expect(await storedPlaintextSsn(h)).toBe(0);
  });

  it('a function reading a masked column through an escaped name is refused: support cannot call it', async () => {
    expect((await run(APP, "CREATE FUNCTION read_phone() RETURNS text LANGUAGE sql AS E'SELECT phone FROM cust\\x6fmers WHERE id = 100000'")).code).toBe('0A000');
    const read = await run(SUPPORT, 'SELECT read_phone() AS p');
    expect(read.code).toBe('42883');
    expect(read.text).not.toContain(ATTACK_PHONE);
  });

  it('code with escapes that name no protected table still runs', async () => {
    expect(await run(APP, "DO E'BEGIN RAISE NOTICE ''%'', E''a\\\\tb''; END'")).toEqual({ text: '[]' });
    expect((await run(APP, "CREATE FUNCTION escaped_plain() RETURNS text LANGUAGE sql AS U&'SELECT ''\\0041'''")).code).toBeUndefined();
    expect(await run(APP, 'SELECT escaped_plain() AS a')).toEqual({ text: '[{"a":"A"}]' });
  });
});

describe('ALTER COLUMN … TYPE … USING a masked plaintext-at-rest column', () => {
  it.each([
    ['into another column', 'ALTER TABLE customers ALTER COLUMN note TYPE text USING phone'],
    ['through an expression', "ALTER TABLE customers ALTER COLUMN note TYPE varchar USING phone || ''"],
    ['qualified, among other commands', 'ALTER TABLE public.customers ADD COLUMN extra int, ALTER COLUMN note TYPE text USING customers.phone'],
  ])('%s is refused for a role that sees it masked', async (_name, sql) => {
    const outcome = await run(SUPPORT, sql);
    expect(outcome.code).toBe('42501');
    expect(outcome.text).toContain('public.customers.phone');
    const stored = await h.direct.query<{ note: string | null }>('SELECT note FROM customers WHERE id = 100000');
    expect(stored.rows).toEqual([{ note: 'plain note' }]);
    expect((await run(SUPPORT, 'SELECT note FROM customers')).text).not.toContain(ATTACK_PHONE);
  });

  it('still runs for a role that sees it in plaintext, and when it uses no masked column', async () => {
    expect((await run(SUPPORT, 'ALTER TABLE plain_notes ALTER COLUMN note TYPE varchar USING note')).code).toBeUndefined();
    expect((await run(SUPPORT, 'ALTER TABLE customers ALTER COLUMN note TYPE varchar USING note')).code).toBeUndefined();
    expect((await run(APP, 'ALTER TABLE customers ALTER COLUMN note TYPE text USING phone')).code).toBeUndefined();
  });
});

describe('SQL run as text by the text-search built-ins', () => {
  const rewrite = (from: string): string =>
    `ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, quote_literal(phone)::tsquery FROM ${from} WHERE id = 100000')`;

  it.each([
    ['ts_rewrite', `SELECT ${rewrite('customers')}::text AS r`],
    ['ts_stat', "SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', phone) FROM customers')"],
  ])('%s needs the code privilege (42501), as query_to_xml does', async (_name, sql) => {
    const outcome = await run(APP, sql);
    expect(outcome.code).toBe('42501');
    expect(outcome.text).toContain('rule "code"');
  });

  it('a function running its SQL through ts_rewrite, the table name split, is refused: support cannot call it', async () => {
    const create = `CREATE FUNCTION rewrite_phone() RETURNS text LANGUAGE sql AS $f$ SELECT ${rewrite("cust' || 'omers")}::text $f$`;
    expect((await run(APP, create)).code).toBe('42501');
    const read = await run(SUPPORT, 'SELECT rewrite_phone() AS p');
    expect(read.code).toBe('42883');
    expect(read.text).not.toContain(ATTACK_PHONE);
  });
});

describe('programs the server runs', () => {
  it('COPY … TO PROGRAM needs the code privilege (42501): a program can connect back and store plaintext', async () => {
    // The test server trusts this login from 127.0.0.1 (test/support/postgres.ts), as many servers trust local logins.
    await h.direct.query("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pgveil_trust') THEN CREATE ROLE pgveil_trust LOGIN; END IF; END $$");
    await h.direct.query('GRANT ALL ON customers TO pgveil_trust; GRANT USAGE ON SEQUENCE customers_id_seq TO pgveil_trust');
    const where = await h.direct.query<{ port: string; db: string }>("SELECT current_setting('port') AS port, current_database() AS db");
    const { port, db } = where.rows[0] as { port: string; db: string };
    const insert = `INSERT INTO customers (ssn) VALUES ('${ATTACK_SSN}')`;
    const program = `cat >/dev/null; psql -h 127.0.0.1 -p ${port} -U pgveil_trust -d ${db} -c "${insert}"`.replace(/'/g, "''");
    const outcome = await run(APP, `COPY (SELECT 1) TO PROGRAM '${program}'`);
    expect(outcome.code).toBe('42501');
    expect(outcome.text).toContain('rule "code"');
    expect(await storedPlaintextSsn(h)).toBe(0);
  });
});
