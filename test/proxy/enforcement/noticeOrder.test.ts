/**
 * A NoticeResponse sent while the proxy holds rows of a result it rewrites (RAISE NOTICE in a
 * function the query calls) reaches the client after the rows PostgreSQL sent before it, with
 * its bytes as PostgreSQL sent them: a notice never carries plaintext.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;
let app: pg.Client;
const SSNS = ['123-45-6701', '123-45-6702', '123-45-6703', '123-45-6704'];

beforeAll(async () => {
  harness = await startPolicyHarness();
  const direct = await harness.direct();
  try {
    await direct.query(`CREATE FUNCTION note_row(n int) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN RAISE NOTICE 'row %', n; RETURN n; END $$`);
    await direct.query(`CREATE FUNCTION note_value(v text) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN RAISE NOTICE 'value %', v; RETURN 0; END $$`);
  } finally {
    await direct.end();
  }
  app = await harness.connect(APP);
  for (const [i, ssn] of SSNS.entries()) await app.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', [ssn, `notice-${i + 1}`]);
});

afterAll(async () => {
  await app?.end().catch(() => undefined);
  await harness?.stop();
});

/** The events of one query in the order the client saw them: `notice n` and `row n <ssn>`. */
async function eventsOf(text: string, queryMode: 'simple' | 'extended'): Promise<string[]> {
  const events: string[] = [];
  const onNotice = (notice: { message?: string }): void => { events.push(`notice ${notice.message?.replace('row ', '')}`); };
  app.on('notice', onNotice);
  try {
    // pg sends a text without values as a simple Query unless asked for the extended protocol
    // (an option its type declarations do not list).
    const config = { text, ...(queryMode === 'extended' ? { queryMode } : {}) } as pg.QueryConfig;
    const query = new pg.Query(config);
    query.on('row', (row: { n: number; ssn: string }) => events.push(`row ${row.n} ${row.ssn}`));
    await new Promise<void>((resolve, reject) => {
      query.on('end', () => resolve());
      query.on('error', reject);
      void app.query(query);
    });
  } finally {
    app.off('notice', onNotice);
  }
  return events;
}

describe('a notice raised between rows the proxy rewrites', () => {
  const expected = SSNS.flatMap((ssn, i) => [`notice ${i + 1}`, `row ${i + 1} ${ssn}`]);
  const sql = "SELECT note_row(row_number() OVER (ORDER BY id)::int) AS n, ssn FROM customers WHERE note LIKE 'notice-%' ORDER BY id";

  it('comes after the rows sent before it, every value revealed: extended protocol', async () => {
    expect(await eventsOf(sql, 'extended')).toEqual(expected);
  });

  it('and simple protocol', async () => {
    expect(await eventsOf(sql, 'simple')).toEqual(expected);
  });
});

describe('a notice carrying a protected value', () => {
  it('carries the stored value, never plaintext, even to a role that sees plaintext rows', async () => {
    const direct = await harness.direct();
    let stored: string;
    try {
      stored = (await direct.query("SELECT ssn FROM customers WHERE note = 'notice-1'")).rows[0].ssn as string;
    } finally {
      await direct.end();
    }
    const notices: string[] = [];
    const onNotice = (notice: { message?: string }): void => { notices.push(notice.message ?? ''); };
    app.on('notice', onNotice);
    try {
      // The row is revealed to app; the notice, raised inside PostgreSQL, holds what is stored there.
      const result = await app.query("SELECT note_value(ssn), ssn FROM customers WHERE note = 'notice-1'");
      expect(result.rows).toEqual([{ note_value: 0, ssn: SSNS[0] }]);
      expect(stored).not.toBe(SSNS[0]);
      expect(notices).toEqual([`value ${stored}`]);
    } finally {
      app.off('notice', onNotice);
    }
  });
});
