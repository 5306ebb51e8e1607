/**
 * A row written back as read: grid editors and ORMs (Hibernate without dynamic updates) send every
 * column of the row they loaded. A role that reads a column masked, as tokens or as NULL would
 * replace the stored value with what it was shown. pgveil refuses an UPDATE that sets a tokenised,
 * fpe or passthrough column the session does not read in plaintext (42501, naming the privilege
 * that lifts it), unless the column is set to itself; `blind-update` lets a role set new values.
 */
import { writeFile } from 'node:fs/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYST, APP, POLICIES_YAML, SUPPORT, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;
let app: pg.Client;
let support: pg.Client;
let analyst: pg.Client;
let direct: pg.Client;
let id: number;

const ROW = { full_name: 'Wren Writeback', email: 'wren@example.com', card_number: '4111111111111111', phone: '555-123-4567', note: 'wb' };

beforeAll(async () => {
  harness = await startPolicyHarness();
  app = await harness.connect(APP);
  support = await harness.connect(SUPPORT);
  analyst = await harness.connect(ANALYST);
  direct = await harness.direct();
  id = (await app.query<{ id: number }>(
    'INSERT INTO customers (full_name, email, card_number, phone, note) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [ROW.full_name, ROW.email, ROW.card_number, ROW.phone, ROW.note],
  )).rows[0]!.id;
});

