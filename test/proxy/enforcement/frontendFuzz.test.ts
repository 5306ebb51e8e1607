/**
 * Random sequences of frontend messages — named and unnamed statements and portals, duplicate
 * names, failing and refused Parses, Close, Flush, Sync, SQL PREPARE / EXECUTE / DEALLOCATE,
 * transactions — sent as one raw client, pipelined. Whatever the order and the errors, no
 * plaintext of the protected column reaches the database and the session stays usable.
 * `PGVEIL_FUZZ_RUNS` and `PGVEIL_FUZZ_SEED` replay or widen a run.
 */
import fc from 'fast-check';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRawSession, type BackendMessage } from '../support/rawProtocol.js';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

const PLAINTEXTS = ['123-45-6789', '987-65-4321', '555-12-3456'];
// Repeats bias the draw: most messages use one name, and most Parses are of the protected INSERT.
const NAMES = ['a', 'a', 'a', ''];
const TEXTS = [
  "INSERT INTO customers (ssn, note) VALUES ($1, 'fuzz')",
  "INSERT INTO customers (ssn, note) VALUES ($1, 'fuzz')",
  "UPDATE customers SET ssn = $1 WHERE note = 'fuzz'",
  'SELECT $1::text',
  'DO $$ BEGIN PERFORM ssn FROM customers; END $$',
  'SELEC broken $1',
];
const QUERIES = [
  'DEALLOCATE a', 'DEALLOCATE ALL', 'DISCARD ALL', 'PREPARE a(text) AS SELECT $1', 'PREPARE b AS SELECT 1',
  "EXECUTE a('123-45-6789')", "EXECUTE b('987-65-4321')", 'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT s', 'ROLLBACK TO SAVEPOINT s',
];

/** One step: a message or a Bind with its Execute (most Binds are executed at once). */
const step: fc.Arbitrary<Buffer[]> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ name: fc.constantFrom(...NAMES), text: fc.constantFrom(...TEXTS), badType: fc.integer({ min: 0, max: 4 }) })
      .map(({ name, text, badType }): Buffer[] => [serialize.parse({ name, text, types: badType === 0 ? [999_999] : [] })]),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      statement: fc.constantFrom(...NAMES), portal: fc.constantFrom('', '', 'p'), value: fc.constantFrom(...PLAINTEXTS), execute: fc.integer({ min: 0, max: 3 }),
    }).map(({ statement, portal, value, execute }): Buffer[] => [
      serialize.bind({ statement, portal, values: [value] }), ...(execute > 0 ? [serialize.execute({ portal })] : []),
    ]),
  },
  { weight: 1, arbitrary: fc.constantFrom('', 'p').map((portal): Buffer[] => [serialize.execute({ portal })]) },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constantFrom('S' as const, 'P' as const), name: fc.constantFrom(...NAMES, 'p') })
      .map(({ type, name }): Buffer[] => [serialize.describe({ type, name })]),
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constantFrom('S' as const, 'P' as const), name: fc.constantFrom(...NAMES, 'p') })
      .map(({ type, name }): Buffer[] => [serialize.close({ type, name })]),
  },
  { weight: 1, arbitrary: fc.constant<Buffer[]>([serialize.flush()]) },
  { weight: 1, arbitrary: fc.constantFrom(...QUERIES).map((sql): Buffer[] => [serialize.query(sql)]) },
);
/** A batch: a few steps, mostly ended by Sync (the unit the server skips to after an error). */
const batch: fc.Arbitrary<Buffer[]> = fc.record({ steps: fc.array(step, { minLength: 1, maxLength: 3 }), sync: fc.integer({ min: 0, max: 6 }) })
  .map(({ steps, sync }) => [...steps.flat(), ...(sync > 0 ? [serialize.sync()] : [])]);

let harness: PolicyHarness;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  direct = await harness.direct();
});

afterAll(async () => {
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});

function holdsText(messages: BackendMessage[], text: string): boolean {
  return messages.some((m) => m.type === 'D' && m.body.includes(text));
}

describe('frontend-message fuzzing', () => {
  it('no sequence of messages stores plaintext, and the session answers afterwards', async () => {
    const runs = Number(process.env.PGVEIL_FUZZ_RUNS ?? 150);
    const seed = process.env.PGVEIL_FUZZ_SEED === undefined ? undefined : Number(process.env.PGVEIL_FUZZ_SEED);
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), async (messages) => {
        const session = await openRawSession(harness.via(APP));
        try {
          const marker = `fuzz-end-${Math.random().toString(36).slice(2)}`;
          session.send([...messages.flat(), serialize.sync(), serialize.query('ROLLBACK'), serialize.query(`SELECT '${marker}'`)]);
          const deadline = Date.now() + 10_000;
          let seen: BackendMessage[] = [];
          while (!holdsText(seen, marker)) {
            if (Date.now() > deadline) throw new Error(`the session did not answer: ${seen.map((m) => m.type).join('')}`);
            seen = seen.concat(await session.readUntilReady(1, Math.max(1, deadline - Date.now())));
          }
        } finally {
          session.close();
        }
        const stored = await direct.query<{ ssn: string }>('SELECT ssn FROM customers WHERE ssn IS NOT NULL');
        for (const row of stored.rows) expect(PLAINTEXTS).not.toContain(row.ssn);
      }),
      { numRuns: runs, seed },
    );
  }, 120_000);
});
