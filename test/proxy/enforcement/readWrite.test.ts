/** The write and read paths through the proxy, text format, with pg: app, support, analyst, direct. */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYST, APP, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;
let app: pg.Client;
let support: pg.Client;
let analyst: pg.Client;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  app = await harness.connect(APP);
  support = await harness.connect(SUPPORT);
  analyst = await harness.connect(ANALYST);
  direct = await harness.direct();
});

afterAll(async () => {
  for (const client of [app, support, analyst, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

const ALICE = {
  full_name: 'Alice Smith', email: 'alice@example.com', ssn: '123-45-6789', card_number: '4111111111111111',
  birth_date: '1990-05-17', ip_address: '10.1.2.3', external_id: '6f1c2d3e-1111-4222-8333-123456789abc', phone: '+1 555 123 4567',
};

describe('write path with bind parameters (text)', () => {
  it('protects INSERT parameters; app reads plaintext, support masks, analyst tokens, direct only tokens', async () => {
    await app.query(
      `INSERT INTO customers (full_name, email, ssn, card_number, birth_date, ip_address, external_id, phone, note)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'first')`,
      [ALICE.full_name, ALICE.email, ALICE.ssn, ALICE.card_number, ALICE.birth_date, ALICE.ip_address, ALICE.external_id, ALICE.phone],
    );
    const select = "SELECT full_name, email, ssn, card_number, birth_date::text AS birth_date, host(ip_address) AS ip, ip_address, external_id, phone FROM customers WHERE note = 'first'";
    const plain = (await app.query('SELECT full_name, email, ssn, card_number, to_char(birth_date, \'YYYY-MM-DD\') AS b, ip_address, external_id, phone FROM customers WHERE note = $1', ['first'])).rows[0];
    expect(plain).toMatchObject({ full_name: ALICE.full_name, email: ALICE.email, ssn: ALICE.ssn, card_number: ALICE.card_number, ip_address: ALICE.ip_address, external_id: ALICE.external_id, phone: ALICE.phone });
    const stored = (await direct.query(select)).rows[0];
    expect(stored.ssn).not.toBe(ALICE.ssn);
    expect(stored.ssn).toMatch(/^\d{3}-\d{2}-\d{4}$/);
    expect(stored.email).not.toBe(ALICE.email);
    expect(stored.full_name).not.toBe(ALICE.full_name);
    expect(stored.card_number).not.toBe(ALICE.card_number);
    expect(stored.birth_date).not.toBe(ALICE.birth_date);
    expect(stored.ip).not.toBe(ALICE.ip_address);
    expect(stored.external_id).not.toBe(ALICE.external_id);
    expect(stored.phone).toBe(ALICE.phone); // passthrough: stored as is
    const masked = (await support.query('SELECT ssn, card_number, email, phone FROM customers WHERE note = $1', ['first'])).rows[0];
    expect(masked).toEqual({ ssn: '***-**-6789', card_number: '************1111', email: 'a****@example.com', phone: expect.not.stringMatching(/555 123 4567/) });
    const tokens = (await analyst.query('SELECT ssn, email, card_number, phone FROM customers WHERE note = $1', ['first'])).rows[0];
    expect(tokens.ssn).toBe(stored.ssn);
    expect(tokens.email).toBe(stored.email);
    expect(tokens.card_number).toBeNull(); // redact
    expect(tokens.phone).not.toBe(ALICE.phone); // masked for roles not listed
  });

  it('reads through aliases, joins and SELECT * (from RowDescription, not SQL text)', async () => {
    await app.query("INSERT INTO orders (customer_email, amount) VALUES ($1, 10)", [ALICE.email]);
    const joined = (await app.query('SELECT c.email AS who, o.customer_email, o.amount FROM customers c JOIN orders o ON o.customer_email = c.email WHERE c.email = $1', [ALICE.email])).rows;
    expect(joined).toEqual([{ who: ALICE.email, customer_email: ALICE.email, amount: 10 }]);
    const star = (await app.query('SELECT * FROM customers WHERE ssn = $1', [ALICE.ssn])).rows;
    expect(star).toHaveLength(1);
    expect(star[0].full_name).toBe(ALICE.full_name);
  });
});

describe('dates in the session’s DateStyle', () => {
  const asText = { getTypeParser: () => (value: string) => value };

  it('reads and writes dates in German, DMY', async () => {
    const client = await harness.connect(APP);
    await client.query("SET DateStyle = 'German, DMY'");
    const alice = await client.query({ text: 'SELECT birth_date FROM customers WHERE email = $1', values: [ALICE.email], types: asText });
    expect(alice.rows).toEqual([{ birth_date: '17.05.1990' }]);
    await client.query("INSERT INTO customers (birth_date, note) VALUES ('03.04.1991', 'german'), ($1, 'german')", ['04.03.1992']);
    await client.query("SET DateStyle = 'ISO, MDY'");
    const rows = await client.query({ text: "SELECT birth_date FROM customers WHERE note = 'german' ORDER BY id", types: asText });
    expect(rows.rows).toEqual([{ birth_date: '1991-04-03' }, { birth_date: '1992-03-04' }]);
    await client.end();
  });
});

describe('write path with literals (simple and extended queries)', () => {
  it('splices protected literals in multi-row, multi-statement simple queries', async () => {
    await app.query(`INSERT INTO customers (full_name, email, ssn, note) VALUES ('Bob Jones', 'bob@example.com', '234-56-7890', 'lit'), ('Carol King', 'carol@example.com', '345-67-8901', 'lit');
      UPDATE customers SET ssn = '456-78-9012' WHERE email = 'carol@example.com'`);
    const rows = (await app.query("SELECT full_name, ssn FROM customers WHERE note = 'lit' ORDER BY id")).rows;
    expect(rows).toEqual([{ full_name: 'Bob Jones', ssn: '234-56-7890' }, { full_name: 'Carol King', ssn: '456-78-9012' }]);
    const stored = (await direct.query("SELECT ssn, email FROM customers WHERE note = 'lit'")).rows;
    for (const row of stored) {
      expect(['234-56-7890', '345-67-8901', '456-78-9012']).not.toContain(row.ssn);
      expect(row.email).not.toMatch(/example\.com$/);
    }
  });

  it('finds rows by =, IN and = ANY on tokens', async () => {
    expect((await app.query("SELECT full_name FROM customers WHERE email = 'bob@example.com'")).rows).toEqual([{ full_name: 'Bob Jones' }]);
    expect((await app.query("SELECT count(*)::int AS n FROM customers WHERE ssn IN ('234-56-7890', '456-78-9012')")).rows).toEqual([{ n: 2 }]);
    expect((await app.query('SELECT count(*)::int AS n FROM customers WHERE email = ANY($1)', [['bob@example.com', 'carol@example.com']])).rows).toEqual([{ n: 2 }]);
    expect((await analyst.query('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', ['234-56-7890'])).rows).toEqual([{ n: 1 }]);
  });

  it('protects ON CONFLICT DO UPDATE and RETURNING', async () => {
    const returned = await app.query(
      `INSERT INTO customers (email, ssn, note) VALUES ($1, $2, 'upsert')
       ON CONFLICT (email) DO UPDATE SET ssn = $2, note = 'upserted' RETURNING email, ssn, note`,
      ['bob@example.com', '567-89-0123'],
    );
    expect(returned.rows).toEqual([{ email: 'bob@example.com', ssn: '567-89-0123', note: 'upserted' }]);
    const stored = (await direct.query("SELECT ssn FROM customers WHERE note = 'upserted'")).rows[0];
    expect(stored.ssn).not.toBe('567-89-0123');
  });
});

describe('refusals', () => {
  const refused = async (client: pg.Client, sql: string, params?: unknown[]): Promise<{ code?: string; message: string }> => {
    try {
      await client.query(sql, params);
    } catch (error) {
      return error as { code?: string; message: string };
    }
    throw new Error('not refused');
  };

  it('refuses what it cannot map, naming the column, and writes nothing', async () => {
    const before = (await direct.query('SELECT count(*)::int AS n FROM customers')).rows[0].n;
    const cases: [string, unknown[] | undefined, string][] = [
      ["INSERT INTO customers (ssn) SELECT ssn || '' FROM customers", undefined, '0A000'],
      ['INSERT INTO customers (ssn) VALUES (upper($1))', ['111-22-3333'], '0A000'],
      ["SELECT * FROM customers WHERE ssn LIKE '111%'", undefined, '0A000'],
      ["SELECT * FROM customers WHERE ssn > '111-22-3333'", undefined, '0A000'],
      ['INSERT INTO customers (ssn) VALUES ($1)', ['not an ssn'], '22P02'],
      ["INSERT INTO customers (ssn) VALUES ('not an ssn')", undefined, '22P02'],
      ['INSERT INTO customers (ssn VALUES (1) -- broken', undefined, '42601'],
    ];
    for (const [sql, params, code] of cases) {
      const error = await refused(app, sql, params);
      expect(error.code, sql).toBe(code);
      if (code !== '42601') expect(error.message, sql).toMatch(/customers/);
    }
    expect((await direct.query('SELECT count(*)::int AS n FROM customers')).rows[0].n).toBe(before);
    expect((await app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('leaves a transaction aborted like PostgreSQL: COMMIT answers ROLLBACK', async () => {
    await app.query('BEGIN');
    await app.query("INSERT INTO customers (email, note) VALUES ('dave@example.com', 'tx')");
    const error = await refused(app, 'INSERT INTO customers (ssn) VALUES ($1)', ['bad']);
    expect(error.code).toBe('22P02');
    const aborted = await refused(app, 'SELECT 1');
    expect(aborted.code).toBe('25P02');
    const commit = await app.query('COMMIT');
    expect(commit.command).toBe('ROLLBACK');
    expect((await direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'tx'")).rows[0].n).toBe(0);
  });
});
