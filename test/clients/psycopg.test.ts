/**
 * psycopg 3 (Debian's python3-psycopg) through the proxy on the demo's table and policy:
 * server-side binding, executemany, COPY FROM STDIN (text), binary parameters, a bulk insert from
 * unnest of one array parameter a column, and binary cursors.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANALYST, APP, demoCustomers, expectDemoPolicy, expectReadsAsReference, libpqDsn, startDemoHarness, SUPPORT,
  type ClientReads, type PolicyHarness,
} from './support/demoHarness.js';
import { DEBIAN_PYTHON, requireProgram, runJson } from './support/programs.js';

const PROGRAM = fileURLToPath(new URL('./support/psycopg_client.py', import.meta.url));
const CUSTOMERS = demoCustomers(20, 11);

interface PsycopgRun {
  steps: Record<string, 'ok' | { sqlstate: string | null; message: string }>;
  ids: number[];
  reads: Record<keyof ClientReads, { text: Record<string, unknown>[]; binary: Record<string, unknown>[] }>;
}

let harness: PolicyHarness;
let result: PsycopgRun;

beforeAll(async () => {
  requireProgram(DEBIAN_PYTHON, ['-c', 'import psycopg'], 'python3-psycopg');
  harness = await startDemoHarness();
  result = await runJson<PsycopgRun>(DEBIAN_PYTHON, [PROGRAM], {
    ROWS: JSON.stringify(CUSTOMERS),
    APP_DSN: libpqDsn(harness, APP), SUPPORT_DSN: libpqDsn(harness, SUPPORT), ANALYST_DSN: libpqDsn(harness, ANALYST),
  });
});

afterAll(async () => {
  await harness?.stop();
});

describe('psycopg 3', () => {
  it('writes with executemany, COPY FROM STDIN (text and binary), text and binary parameters, a prepared statement and INSERT … SELECT FROM unnest of array parameters', () => {
    expect(result.steps).toEqual({ executemany: 'ok', copy_from_stdin_text: 'ok', execute_binary_parameters: 'ok', execute_prepared: 'ok', insert_select_unnest: 'ok', execute_text_parameters: 'ok', copy_from_stdin_binary: 'ok' });
    expect(result.ids).toHaveLength(CUSTOMERS.length);
  });

  it('stores no plaintext of a protected column; app, support and analyst read their views', async () => {
    await expectDemoPolicy(expect, harness, CUSTOMERS);
  });

  it('reads with text and binary cursors what each role may see', async () => {
    const pick = (format: 'text' | 'binary'): ClientReads => ({
      app: result.reads.app[format], support: result.reads.support[format], analyst: result.reads.analyst[format],
    });
    await expectReadsAsReference(expect, harness, result.ids, pick('text'), 'text');
    await expectReadsAsReference(expect, harness, result.ids, pick('binary'), 'binary');
  });
});
