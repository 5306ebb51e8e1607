/**
 * psqlODBC (Debian's odbc-postgresql, driven by python3-pyodbc), the driver BI tools connect with,
 * through the proxy on the demo's table and policy: the SET statements it sends at connect, bound
 * parameters with executemany, cursors (UseDeclareFetch: DECLARE/FETCH in a transaction),
 * server-side prepares, the catalog functions, and its statement-level rollback (a SAVEPOINT around
 * each statement of a transaction) after an error.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/auditLog.js';
import {
  CUSTOMER_COLUMNS, clientProgramEnv, demoCustomers, expectDemoPolicy, expectReadsAsReference, startDemoHarness,
  type ClientReads, type PolicyHarness,
} from './support/demoHarness.js';
import { DEBIAN_PYTHON, requireProgram, runJson } from './support/programs.js';

const PROGRAM = fileURLToPath(new URL('./support/odbc_client.py', import.meta.url));
const CUSTOMERS = demoCustomers(120, 6);
const READ_MODES = ['declare_fetch', 'server_prepare'] as const;

type Failure = { sqlstate: string | null; message: string };
interface Recovery { failed: Failure | null; after: boolean }
interface Catalog { tables: string[]; columns: { name: string; type: string }[] }

interface OdbcRun {
  steps: Record<string, 'ok' | Failure>;
  ids: number[];
  reads: Record<keyof ClientReads, Record<(typeof READ_MODES)[number], Record<string, unknown>[]>>;
  /** Per role and mode: the session held an open cursor (declare_fetch) or a prepared statement (server_prepare) mid-read. */
  checks: Record<keyof ClientReads, Record<(typeof READ_MODES)[number], boolean>>;
  catalogs: Record<'support' | 'analyst', Catalog | null>;
  recovery: Record<keyof ClientReads, Recovery | null>;
}

let harness: PolicyHarness;
let result: OdbcRun;
const audited: AuditEvent[] = [];
/** Debian's odbcinst.ini turns CommLog on for the driver (a /tmp log of every run): the test registers the driver in one of its own. */
const driverConfig = mkdtempSync(path.join(tmpdir(), 'pgveil-odbc-'));

/** psqlODBC's library, wherever the multiarch folder puts it. */
function driverLibrary(): string | undefined {
  for (const arch of readdirSync('/usr/lib')) {
    const library = path.join('/usr/lib', arch, 'odbc', 'psqlodbcw.so');
    if (existsSync(library)) return library;
  }
  return undefined;
}

function driverLogs(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('psqlodbc_'));
}
const logsBefore = driverLogs();

beforeAll(async () => {
  requireProgram(DEBIAN_PYTHON, ['-c', 'import pyodbc'], 'python3-pyodbc');
  const driverProbe = 'import glob, pyodbc, sys; sys.exit(0 if "PostgreSQL Unicode" in pyodbc.drivers() or glob.glob("/usr/lib/*/odbc/psqlodbcw.so") else 1)';
  requireProgram(DEBIAN_PYTHON, ['-c', driverProbe], 'odbc-postgresql');
  const library = driverLibrary();
  if (library !== undefined) {
    writeFileSync(path.join(driverConfig, 'odbcinst.ini'), `[PostgreSQL Unicode]\nDriver=${library}\nDebug=0\nCommLog=0\n`);
  }
  harness = await startDemoHarness({ audit: { record: (event) => audited.push(event) } });
  result = await runJson<OdbcRun>(DEBIAN_PYTHON, [PROGRAM], {
    ROWS: JSON.stringify(CUSTOMERS),
    ...clientProgramEnv(harness),
    ODBCSYSINI: driverConfig,
  });
});

afterAll(async () => {
  rmSync(driverConfig, { recursive: true, force: true });
  await harness?.stop();
});

describe('psqlODBC (pyodbc)', () => {
  it('connects as every role and runs every step', () => {
    const steps = [
      'executemany', 'error_mid_transaction_app',
      ...['app', 'support', 'analyst'].flatMap((role) => READ_MODES.map((mode) => `read_${mode}_${role}`)),
      ...['support', 'analyst'].flatMap((role) => [`catalog_${role}`, `error_mid_transaction_${role}`]),
    ];
    expect(result.steps).toEqual(Object.fromEntries(steps.map((step) => [step, 'ok'])));
    // Its connect-time SETs, savepoints, cursors and catalog queries all pass without a refusal.
    expect(audited.filter((event) => event.event === 'proxy.refused')).toEqual([]);
  });

  // Two of the rows were inserted around the failing statement of one transaction: without
  // psqlODBC's savepoint the first would roll back and the second fail (25P02).
  it('inserts with bound parameters (executemany) and stores no plaintext of a protected column', async () => {
    expect(result.ids).toHaveLength(CUSTOMERS.length);
    await expectDemoPolicy(expect, harness, CUSTOMERS);
  });

  it.each(READ_MODES)('reads with %s what each role may see', async (mode) => {
    const reads: ClientReads = { app: result.reads.app[mode], support: result.reads.support[mode], analyst: result.reads.analyst[mode] };
    expect(reads.support).toHaveLength(CUSTOMERS.length);
    expect([result.checks.app[mode], result.checks.support[mode], result.checks.analyst[mode]]).toEqual([true, true, true]);
    await expectReadsAsReference(expect, harness, result.ids, reads, mode);
  });

  it.each(['support', 'analyst'] as const)('lists the table and its columns (SQLTables, SQLColumns) as %s', (role) => {
    const catalog = result.catalogs[role];
    expect(catalog?.tables).toEqual(['public.customers']);
    expect(catalog?.columns.map((column) => column.name)).toEqual(['id', ...CUSTOMER_COLUMNS]);
    // The declared types, which the masks and tokens keep: a BI tool's date column stays a date.
    expect(catalog?.columns.map((column) => column.type)).toEqual(['int8', 'text', 'text', 'text', 'text', 'text', 'date', 'text', 'inet', 'uuid']);
  });

  it.each(['app', 'support', 'analyst'] as const)('goes on after an error inside a transaction as %s (statement-level rollback)', (role) => {
    const recovery = result.recovery[role];
    expect(recovery?.failed?.sqlstate).toBe('22012');
    expect(recovery?.after).toBe(true);
  });

  it('leaves no driver log behind (the driver registered with CommLog off)', () => {
    expect(driverLogs().filter((name) => !logsBefore.includes(name))).toEqual([]);
  });
});
