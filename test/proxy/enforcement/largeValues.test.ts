/**
 * Values past the write path's bound (proxy.maxProtectedValueBytes) are refused before any work
 * is done on them, naming the column and the setting; statements of megabytes are analysed
 * without holding the event loop, so other sessions keep their answers prompt.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

const PAUSE_LIMIT_MS = Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250);
const TOO_LONG = `Ada ${'L'.repeat(5000)}`;

let harness: PolicyHarness;
let app: pg.Client;
let idle: pg.Client;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  app = await harness.connect(APP);
  idle = await harness.connect(APP);
  direct = await harness.direct();
  await app.query("INSERT INTO customers (full_name, note) VALUES ('Warm Up', 'warm')"); // one-time engine tables
});

afterAll(async () => {
  for (const client of [app, idle, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

async function rows(): Promise<number> {
  return Number((await direct.query('SELECT count(*) AS n FROM customers')).rows[0].n);
}

/** Runs `work` while `idle` sends SELECT 1 in a loop; the slowest answer, in ms. */
async function slowestAnswerDuring(work: Promise<unknown>): Promise<number> {
  let done = false;
  const finished = work.then(() => undefined, () => undefined).finally(() => { done = true; });
  let slowest = 0;
  while (!done) {
    const began = performance.now();
    await idle.query('SELECT 1');
    slowest = Math.max(slowest, performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await finished;
  return slowest;
}

describe('the bound on a protected value', () => {
  it.each([
    ['a parameter', (c: pg.Client) => c.query('INSERT INTO customers (full_name) VALUES ($1)', [TOO_LONG])],
    ['a literal', (c: pg.Client) => c.query(`INSERT INTO customers (full_name) VALUES ('${TOO_LONG}')`)],
    ['a comparison', (c: pg.Client) => c.query('SELECT id FROM customers WHERE full_name = $1', [TOO_LONG])],
  ])('refuses %s past it with 54000 naming the column and the setting, and stores nothing', async (_name, run) => {
    const before = await rows();
    const refused = await failure(() => run(app));
    expect(refused.code).toBe('54000');
    expect(refused.message).toContain('public.customers.full_name');
    expect(refused.message).toContain('proxy.maxProtectedValueBytes');
    expect(refused.message).not.toContain('LLLL');
    expect(await rows()).toBe(before);
    expect((await app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('refuses a COPY row past it and keeps the session', async () => {
    const before = await rows();
    const refused = await failure(() => pipeline(Readable.from([`${TOO_LONG}\tcopied\n`]), app.query(copyFrom('COPY customers (full_name, note) FROM STDIN'))));
    expect(refused.code).toBe('54000');
    expect(refused.message).toContain('proxy.maxProtectedValueBytes');
    expect(await rows()).toBe(before);
    expect((await app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('protects a value just within it', async () => {
    const within = `Ada ${'L'.repeat(4000)}`;
    await app.query('INSERT INTO customers (full_name, note) VALUES ($1, $2)', [within, 'within']);
    const stored = (await direct.query("SELECT full_name FROM customers WHERE note = 'within'")).rows[0].full_name as string;
    expect(stored).not.toBe(within);
    expect((await app.query("SELECT full_name FROM customers WHERE note = 'within'")).rows[0].full_name).toBe(within);
  });
});

describe('statements of megabytes', () => {
  it('stores a 3 MiB literal of a plain column beside a protected one, other sessions answering promptly', async () => {
    const note = 'n'.repeat(3 * 1024 * 1024);
    const slowest = await slowestAnswerDuring(app.query(`INSERT INTO customers (full_name, note) VALUES ('Grace Hopper', '${note}')`));
    const stored = (await direct.query('SELECT full_name, length(note) AS n FROM customers WHERE length(note) > 1000000')).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].n).toBe(note.length);
    expect(stored[0].full_name).not.toBe('Grace Hopper');
    if (process.env.PGVEIL_PRINT_PAUSES) console.log(`slowest idle answer: ${slowest.toFixed(1)} ms`);
    expect(slowest).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('refuses a 3 MiB literal of a protected column, other sessions answering promptly', async () => {
    const before = await rows();
    const attack = app.query(`INSERT INTO customers (full_name) VALUES ('${'z'.repeat(3 * 1024 * 1024)}')`);
    const refusal = failure(() => attack);
    const slowest = await slowestAnswerDuring(attack);
    expect((await refusal).code).toBe('54000');
    expect(await rows()).toBe(before);
    if (process.env.PGVEIL_PRINT_PAUSES) console.log(`slowest idle answer: ${slowest.toFixed(1)} ms`);
    expect(slowest).toBeLessThan(PAUSE_LIMIT_MS);
  });
});
