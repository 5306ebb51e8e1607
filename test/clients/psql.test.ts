/**
 * psql through the proxy on the demo's table: \copy in and out, \d and \d+, and the catalog queries
 * psql runs for its own commands and tab completion, and pg_dump's data statement (pg_dump itself
 * runs in pgDump.test.ts, on the PostgreSQL 15 it accepts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANALYST, APP, CUSTOMER_COLUMNS, demoCustomers, expectDemoPolicy, libpqEnv, rowsAs, startDemoHarness, SUPPORT,
  type CustomerRow, type PolicyHarness, type TestAccount,
} from './support/demoHarness.js';
import { requireProgram, run, type ProgramRun } from './support/programs.js';

let harness: PolicyHarness;

beforeAll(async () => {
  requireProgram('psql', ['--version'], 'postgresql-client');
  harness = await startDemoHarness();
});

afterAll(async () => {
  await harness?.stop();
});

/** Every id in the table, in order (this file's rows only). */
async function idsOfAll(): Promise<number[]> {
  const out = await psql('direct', 'SELECT id FROM public.customers ORDER BY id', ['-A', '-t']);
  return out.stdout.trim().split('\n').map(Number);
}

function psql(account: TestAccount | 'direct', script: string, args: readonly string[] = []): Promise<ProgramRun> {
  return run('psql', ['-X', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=default', ...args], libpqEnv(harness, account), script);
}

const CUSTOMERS = demoCustomers(0, 5);
const COLUMN_LIST = CUSTOMER_COLUMNS.join(', ');

/** COPY text format: tab-separated, with \N for NULL (no demo value holds a tab or backslash). */
function copyText(rows: readonly CustomerRow[]): string {
  return rows.map((row) => CUSTOMER_COLUMNS.map((c) => row[c] ?? '\\N').join('\t')).join('\n');
}

describe('psql', () => {
  it('\\copy FROM STDIN as app stores tokens; each role reads its view', async () => {
    const load = await psql(APP, `\\copy public.customers (${COLUMN_LIST}) FROM STDIN\n${copyText(CUSTOMERS)}\n\\.\n`);
    expect(load.stderr).toBe('');
    expect(load.stdout).toBe(`COPY ${CUSTOMERS.length}\n`);
    await expectDemoPolicy(expect, harness, CUSTOMERS);
  });

  it('\\copy table TO STDOUT gives each role what the policy reveals to it', async () => {
    const ids = await idsOfAll();
    expect(ids).toHaveLength(CUSTOMERS.length);
    for (const account of [APP, SUPPORT, ANALYST]) {
      const out = await psql(account, `\\copy public.customers (${COLUMN_LIST}) TO STDOUT\n`);
      expect(out.stderr).toBe('');
      expect(out.stdout).toBe(`${copyText(await rowsAs(harness, account, ids))}\n`);
    }
  });

  it('refuses \\copy (query) TO of a protected table, naming the form that works', async () => {
    const out = await psql(ANALYST, `\\copy (SELECT email FROM public.customers) TO STDOUT\n`);
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('pgveil refused the statement: COPY (query) TO STDOUT reads table customers');
    expect(out.stderr).toContain('use COPY table (columns) TO STDOUT or SELECT');
  });

  it('\\d, \\d+ and \\dt print what they print on a direct connection', async () => {
    const script = '\\d public.customers\n\\d+ public.customers\n\\dt public.*\n\\d\n';
    const direct = await psql('direct', script);
    expect(direct.stdout).toContain('Table "public.customers"');
    expect(direct.stdout).toContain('Storage'); // \d+
    for (const account of [APP, ANALYST]) {
      const proxied = await psql(account, script);
      expect(proxied.stderr).toBe('');
      expect(proxied.stdout).toBe(direct.stdout);
    }
  });

  it('answers the catalog query psql runs to tab-complete a table name', async () => {
    // psql 15's Query_for_list_of_tables for "SELECT * FROM cust<TAB>".
    const completion = String.raw`SELECT pg_catalog.quote_ident(c.relname) FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'p') AND (c.relname) LIKE 'cust%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')
UNION ALL SELECT pg_catalog.quote_ident(n.nspname) || '.' FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'cust%' AND (SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace WHERE substring(pg_catalog.quote_ident(nspname) || '.',1,4) = substring('cust',1,pg_catalog.length(pg_catalog.quote_ident(nspname))+1)) > 1
LIMIT 1000;`;
    const proxied = await psql(ANALYST, completion, ['-A', '-t']);
    expect(proxied).toMatchObject({ code: 0, stderr: '', stdout: 'customers\n' });
  });
});

describe('least-privilege upstream logins', () => {
  it('each role reaches PostgreSQL as the demo\'s own login, and PostgreSQL refuses what that login may not do', async () => {
    for (const [account, login] of [[APP, 'pgveil_app'], [SUPPORT, 'pgveil_support'], [ANALYST, 'pgveil_analyst']] as const) {
      const who = await psql(account, 'SELECT current_user, usesuper FROM pg_user WHERE usename = current_user', ['-A', '-t']);
      expect(who).toMatchObject({ code: 0, stderr: '', stdout: `${login}|f\n` });
    }
    const before = await idsOfAll();
    for (const account of [SUPPORT, ANALYST]) {
      const erase = await psql(account, 'DELETE FROM public.customers');
      expect(erase.code).not.toBe(0);
      expect(erase.stderr).toContain('permission denied for table customers');
    }
    const create = await psql(APP, 'CREATE TABLE public.copied AS SELECT * FROM public.customers');
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain('permission denied for schema public');
    expect(await idsOfAll()).toEqual(before);
  });
});

describe('pg_dump', () => {
  it('returns to pg_dump\'s data statement (COPY … TO stdout) tokens for the analyst and plaintext for the app', async () => {
    const copy = `COPY public.customers (id, ${COLUMN_LIST}) TO stdout;\n`;
    const app = await psql(APP, copy);
    const analyst = await psql(ANALYST, copy);
    const stored = await psql('direct', copy);
    expect(app.code).toBe(0);
    expect(analyst.code).toBe(0);
    expect(analyst.stderr).toBe('');
    for (const customer of CUSTOMERS) {
      expect(app.stdout).toContain(customer.email);
      expect(app.stdout).toContain(customer.ssn);
      for (const value of [customer.email, customer.ssn, customer.full_name, customer.card_number, customer.external_id]) {
        expect(analyst.stdout).not.toContain(value);
        expect(stored.stdout).not.toContain(value);
      }
    }
    // The analyst's tokens are what is stored, the city redacted.
    const storedLines = stored.stdout.trim().split('\n').map((line) => line.split('\t'));
    const analystLines = analyst.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(analystLines.map((l) => l.slice(0, 3))).toEqual(storedLines.map((l) => l.slice(0, 3)));
    expect(analystLines.every((l) => l[7] === '\\N')).toBe(true);
  });
});