afterAll(async () => {
  for (const client of [app, support, analyst, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

const stored = async () => (await direct.query('SELECT full_name, email, card_number, phone, note FROM customers WHERE id = $1', [id])).rows[0];

/** The refusal a statement met (undefined: it ran); never with a value in it. */
async function refusal(run: Promise<unknown>): Promise<{ code?: string; message: string } | undefined> {
  return run.then(() => undefined, (error: { code?: string; message: string }) => {
    for (const value of Object.values(ROW)) expect(error.message).not.toContain(value);
    return error;
  });
}

describe('an UPDATE of a column the session does not read in plaintext', () => {
  it('is refused when support writes back the row it read (masks), through parameters and literals; nothing changes', async () => {
    const before = await stored();
    const seen = (await support.query('SELECT full_name, email, phone, note FROM customers WHERE id = $1', [id])).rows[0];
    expect(seen.phone).not.toBe(ROW.phone);
    const bound = await refusal(support.query('UPDATE customers SET full_name = $1, email = $2, phone = $3, note = $4 WHERE id = $5',
      [seen.full_name, seen.email, seen.phone, 'edited', id]));
    expect(bound).toMatchObject({ code: '42501' });
    expect(bound?.message).toMatch(/column public\.customers\.(full_name|email|phone) is not read in plaintext by this session \(it sees a mask\)/);
    expect(bound?.message).toContain('blind-update');
    const literal = await refusal(support.query(`UPDATE customers SET phone = '${seen.phone}' WHERE id = ${id}`));
    expect(literal).toMatchObject({ code: '42501' });
    expect(await stored()).toEqual(before);
    // The session goes on.
    expect((await support.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('is refused as an upsert (ON CONFLICT DO UPDATE) and a MERGE, and for a redacted column set to NULL', async () => {
    const before = await stored();
    expect(await refusal(support.query(
      "INSERT INTO customers (id, phone, note) VALUES ($1, '***-***-4567', 'wb') ON CONFLICT (id) DO UPDATE SET phone = EXCLUDED.phone", [id],
    ))).toMatchObject({ code: '42501' });
    expect(await refusal(support.query(
      'MERGE INTO customers c USING (SELECT $1::int AS id, $2::text AS phone) s ON c.id = s.id WHEN MATCHED THEN UPDATE SET phone = s.phone', [id, '***-***-4567'],
    ))).toMatchObject({ code: '42501' });
    const redacted = await refusal(analyst.query('UPDATE customers SET card_number = NULL WHERE id = $1', [id]));
    expect(redacted).toMatchObject({ code: '42501' });
    expect(redacted?.message).toContain('it sees NULL');
    // Tokens (analyst reads email as stored): a new value would replace one it never saw.
    expect(await refusal(analyst.query('UPDATE customers SET email = $1 WHERE id = $2', ['new@example.com', id]))).toMatchObject({ code: '42501' });
    expect(await stored()).toEqual(before);
  });

  it('lets it update the columns it may, and set the others to themselves', async () => {
    await support.query("UPDATE customers SET note = 'noted', phone = phone, email = customers.email WHERE id = $1", [id]);
    const after = await stored();
    expect(after.note).toBe('noted');
    expect((await app.query('SELECT phone, email FROM customers WHERE id = $1', [id])).rows[0]).toEqual({ phone: ROW.phone, email: ROW.email });
  });

  it('lets app, which reads them in plaintext, update them', async () => {
    await app.query('UPDATE customers SET phone = $1, email = $2 WHERE id = $3', ['555-999-0000', 'wren2@example.com', id]);
    expect((await app.query('SELECT phone, email FROM customers WHERE id = $1', [id])).rows[0]).toEqual({ phone: '555-999-0000', email: 'wren2@example.com' });
  });

  it('is refused by every other route to the stored value: views, data-modifying CTEs, EXPLAIN ANALYZE, row and cast forms, cursors, SQL PREPARE', async () => {
    await direct.query(`
      CREATE VIEW customers_all AS SELECT * FROM customers;
      CREATE VIEW customers_renamed AS SELECT id, phone AS tel, email AS mail FROM customers;
      CREATE VIEW customers_checked AS SELECT * FROM customers_renamed WHERE id > 0 WITH CHECK OPTION;
    `);
    const before = await stored();
    for (const sql of [
      `UPDATE customers_all SET phone = 'x' WHERE id = ${id}`,
      `UPDATE customers_renamed SET tel = 'x' WHERE id = ${id}`,
      `UPDATE customers_renamed SET mail = 'x@example.com' WHERE id = ${id}`,
      `UPDATE customers_checked SET tel = 'x' WHERE id = ${id}`,
      `MERGE INTO customers_renamed t USING (SELECT ${id} AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET tel = 'x'`,
      `WITH u AS (UPDATE customers SET phone = 'x' WHERE id = ${id} RETURNING id) SELECT count(*) FROM u`,
      `EXPLAIN ANALYZE UPDATE customers SET phone = 'x' WHERE id = ${id}`,
      `UPDATE customers SET (phone, note) = ROW('x', 'y') WHERE id = ${id}`,
      `UPDATE customers SET (phone, note) = (SELECT 'x', 'y') WHERE id = ${id}`,
      `UPDATE customers SET phone = phone::varchar(3) WHERE id = ${id}`,
      `UPDATE customers SET phone = DEFAULT WHERE id = ${id}`,
      `UPDATE customers c SET phone = d.phone FROM customers d WHERE c.id = ${id} AND d.id <> c.id`,
      `INSERT INTO customers AS c (id, phone) VALUES (${id}, 'x') ON CONFLICT (id) DO UPDATE SET phone = (SELECT excluded.phone)`,
      `MERGE INTO customers t USING (SELECT ${id} AS id) s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET phone = 'x'`,
      `PREPARE overwrite AS UPDATE customers SET phone = 'x' WHERE id = ${id}`,
    ]) {
      expect(await refusal(support.query(sql)), sql).toMatchObject({ code: '42501' });
    }
    await support.query('BEGIN');
    await support.query(`DECLARE current_row CURSOR FOR SELECT id FROM customers WHERE id = ${id} FOR UPDATE`);
    await support.query('FETCH current_row');
    expect(await refusal(support.query("UPDATE customers SET phone = 'x' WHERE CURRENT OF current_row"))).toMatchObject({ code: '42501' });
    await support.query('ROLLBACK');
    expect(await refusal(support.query(`DO $$ BEGIN UPDATE customers SET phone = 'x' WHERE id = ${id}; END $$`))).toMatchObject({ code: '42501' });
    expect(await stored()).toEqual(before);
  });

  it('is allowed with the blind-update privilege, and the value is protected as for any writer', async () => {
    await writeFile(harness.policyFile, `${POLICIES_YAML}privileges:\n  support: [blind-update]\n`);
    expect((await harness.store.reload()).ok).toBe(true);
    const granted = await harness.connect(SUPPORT);
    try {
      await granted.query('UPDATE customers SET phone = $1, email = $2 WHERE id = $3', ['555-222-3333', 'wren3@example.com', id]);
      expect((await app.query('SELECT phone, email FROM customers WHERE id = $1', [id])).rows[0]).toEqual({ phone: '555-222-3333', email: 'wren3@example.com' });
      expect((await stored()).email).not.toContain('wren3');
      // Analyst holds no such privilege.
      expect(await refusal(analyst.query('UPDATE customers SET phone = $1 WHERE id = $2', ['555-444-5555', id]))).toMatchObject({ code: '42501' });
    } finally {
      await granted.end();
    }
  });
});
