/**
 * postgres.js through the proxy on the demo's table and policy: multi-row inserts from
 * sql(rows), pipelined queries on one connection, its named prepared statements, and a bulk update
 * from `(values ${sql(rows)})`.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANALYST, APP, CUSTOMER_COLUMNS, demoCustomers, expectDemoPolicy, expectReadsAsReference, startDemoHarness, SUPPORT,
  type ClientReads, type PolicyHarness, type TestAccount,
} from './support/demoHarness.js';

const CUSTOMERS = demoCustomers(60, 10);

let harness: PolicyHarness;
const open: postgres.Sql[] = [];

function connect(account: TestAccount, options: postgres.Options<Record<string, postgres.PostgresType>> = {}): postgres.Sql {
  const sql = postgres({
    host: '127.0.0.1', port: harness.proxy.port, database: harness.database.database,
    username: account.email, password: account.password, ssl: false, max: 1, onnotice: () => undefined, ...options,
  });
  open.push(sql);
  return sql;
}

beforeAll(async () => {
  harness = await startDemoHarness();
});

afterAll(async () => {
  await Promise.all(open.map((sql) => sql.end({ timeout: 1 })));
  await harness?.stop();
});

/** postgres.js parses a date to a Date at UTC midnight: back to PostgreSQL's text form. */
function asPrinted(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString().slice(0, 10) : value]));
}

async function idsOf(sql: postgres.Sql, emails: readonly string[]): Promise<number[]> {
  const rows = await sql<{ id: string }[]>`SELECT id FROM public.customers WHERE email IN ${sql(emails)} ORDER BY id`;
  return rows.map((row) => Number(row.id));
}

describe('postgres.js', () => {
  it('inserts many rows in one statement from sql(rows, columns)', async () => {
    const app = connect(APP);
    const batch = CUSTOMERS.slice(0, 3);
    const inserted = await app`INSERT INTO public.customers ${app(batch, ...CUSTOMER_COLUMNS)} RETURNING id`;
    expect(inserted).toHaveLength(3);
    await expectDemoPolicy(expect, harness, batch);
  });

  it('pipelines inserts and reads on one connection, in and out of a transaction', async () => {
    const app = connect(APP);
    const [one, two] = CUSTOMERS.slice(3, 5) as [typeof CUSTOMERS[number], typeof CUSTOMERS[number]];
    const inTransaction = CUSTOMERS.slice(5, 7);
    // Not awaited one by one: postgres.js writes them all before reading a reply.
    const results = await Promise.all([
      app`INSERT INTO public.customers ${app(one, ...CUSTOMER_COLUMNS)}`,
      app`SELECT email FROM public.customers WHERE email = ${one.email}`,
      app`INSERT INTO public.customers ${app(two, ...CUSTOMER_COLUMNS)}`,
      app`SELECT ssn FROM public.customers WHERE email = ${two.email}`,
    ]);
    expect(results[1]).toEqual([{ email: one.email }]);
    expect(results[3]).toEqual([{ ssn: two.ssn }]);
    await app.begin((tx) => inTransaction.map((row) => tx`INSERT INTO public.customers ${tx(row, ...CUSTOMER_COLUMNS)}`));
    await expectDemoPolicy(expect, harness, CUSTOMERS.slice(3, 7));
  });

  it('reuses its named prepared statements, writing and reading', async () => {
    const app = connect(APP, { prepare: true });
    const last = CUSTOMERS[7]!;
    const insert = 'INSERT INTO public.customers (full_name, email, ssn, card_number, city) VALUES ($1, $2, $3, $4, $5)';
    await app.unsafe(insert, [last.full_name, last.email, last.ssn, last.card_number, last.city], { prepare: true });
    for (let i = 0; i < 3; i += 1) {
      const rows = await app`SELECT ssn, card_number FROM public.customers WHERE email = ${last.email}`;
      expect(rows).toEqual([{ ssn: last.ssn, card_number: last.card_number }]);
    }
    const statements = await app`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'SELECT ssn, card_number%'`;
    expect(statements).toEqual([{ n: 1 }]);
  });

  it('updates protected columns of many rows in one statement from (values ${sql(rows)})', async () => {
    const app = connect(APP);
    const written = CUSTOMERS.slice(8, 10);
    await app`INSERT INTO public.customers ${app(written, ...CUSTOMER_COLUMNS)}`;
    const ids = await idsOf(app, written.map((c) => c.email));
    const replacements = demoCustomers(70, 2);
    const values = ids.map((id, i) => [String(id), replacements[i]!.ssn, replacements[i]!.card_number]);
    const updated = await app`
      UPDATE public.customers SET ssn = update_data.ssn, card_number = update_data.card_number
      FROM (VALUES ${app(values)}) AS update_data (id, ssn, card_number)
      WHERE customers.id = (update_data.id)::bigint
      RETURNING customers.ssn, customers.card_number`;
    expect(updated).toEqual(replacements.map((r) => ({ ssn: r.ssn, card_number: r.card_number })));
    const expected = written.map((c, i) => ({ ...c, ssn: replacements[i]!.ssn, card_number: replacements[i]!.card_number }));
    const { stored } = await expectDemoPolicy(expect, harness, expected);
    const storedValues = stored.flatMap((row) => [row.ssn, row.card_number]);
    for (const plain of [...written, ...replacements]) {
      expect(storedValues).not.toContain(plain.ssn);
      expect(storedValues).not.toContain(plain.card_number);
    }
  });

  it('reads, pipelined and prepared, what each role may see', async () => {
    const ids = await idsOf(connect(APP), CUSTOMERS.slice(0, 7).map((c) => c.email));
    expect(ids).toHaveLength(7);
    const reads = {} as Record<keyof ClientReads, Record<string, unknown>[]>;
    await Promise.all(([['app', APP], ['support', SUPPORT], ['analyst', ANALYST]] as const).map(async ([role, account]) => {
      const sql = connect(account);
      const [rows] = await Promise.all([
        sql`SELECT ${sql(CUSTOMER_COLUMNS)} FROM public.customers WHERE id IN ${sql(ids)} ORDER BY id`,
        sql`SELECT 1`,
      ]);
      reads[role] = rows.map((row) => asPrinted(row));
    }));
    await expectReadsAsReference(expect, harness, ids, reads, 'postgres.js');
  });
});
