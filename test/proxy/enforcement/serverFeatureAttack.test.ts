/**
 * Attacks through server features that carry a masked column's value somewhere the read path does
 * not mask: a column's USING expression (ALTER TABLE … TYPE … USING), and the text of errors and
 * notices the server raises while it computes over stored values. Each attempt runs as an account
 * that sees customers.phone masked (SUPPORT, ANALYST) and asserts that no plaintext phone, nor its
 * digits, reaches the client.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ANALYST, APP, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
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

  // pg_cancel_backend is volatile: given a value of phone it is refused before it runs (see below).
  it('a warning quoting a number (pg_cancel_backend of a PID that is none)', async () => {
    const sql = 'SELECT id FROM customers WHERE pg_cancel_backend(id + 155501043)';
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [sql]);
      expect(seen).toMatch(/^N .*pgveil withheld the server's message for SQLSTATE 01000/m);
      expect(seen).not.toContain('155501044');
    }
  });

  it('an error or notice a function raises with a SQLSTATE that names no value (RAISE … USING ERRCODE)', async () => {
    // STABLE, so that the masked-column guard lets the call through (a volatile one is refused before it runs).
    await h.direct.query(`
      CREATE OR REPLACE FUNCTION check_access(x text) RETURNS boolean LANGUAGE plpgsql STABLE
        AS $$ BEGIN RAISE EXCEPTION 'access denied for %', x USING ERRCODE = 'insufficient_privilege'; END $$;
      CREATE OR REPLACE FUNCTION note_state(x text) RETURNS boolean LANGUAGE plpgsql STABLE
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

/**
 * Built-ins the denylist does not name, and functions and operators the database's owner defined:
 * PostgreSQL marks them volatile (a CREATE FUNCTION is volatile unless it says otherwise), so a
 * value of phone reaching one is refused, in any clause. Stable and immutable ones keep working.
 */
describe('volatile functions and operators (pg_proc.provolatile)', () => {
  const digits = "substr(regexp_replace(phone, '\\D', '', 'g'), 1, 9)";
  const volatileRefusal = /E .*C42501.*column public\.customers\.phone is masked for this session.*does not mark immutable or stable/;

  it('setseed, read back through random(), is refused', async () => {
    // What random() answers after a seed made of the phone's digits: the attacker's lookup table.
    await h.direct.query('SELECT setseed(0.155501044)');
    const leaked = String((await h.direct.query<{ r: string }>('SELECT random()::text AS r')).rows[0]?.r).slice(0, 10);
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [`SELECT id FROM customers WHERE setseed(('0.' || ${digits})::float8) IS NOT NULL`, 'SELECT random()::text']);
      expect(seen).toMatch(volatileRefusal);
      expect(seen).toMatch(/it is passed to setseed\(\), which .*ALTER FUNCTION \.\.\. STABLE/);
      expect(seen).not.toContain(leaked);
    }
  });

  it('nextval of a sequence chosen by a digit, read back as is_called, is refused', async () => {
    const sequences = Array.from({ length: 10 }, (_, digit) => `CREATE TEMP SEQUENCE leak_${digit}`);
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [
        ...sequences, `SELECT id FROM customers WHERE nextval('leak_' || substr(${digits}, 1, 1)) > 0`,
        "SELECT 'called:' || string_agg(relname, ',') FROM pg_class c WHERE relname LIKE 'leak\\_%' AND pg_sequence_last_value(c.oid) IS NOT NULL",
      ]);
      expect(seen).toMatch(volatileRefusal);
      expect(seen).not.toContain('leak_1');
    }
  });

  it.each([
    ['a function the owner defined (volatile by default)', 'SELECT id FROM customers WHERE remember(phone)'],
    ['the same in ORDER BY', 'SELECT id FROM customers ORDER BY remember(phone)'],
    ['the same in a JOIN condition', 'SELECT a.id FROM customers a JOIN customers b ON remember(a.phone) AND a.id = b.id'],
    ['the same as an aggregate\'s argument', 'SELECT count(*) FROM customers GROUP BY id HAVING bool_and(remember(phone))'],
    ['an operator whose function is volatile', "SELECT id FROM customers WHERE phone ### 'x'"],
  ])('%s, read back from a setting, is refused', async (_, sql) => {
    await h.direct.query(`CREATE OR REPLACE FUNCTION remember(text) RETURNS boolean LANGUAGE sql
      AS $$ SELECT set_config('pgveil_test.kept', $1, false) IS NOT NULL $$`);
    await h.direct.query(`CREATE OR REPLACE FUNCTION remember_both(text, text) RETURNS boolean LANGUAGE sql
      AS $$ SELECT remember($1) $$`);
    await h.direct.query('DROP OPERATOR IF EXISTS ### (text, text)');
    await h.direct.query('CREATE OPERATOR ### (LEFTARG = text, RIGHTARG = text, FUNCTION = remember_both)');
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [sql, "SELECT current_setting('pgveil_test.kept', true)"]);
      expect(seen).toMatch(volatileRefusal);
      expect(seen).not.toContain(PHONE_DIGITS);
    }
    // The role that sees phone in plaintext may call it.
    const app = await h.harness.connect(APP);
    try {
      expect((await app.query(sql)).rowCount).toBe(1);
    } finally {
      await app.end();
    }
  });

  it.each([
    ['lower() in WHERE', "SELECT id FROM customers WHERE lower(phone) = '+1 555 010 4477'"],
    ['LIKE, ~ and ||', "SELECT id FROM customers WHERE phone LIKE '+1 555%' AND phone ~ '^\\+1' AND phone || '' <> ''"],
    ['regexp_replace and length', `SELECT id FROM customers WHERE length(${digits}) = 9`],
    ['ORDER BY and GROUP BY over stable functions', 'SELECT count(*) FROM customers GROUP BY lower(phone) ORDER BY upper(min(phone))'],
    ['a stable function the owner defined', "SELECT id FROM customers WHERE only_digits(phone) LIKE '1555%'"],
  ])('%s still works for restricted roles', async (_, sql) => {
    await h.direct.query(`CREATE OR REPLACE FUNCTION only_digits(text) RETURNS text LANGUAGE sql STABLE
      AS $$ SELECT regexp_replace($1, '\\D', '', 'g') $$`);
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [sql]);
      expect(seen).not.toMatch(/^E /m);
      expect(seen).toMatch(/^C .*SELECT 1/m);
    }
  });
});
