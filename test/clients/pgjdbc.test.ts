/**
 * pgjdbc (Debian's libpostgresql-jdbc-java, run by a headless JRE's single-file source launcher)
 * through the proxy on the demo's table and policy: a batch rewritten to a multi-row INSERT
 * (reWriteBatchedInserts), server-prepared statements (prepareThreshold=1) and a batch of
 * UPDATE … FROM (VALUES (?, ?, ?), (?, ?, ?)) replacing protected values.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CUSTOMER_COLUMNS, clientProgramEnv, demoCustomers, expectDemoPolicy, expectReadsAsReference, startDemoHarness,
  type ClientReads, type PolicyHarness,
} from './support/demoHarness.js';
import { requireProgram, runJson } from './support/programs.js';

const PROGRAM = fileURLToPath(new URL('./support/PgjdbcClient.java', import.meta.url));
const DRIVER = '/usr/share/java/postgresql.jar';
const WRITTEN = demoCustomers(80, 6);
/** New ssn and card numbers for the first four rows, sent as one batch of UPDATE … FROM (VALUES …). */
const UPDATES = demoCustomers(86, 4).map((c) => ({ ssn: c.ssn, card_number: c.card_number }));
/** What the table must hold once the updates ran. */
const CUSTOMERS = WRITTEN.map((c, i) => ({ ...c, ...UPDATES[i] }));

interface PgjdbcRun {
  steps: Record<string, 'ok' | number | number[] | { sqlstate: string; message: string }>;
  ids: number[];
  /** What the masked roles saw browsing the schema and a table, as a GUI client does. */
  browsed: Record<'support' | 'analyst', { tables: string[]; columns: string[]; primary_key: string[]; indexes: number; result_columns: string[]; phones: (string | null)[] }>;
  /** Per role, the rows of the first and of the second (server-prepared) execution. */
  reads: Record<keyof ClientReads, [Record<string, unknown>[], Record<string, unknown>[]]>;
}

let harness: PolicyHarness;
let result: PgjdbcRun;

beforeAll(async () => {
  requireProgram('java', ['-cp', DRIVER, '--version'], 'default-jre-headless');
  requireProgram('test', ['-r', DRIVER], 'libpostgresql-jdbc-java');
  harness = await startDemoHarness();
  result = await runJson<PgjdbcRun>('java', ['-cp', DRIVER, PROGRAM], {
    ROWS: WRITTEN.map((c) => CUSTOMER_COLUMNS.map((column) => c[column]).join('\t')).join('\n'),
    UPDATES: UPDATES.map((u) => `${u.ssn}\t${u.card_number}`).join('\n'),
    ...clientProgramEnv(harness),
    // The JVM decodes the environment and encodes stdout in the locale's charset: names are not ASCII.
    LC_ALL: 'C.UTF-8',
  }, 120_000);
}, 180_000);

afterAll(async () => {
  await harness?.stop();
});

describe('pgjdbc', () => {
  it('writes a rewritten batch, server-prepared inserts and a batch of UPDATE … FROM (VALUES …)', () => {
    expect(result.steps).toEqual({
      batch_counts: [-2, -2, -2, -2], // SUCCESS_NO_INFO: the batch went as one multi-row INSERT
      batch: 'ok',
      server_prepared: 'ok',
      server_prepared_inserts: expect.any(Number),
      batch_update_from_values: 'ok',
      batch_update_counts: [2, 2],
      browse_support: 'ok',
      browse_analyst: 'ok',
    });
    expect(result.steps.server_prepared_inserts).toBeGreaterThanOrEqual(1);
  });

  it('stores no plaintext of a protected column, updated ones included; app, support and analyst read their views', async () => {
    const { stored } = await expectDemoPolicy(expect, harness, CUSTOMERS);
    const storedValues = stored.flatMap((row) => [row.ssn, row.card_number]);
    for (const replaced of WRITTEN.slice(0, UPDATES.length)) {
      expect(storedValues).not.toContain(replaced.ssn);
      expect(storedValues).not.toContain(replaced.card_number);
    }
  });

  it('reads, before and after the statement is server-prepared, what each role may see', async () => {
    expect(result.ids).toHaveLength(CUSTOMERS.length);
    for (const pass of [0, 1] as const) {
      const reads = { app: result.reads.app[pass], support: result.reads.support[pass], analyst: result.reads.analyst[pass] };
      await expectReadsAsReference(expect, harness, result.ids, reads, `pgjdbc pass ${pass + 1}`);
    }
  });

  it('browses the schema and a table as a GUI client does (DatabaseMetaData, a cursor fetch), masked roles included', async () => {
    const direct = await harness.direct();
    const stored = await direct.query<{ phone: string }>('SELECT phone FROM customers ORDER BY id LIMIT 5').finally(() => direct.end());
    for (const role of ['support', 'analyst'] as const) {
      const seen = result.browsed[role];
      expect(seen.tables).toContain('customers');
      expect(seen.columns).toEqual(expect.arrayContaining(['ssn', 'phone', 'email']));
      expect(seen.primary_key).toEqual(['id']);
      expect(seen.indexes).toBeGreaterThanOrEqual(1);
      expect(seen.result_columns).toEqual(expect.arrayContaining(['id', 'ssn', 'phone']));
      expect(seen.phones).toHaveLength(5);
      // phone is stored in plaintext and shown masked to both.
      for (const [i, row] of stored.rows.entries()) {
        expect(seen.phones[i]).not.toBe(row.phone);
        expect(seen.phones[i]).toMatch(/\*/);
      }
    }
  });
});
