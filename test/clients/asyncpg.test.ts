/**
 * asyncpg (Debian's python3-asyncpg) through the proxy on the demo's table and policy: binary
 * parameters and results everywhere, named prepared statements, executemany, fetch, and binary
 * COPY FROM (copy_records_to_table), and a bulk insert from unnest of binary array parameters.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientProgramEnv, demoCustomers, expectDemoPolicy, expectReadsAsReference, startDemoHarness,
  type ClientReads, type PolicyHarness,
} from './support/demoHarness.js';
import { DEBIAN_PYTHON, requireProgram, runJson } from './support/programs.js';

const PROGRAM = fileURLToPath(new URL('./support/asyncpg_client.py', import.meta.url));
const CUSTOMERS = demoCustomers(40, 9);

interface AsyncpgRun {
  steps: Record<string, 'ok' | { sqlstate: string; message: string }>;
  ids: number[];
  reads: ClientReads;
}

let harness: PolicyHarness;
let result: AsyncpgRun;

beforeAll(async () => {
  requireProgram(DEBIAN_PYTHON, ['-c', 'import asyncpg'], 'python3-asyncpg');
  harness = await startDemoHarness();
  result = await runJson<AsyncpgRun>(DEBIAN_PYTHON, [PROGRAM], {
    ROWS: JSON.stringify(CUSTOMERS),
    ...clientProgramEnv(harness),
  });
});

afterAll(async () => {
  await harness?.stop();
});

describe('asyncpg', () => {
  it('writes with executemany, a prepared statement and execute, all binary', () => {
    expect(result.steps).toMatchObject({ executemany: 'ok', prepared: 'ok', execute: 'ok' });
  });

  it('copy_records_to_table (binary COPY FROM) stores tokens', async () => {
    expect(result.steps.copy_records_to_table).toBe('ok');
    await expectDemoPolicy(expect, harness, CUSTOMERS.slice(5, 7));
  });

  it('stores no plaintext of a protected column; app, support and analyst read their views', async () => {
    await expectDemoPolicy(expect, harness, CUSTOMERS.slice(0, 5));
  });

  it('bulk-inserts with INSERT … SELECT * FROM unnest of binary array parameters, stored as tokens', async () => {
    expect(result.steps.insert_select_unnest).toBe('ok');
    await expectDemoPolicy(expect, harness, CUSTOMERS.slice(7, 9));
  });

  it('fetches through a prepared statement, binary, what each role may see', async () => {
    expect(result.reads.app.length).toBeGreaterThanOrEqual(5);
    await expectReadsAsReference(expect, harness, result.ids, result.reads, 'asyncpg');
  });
});
