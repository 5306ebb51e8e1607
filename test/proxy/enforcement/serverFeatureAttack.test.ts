/**
 * Attacks through server features that carry a masked column's value somewhere the read path does
 * not mask: a column's USING expression (ALTER TABLE … TYPE … USING), and the text of errors and
 * notices the server raises while it computes over stored values. Each attempt runs as an account
 * that sees customers.phone masked (SUPPORT, ANALYST) and asserts that no plaintext phone, nor its
 * digits, reaches the client.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ANALYST, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
import { attempt, ATTACK_PHONE, simple } from './support/rawAttempts.js';

/** ATTACK_PHONE's digits, as a number computed from it would show them. */
const PHONE_DIGITS = '155501044';

const h = useDirectHarness();

beforeEach(async () => {
  await h.direct.query('DELETE FROM customers');
  await h.direct.query('INSERT INTO customers (id, phone, note) VALUES (1, $1, $2)', [ATTACK_PHONE, 'victim']);
});

async function tried(account: TestAccount, statements: readonly string[]): Promise<string> {
  return attempt(h, account, async (session) => {
    let seen = '';
    for (const sql of statements) seen += await simple(session, sql);
    return seen;
  });
}

describe('ALTER TABLE … ALTER COLUMN … TYPE … USING', () => {
  it.each([
    ['the masked column', 'ALTER TABLE customers ALTER COLUMN note TYPE varchar USING phone'],
    ['an expression over it', "ALTER TABLE customers ALTER COLUMN note TYPE text USING (phone || '')"],
  ])('%s copied into an unmasked column is refused', async (_, alter) => {
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [alter, 'SELECT note FROM customers']);
      expect(seen).toMatch(/E .*C42501.*column public\.customers\.phone is masked for this session/);
      expect(seen).not.toContain(ATTACK_PHONE);
    }
    const stored = await h.direct.query('SELECT note FROM customers');
    expect(stored.rows.map((row: { note: string }) => row.note)).toEqual(['victim']);
  });
});

/** The server's own error and notice fields, from a raw session's text: what a client would print. */
describe('errors and notices the server raises over stored values', () => {
  it.each([
    ['a JSON error\'s context line', `SELECT id FROM customers WHERE ('"' || phone)::json IS NULL`],
    ['a relation name looked up from it', 'SELECT id FROM customers WHERE quote_ident(phone)::regclass IS NULL'],
    ['a sequence name', 'SELECT id FROM customers WHERE nextval(quote_ident(phone)) IS NULL'],
    ['a type name', 'SELECT id FROM customers WHERE quote_ident(phone)::regtype IS NULL'],
    ['a schema name', 'SELECT id FROM customers WHERE quote_ident(phone)::regnamespace IS NULL'],
    ['a role name', "SELECT id FROM customers WHERE has_table_privilege(phone, 'customers', 'select')"],
    ['a setting name', 'SELECT id FROM customers WHERE current_setting(phone) IS NULL'],
    ['a text search configuration', "SELECT id FROM customers WHERE to_tsvector(quote_ident(phone)::regconfig, 'x') IS NULL"],
    ['a tsquery syntax error', "SELECT id FROM customers WHERE to_tsquery('(' || phone) IS NULL"],
    ['a jsonpath syntax error', 'SELECT id FROM customers WHERE phone::jsonpath IS NULL'],
  ])('%s: the message is withheld, the SQLSTATE kept', async (_, sql) => {
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [sql]);
      expect(seen).toMatch(/^E .*pgveil withheld the server's message for SQLSTATE/m);
      expect(seen).not.toContain(PHONE_DIGITS);
    }
  });

  it('a warning quoting a number computed from it (pg_cancel_backend of a PID that is none)', async () => {
    const sql = "SELECT id FROM customers WHERE pg_cancel_backend(substr(regexp_replace(phone, '\\D', '', 'g'), 1, 9)::int)";
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [sql]);
      expect(seen).toMatch(/^N .*pgveil withheld the server's message for SQLSTATE 01000/m);
      expect(seen).not.toContain(PHONE_DIGITS);
    }
  });

  it('an error or notice a function raises with a SQLSTATE that names no value (RAISE … USING ERRCODE)', async () => {
    await h.direct.query(`
      CREATE OR REPLACE FUNCTION check_access(x text) RETURNS boolean LANGUAGE plpgsql
        AS $$ BEGIN RAISE EXCEPTION 'access denied for %', x USING ERRCODE = 'insufficient_privilege'; END $$;
      CREATE OR REPLACE FUNCTION note_state(x text) RETURNS boolean LANGUAGE plpgsql
        AS $$ BEGIN RAISE NOTICE 'state %', x USING ERRCODE = '25000'; RETURN true; END $$`);
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, ['SELECT id FROM customers WHERE check_access(phone)', 'SELECT id FROM customers WHERE note_state(phone)']);
      expect(seen).toMatch(/^E .*C42501.*pgveil withheld the server's message for SQLSTATE 42501/m);
      expect(seen).toMatch(/^N .*pgveil withheld the server's message for SQLSTATE 25000/m);
      expect(seen).not.toContain(PHONE_DIGITS);
    }
  });

  it('errors about the client\'s own text or its names keep their message', async () => {
    const seen = await tried(SUPPORT, [
      'SELECT nosuch FROM customers', 'SELECT * FROM nosuch_table', "SELECT 'x'::regclass", 'FETCH ALL FROM nosuch_cursor',
      'BEGIN', 'SELECT 1 / 0', 'SELECT 1', 'ROLLBACK',
    ]);
    expect(seen).toContain('cursor "nosuch_cursor" does not exist');
    expect(seen).toContain('current transaction is aborted');
    expect(seen).toContain('column "nosuch" does not exist');
    expect(seen).toContain('relation "nosuch_table" does not exist');
    expect(seen).toContain('relation "x" does not exist');
  });
});

/** Built-ins called in a WHERE clause that store their argument where a later statement reads it back. */
describe('functions that store a value out of sight', () => {
  const digits = "substr(regexp_replace(phone, '\\D', '', 'g'), 1, 9)";
  it.each([
    ['lowrite into a large object, read back with lo_get', [
      'BEGIN', 'SELECT lo_create(4242)',
      "SELECT id FROM customers WHERE lowrite(lo_open(4242, 131072), convert_to(phone, 'UTF8')) > 0",
      "SELECT convert_from(lo_get(4242), 'UTF8')", 'ROLLBACK']],
    ['setval of a sequence, read back as its last value', [
      'CREATE TEMP SEQUENCE leak_seq', `SELECT id FROM customers WHERE setval('leak_seq', ${digits}::bigint) > 0`,
      'SELECT last_value FROM leak_seq']],
    ['an advisory lock, read back from pg_locks', [
      `SELECT id FROM customers WHERE pg_advisory_lock(${digits}::bigint) IS NULL`,
      `SELECT id FROM customers WHERE pg_try_advisory_xact_lock(${digits}::int, 1)`,
      "SELECT objid, classid FROM pg_locks WHERE locktype = 'advisory'"]],
    ['a large object created with an OID computed from it', [
      'BEGIN', `SELECT id FROM customers WHERE lo_create(${digits}::oid) > 0`, 'SELECT oid FROM pg_largeobject_metadata', 'ROLLBACK']],
  ])('%s is refused', async (_, statements) => {
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, statements);
      expect(seen).toMatch(/E .*C42501.*column public\.customers\.phone is masked for this session/);
      expect(seen).not.toContain(PHONE_DIGITS);
    }
  });
});
