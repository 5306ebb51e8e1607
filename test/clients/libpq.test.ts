/**
 * libpq itself (Debian's libpq5, driven through Python's ctypes): COPY FROM STDIN sent with
 * PQexecParams, the extended protocol, where libpq sends Sync before the server has answered the
 * Execute. The rows are stored protected, and a COPY that fails before it opens or on its data
 * leaves the connection answering in step.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, demoCustomers, expectDemoPolicy, libpqDsn, startDemoHarness, type PolicyHarness } from './support/demoHarness.js';
import { DEBIAN_PYTHON, requireProgram, runJson } from './support/programs.js';

const PROGRAM = fileURLToPath(new URL('./support/libpq_copy_client.py', import.meta.url));
const CUSTOMERS = demoCustomers(40, 6);

type Outcome = { status: 'ok'; rows: string } | { status: 'error'; sqlstate: string | null };

let harness: PolicyHarness;
let steps: Record<string, Outcome[] | boolean>;

beforeAll(async () => {
  requireProgram(DEBIAN_PYTHON, ['-c', 'import ctypes, ctypes.util; ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")'], 'libpq5');
  harness = await startDemoHarness();
  steps = await runJson(DEBIAN_PYTHON, [PROGRAM], { ROWS: JSON.stringify(CUSTOMERS), APP_DSN: libpqDsn(harness, APP) });
});

afterAll(async () => {
  await harness?.stop();
});

describe('libpq PQexecParams COPY FROM STDIN', () => {
  it('copies the rows, and the connection answers in step after each COPY, failed or not', () => {
    expect(steps).toEqual({
      copy: [{ status: 'ok', rows: String(CUSTOMERS.length) }],
      copy_answers_after: true,
      missing_table: [{ status: 'error', sqlstate: '42P01' }],
      missing_table_answers_after: true,
      bad_row: [{ status: 'error', sqlstate: '22P02' }],
      bad_row_answers_after: true,
      bad_id: [{ status: 'error', sqlstate: '22P02' }],
      bad_id_answers_after: true,
    });
  });

  it('stores no plaintext of a protected column; app, support and analyst read their views', async () => {
    await expectDemoPolicy(expect, harness, CUSTOMERS);
  });
});
