/**
 * pg_dump and pg_restore (Debian's postgresql-client, version 15) through the proxy on the demo's
 * table and policy. pg_dump refuses a server newer than itself, so this file runs on an embedded
 * PostgreSQL 15. The app's dump holds plaintext, the analyst's only what is stored (tokens, the
 * redacted city as NULL), and the app's dump restored through the proxy is stored as tokens again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres15 } from '../support/postgres15.js';
import {
  ANALYST, APP, CUSTOMER_COLUMNS, demoCustomers, expectDemoPolicy, libpqEnv, rowsAs, startDemoHarness,
  type PolicyHarness, type TestAccount,
} from './support/demoHarness.js';
import { requireProgram, run, type ProgramRun } from './support/programs.js';

const CUSTOMERS = demoCustomers(100, 4);

let harness: PolicyHarness;
let folder: string;

beforeAll(async () => {
  requireProgram('pg_dump', ['--version'], 'postgresql-client');
  requireProgram('pg_restore', ['--version'], 'postgresql-client');
  harness = await startDemoHarness({ startDatabase: startPostgres15 });
  folder = await mkdtemp(path.join(tmpdir(), 'pgveil-pg-dump-'));
  // The app's least-privilege login may only draw ids from the sequence (USAGE); pg_dump reads it
  // (SELECT) and pg_restore sets it (setval needs UPDATE), as a backup login of the app's would;
  // the analyst's dump reads it too.
  const direct = await harness.direct();
  try {
    await direct.query('GRANT SELECT, UPDATE ON SEQUENCE public.customers_id_seq TO pgveil_app');
    await direct.query('GRANT SELECT ON SEQUENCE public.customers_id_seq TO pgveil_analyst');
  } finally {
    await direct.end();
  }
  const app = await harness.connect(APP);
  try {
    for (const customer of CUSTOMERS) {
      await app.query(
        `INSERT INTO public.customers (${CUSTOMER_COLUMNS.join(', ')}) VALUES (${CUSTOMER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
        CUSTOMER_COLUMNS.map((column) => customer[column]),
      );
    }
  } finally {
    await app.end();
  }
}, 120_000);

afterAll(async () => {
  await harness?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Every plaintext the seeded rows hold, column by column. */
const PLAINTEXTS = CUSTOMERS.flatMap((customer) => CUSTOMER_COLUMNS.map((column) => [column, customer[column]] as const));

function expectOk(result: ProgramRun, label: string): void {
  expect(result.stderr, label).toBe('');
  expect(result.code, label).toBe(0);
}


/** A plain dump on stdout, and a custom-format archive (a file, read back as SQL by pg_restore --file=-). */
const PLAIN_DATA_ONLY = ['--no-owner', '--data-only', '--table=public.customers'];
const CUSTOM_FULL = ['--no-owner', '--format=custom', '--table=public.customers'];

interface Dumps {
  plainDataOnly: ProgramRun;
  customFull: ProgramRun;
  /** The custom archive's file, for pg_restore. */
  archive: string;
  /** The custom archive as SQL. */
  customFullScript: ProgramRun;
}

/** pg_dump through the proxy as `account`, plain data-only and custom schema-and-data. */
async function dumpAs(account: TestAccount): Promise<Dumps> {
  const env = libpqEnv(harness, account);
  const archive = path.join(folder, `${account.roles[0]}.dump`);
  const [plainDataOnly, customFull] = await Promise.all([
    run('pg_dump', PLAIN_DATA_ONLY, env), run('pg_dump', [...CUSTOM_FULL, `--file=${archive}`], env),
  ]);
  const customFullScript = customFull.code === 0 ? await run('pg_restore', ['--file=-', archive], {}) : customFull;
  return { plainDataOnly, customFull, archive, customFullScript };
}

let app: Dumps;
let analyst: Dumps;

beforeAll(async () => {
  [app, analyst] = await Promise.all([dumpAs(APP), dumpAs(ANALYST)]);
}, 120_000);

describe('pg_dump through the proxy', () => {
  it('as the app, plain and custom format, data only and with the schema, holds every plaintext', () => {
    for (const run of [app.plainDataOnly, app.customFull, app.customFullScript]) expectOk(run, 'pg_dump as app');
    expect(app.plainDataOnly.stdout).not.toContain('CREATE TABLE');
    expect(app.customFullScript.stdout).toContain('CREATE TABLE public.customers');
    for (const dump of [app.plainDataOnly.stdout, app.customFullScript.stdout]) {
      for (const [column, value] of PLAINTEXTS) if (value !== null) expect(dump, column).toContain(value);
    }
  });

  it('as the analyst, plain and custom format, holds what is stored (tokens) and never a plaintext', () => {
    for (const run of [analyst.plainDataOnly, analyst.customFull, analyst.customFullScript]) expectOk(run, 'pg_dump as analyst');
    for (const dump of [analyst.plainDataOnly.stdout, analyst.customFullScript.stdout]) {
      expect(dump).toContain('COPY public.customers');
      for (const [column, value] of PLAINTEXTS) if (value !== null) expect(dump, column).not.toContain(value);
    }
  });
});

describe('pg_restore through the proxy', () => {
  it('restores the app’s custom-format archive into the emptied table as tokens; the app reads the plaintext back', async () => {
    const before = await rowsAs(harness, 'direct', await storedIds());
    const direct = await harness.direct();
    try {
      await direct.query('TRUNCATE public.customers');
    } finally {
      await direct.end();
    }
    const restore = await run('pg_restore', ['--no-owner', '--data-only', '--exit-on-error', `--dbname=${harness.database.database}`, app.archive], libpqEnv(harness, APP));
    expectOk(restore, 'pg_restore');
    const { stored } = await expectDemoPolicy(expect, harness, CUSTOMERS);
    // The same tokens as before the dump: the restore protected the plaintext the app's dump held.
    expect(stored).toEqual(before);
  });
});

async function storedIds(): Promise<number[]> {
  const direct = await harness.direct();
  try {
    return (await direct.query<{ id: string }>('SELECT id FROM public.customers ORDER BY id')).rows.map((row) => Number(row.id));
  } finally {
    await direct.end();
  }
}
