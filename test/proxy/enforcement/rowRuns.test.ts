/**
 * Result rows reach the read path in runs (the DataRows one socket read brought, as one frame):
 * through a real PostgreSQL, thousands of rows of uneven sizes — so runs end at every kind of
 * point, mid-row included — with a plain column an ordinary account fills with bytes that look
 * like message headers, read in both protocols: every protected value is revealed to the role
 * that may see it and masked for the one that may not, row for row, and the audit counts each
 * revealed row once.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, AuditLog } from '../../../src/audit/index.js';
import { APP, SUPPORT, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

const ROWS = 2500;
const events: AuditEvent[] = [];
const audit: AuditLog = { record: (event) => events.push(event) };
let harness: PolicyHarness;
let app: pg.Client;
let support: pg.Client;

const ssnOf = (i: number): string => `${String(100 + (i % 800)).padStart(3, '0')}-${String(10 + (i % 89)).padStart(2, '0')}-${String(1000 + i).slice(-4)}`;
const cardOf = (i: number): string => `4${String(i).padStart(15, '0')}`;
const birthOf = (i: number): string => `${1930 + (i % 80)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
/** A plain column: text that spells a DataRow header and a length, and a size that changes from row to row. */
const noteOf = (i: number): string => `runs D\u0001\u0002\u0003\u00ff${'D'.repeat(i % 97)}`;

beforeAll(async () => {
  harness = await startPolicyHarness(undefined, undefined, { audit });
  app = await harness.connect(APP);
  support = await harness.connect(SUPPORT);
  await app.query('BEGIN');
  for (let i = 0; i < ROWS; i++) {
    await app.query('INSERT INTO customers (ssn, card_number, birth_date, note) VALUES ($1, $2, $3, $4)', [ssnOf(i), cardOf(i), birthOf(i), noteOf(i)]);
  }
  await app.query('COMMIT');
}, 120_000);

afterAll(async () => {
  await app?.end().catch(() => undefined);
  await support?.end().catch(() => undefined);
  await harness?.stop();
});

const SELECT = "SELECT ssn, card_number, to_char(birth_date, 'YYYY-MM-DD') AS iso, birth_date, note FROM customers WHERE note LIKE 'runs %' ORDER BY id";

describe('rows revealed in runs', () => {
  it.each(['simple', 'extended'] as const)('every row revealed to app and masked for support, in order (%s protocol)', async (queryMode) => {
    const config = (client: pg.Client): Promise<pg.QueryResult> =>
      client.query({ text: SELECT, ...(queryMode === 'extended' ? { queryMode } : {}) } as pg.QueryConfig);
    const before = events.filter((event) => event.event === 'proxy.reveal').reduce((sum, event) => sum + Number((event as { rows?: number }).rows ?? 0), 0);
    const revealed = (await config(app)).rows as { ssn: string; card_number: string; birth_date: Date; note: string }[];
    expect(revealed).toHaveLength(ROWS);
    revealed.forEach((row, i) => {
      if (row.ssn !== ssnOf(i) || row.card_number !== cardOf(i) || row.note !== noteOf(i)) {
        expect({ row: i, ssn: row.ssn, card: row.card_number, note: row.note }).toEqual({ row: i, ssn: ssnOf(i), card: cardOf(i), note: noteOf(i) });
      }
    });
    // The date column itself (ISO text on the wire, rewritten in place) is revealed too.
    expect(revealed.map((row) => row.birth_date.toISOString().slice(0, 10))).toEqual(revealed.map((_, i) => birthOf(i)));
    const after = events.filter((event) => event.event === 'proxy.reveal').reduce((sum, event) => sum + Number((event as { rows?: number }).rows ?? 0), 0);
    expect(after - before).toBe(ROWS);

    const masked = (await config(support)).rows as { ssn: string; card_number: string; note: string }[];
    expect(masked).toHaveLength(ROWS);
    expect(masked.every((row, i) => row.ssn === `***-**-${ssnOf(i).slice(-4)}` && row.card_number.endsWith(cardOf(i).slice(-4)) && row.note === noteOf(i))).toBe(true);
    expect(masked.some((row, i) => row.card_number === cardOf(i))).toBe(false);
  }, 60_000);
});
