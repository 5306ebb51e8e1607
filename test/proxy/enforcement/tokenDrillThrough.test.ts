/**
 * What a BI tool does with the tokens an analyst reads: a drill-through or "filter by this value"
 * puts the token shown back into a WHERE (literal, parameter, array), and result-set editing
 * (DBeaver) writes the row back as read. Tokenised a second time, the token would find no row or be
 * stored as a token of a token; kept, it could be copied into another column of its kind and scope
 * that the role sees in plaintext. pgveil refuses it (22023), saying what to do instead.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYST, APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;
let app: pg.Client;
let analyst: pg.Client;
let direct: pg.Client;
let seen: { id: number; email: string; full_name: string };

const count = async (client: pg.Client, sql: string, values?: unknown[]): Promise<number> =>
  Number((await client.query<{ n: number }>(sql, values)).rows[0]?.n);

beforeAll(async () => {
  harness = await startPolicyHarness();
  app = await harness.connect(APP);
  analyst = await harness.connect(ANALYST);
  direct = await harness.direct();
  await app.query("INSERT INTO customers (full_name, email, note) VALUES ('Dana Drill', 'dana@example.com', 'drill'), ('Eli Drill', 'eli@example.com', 'drill')");
  await app.query("INSERT INTO orders (customer_email, amount) VALUES ('dana@example.com', 7)");
  seen = (await analyst.query("SELECT id, email, full_name FROM customers WHERE note = 'drill' ORDER BY id LIMIT 1")).rows[0];
});

afterAll(async () => {
  for (const client of [app, analyst, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

/** The SQLSTATE a statement failed with (undefined: it ran). */
async function refusedWith(run: Promise<unknown>): Promise<string | undefined> {
  return run.then(() => undefined, (error: { code?: string; message?: string }) => {
    expect(error.message).not.toContain(seen.email);
    return error.code;
  });
}

describe('an analyst filtering by a token it read (drill-through)', () => {
  it('is refused, saying why, as a literal, a bound parameter, IN and = ANY (tokenised again, it would find no row)', async () => {
    for (const run of [
      () => analyst.query(`SELECT count(*)::int AS n FROM customers WHERE email = '${seen.email}'`),
      () => analyst.query(`SELECT count(*)::int AS n FROM customers WHERE full_name = '${seen.full_name}' AND note = $1`, ['drill']),
      () => analyst.query('SELECT count(*)::int AS n FROM customers WHERE email = $1', [seen.email]),
      () => analyst.query('SELECT count(*)::int AS n FROM customers WHERE email = ANY($1)', [[seen.email, 'eli@example.com']]),
      () => analyst.query(`SELECT count(*)::int AS n FROM customers WHERE email IN ('${seen.email}', 'eli@example.com')`),
    ]) {
      expect(await refusedWith(run())).toBe('22023');
    }
    await expect(analyst.query('SELECT 1')).resolves.toBeDefined();
  });

  it('joins on the column instead, and finds the row by the plaintext', async () => {
    expect(await count(analyst, 'SELECT sum(o.amount)::int AS n FROM customers c JOIN orders o ON o.customer_email = c.email WHERE c.id = $1', [seen.id])).toBe(7);
    expect(await count(analyst, "SELECT count(*)::int AS n FROM customers WHERE email = 'dana@example.com'")).toBe(1);
  });
});

describe('a row written back as read (result-set editing)', () => {
  it('is refused rather than stored as a token of a token; the stored row is unchanged and app reads the plaintext', async () => {
    const stored = (await direct.query('SELECT email, full_name FROM customers WHERE id = $1', [seen.id])).rows[0];
    // An UPDATE of columns the analyst reads as tokens is refused as such (blindUpdate.test.ts)…
    expect(await refusedWith(analyst.query("UPDATE customers SET email = $1, full_name = $2, note = 'drill' WHERE id = $3", [seen.email, seen.full_name, seen.id]))).toBe('42501');
    // …and a token given as a value where the UPDATE is allowed, as a filter, is refused as a token.
    expect(await refusedWith(analyst.query("UPDATE customers SET note = 'drill' WHERE email = $1", [seen.email]))).toBe('22023');
    expect((await direct.query('SELECT email, full_name FROM customers WHERE id = $1', [seen.id])).rows[0]).toEqual(stored);
    expect((await app.query('SELECT email, full_name FROM customers WHERE id = $1', [seen.id])).rows[0]).toEqual({ email: 'dana@example.com', full_name: 'Dana Drill' });
  });

  it('is refused when the token would be copied into another column of its kind and scope (orders.customer_email)', async () => {
    expect(await refusedWith(analyst.query('INSERT INTO orders (customer_email, amount) VALUES ($1, 1)', [seen.email]))).toBe('22023');
  });

  it('still tokenises a token of another scope (it is a value like any other)', async () => {
    const foreign = (await harness.engine.protect('email', ['frank@example.com'], { method: 'tokenise', scope: 'elsewhere' })).result[0] as string;
    await app.query("INSERT INTO customers (email, note) VALUES ($1, 'foreign')", [foreign]);
    const stored = (await direct.query("SELECT email FROM customers WHERE note = 'foreign'")).rows[0];
    expect(stored.email).not.toBe(foreign);
    expect((await app.query("SELECT email FROM customers WHERE note = 'foreign'")).rows[0]).toEqual({ email: foreign });
  });
});
