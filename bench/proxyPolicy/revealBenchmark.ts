/**
 * The policy proxy's throughput: SELECT of 100 000 rows with three fpe columns revealed as
 * plaintext (target ≥ 100 000 rows/s), and protected INSERTs next to unprotected ones (target
 * ≥ 0.8×). Run: npx tsx bench/proxyPolicy/revealBenchmark.ts [rows]
 */
import pg from 'pg';
import { ANALYST, APP, startPolicyHarness } from '../../test/proxy-policy/support/policyHarness.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const harness = await startPolicyHarness();
try {
  const direct = await harness.direct();
  const ssns: string[] = [];
  const cards: string[] = [];
  const births: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    const d = String(100_000_000 + i);
    ssns.push(`${d.slice(0, 3)}-${d.slice(3, 5)}-${d.slice(5)}`.replace(/^1/, '2'));
    cards.push(`4${String(i).padStart(14, '0')}`);
    births.push(`19${String(50 + (i % 40))}-0${1 + (i % 9)}-1${i % 9}`);
  }
  const protect = async (kind: string, values: string[], scope: string): Promise<string[]> => (await harness.engine.protect(kind, values, { method: 'fpe', scope })).result;
  const [ps, pc, pb] = [await protect('ssn', ssns, 'customers'), await protect('ccn', cards.map((c) => c + luhn(c)), 'payments'), await protect('date', births, 'customers')];
  await direct.query('CREATE TABLE bulk (id int, ssn text, card_number text, birth_date date)');
  for (let start = 0; start < ROWS; start += 10_000) {
    const end = Math.min(ROWS, start + 10_000);
    await direct.query('INSERT INTO bulk SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::date[])', [
      Array.from({ length: end - start }, (_, k) => start + k), ps.slice(start, end), pc.slice(start, end), pb.slice(start, end),
    ]);
  }
  await direct.end();
  await writePolicies();
  const measure = async (label: string, client: pg.Client, sql: string): Promise<void> => {
    await client.query(sql);
    const t0 = process.hrtime.bigint();
    const result = await client.query(sql);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`${label}: ${result.rowCount} rows in ${seconds.toFixed(2)} s = ${Math.round((result.rowCount ?? 0) / seconds)} rows/s`);
  };
  const app = await harness.connect(APP);
  const analyst = await harness.connect(ANALYST);
  const plain = new pg.Client({ connectionString: harness.database.url });
  await plain.connect();
  await measure('direct              ', plain, 'SELECT ssn, card_number, birth_date FROM bulk');
  await measure('proxy, tokens (pass)', analyst, 'SELECT ssn, card_number, birth_date FROM bulk');
  await measure('proxy, 3 fpe reveal ', app, 'SELECT ssn, card_number, birth_date FROM bulk');
  const inserts = async (client: pg.Client, table: string, from: number): Promise<number> => {
    const t0 = process.hrtime.bigint();
    for (let i = from; i < from + 1000; i++) await client.query(`INSERT INTO ${table} (ssn, card_number, birth_date) VALUES ($1, $2, $3)`, [ssns[i], cards[i] + luhn(cards[i] as string), births[i]]);
    return 1000 / (Number(process.hrtime.bigint() - t0) / 1e9);
  };
  await plain.query('CREATE TABLE bulk_plain (LIKE customers INCLUDING ALL)'); // same indexes and defaults
  // Interleaved rounds, medians: the machine is shared and noisy.
  const unprotectedRates: number[] = [];
  const protectedRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    unprotectedRates.push(await inserts(app, 'bulk_plain', round * 1000));
    protectedRates.push(await inserts(app, 'customers', round * 1000));
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const [unprotected, protectedRate] = [median(unprotectedRates), median(protectedRates)];
  console.log(`INSERT (3 fpe columns) through the proxy, medians of 5: unprotected ${Math.round(unprotected)}/s, protected ${Math.round(protectedRate)}/s (${(protectedRate / unprotected).toFixed(2)}×)`);
  // Eight clients at once, as pgbench -c 8 would run them: concurrent sessions' protect calls
  // for the same column are coalesced into one engine batch.
  const CLIENTS = 8;
  const pool = await Promise.all(Array.from({ length: CLIENTS }, () => harness.connect(APP)));
  const concurrent = async (table: string, base: number): Promise<number> => {
    const t0 = process.hrtime.bigint();
    await Promise.all(pool.map(async (client, c) => {
      const from = base + c * 500;
      for (let i = from; i < from + 500; i++) await client.query(`INSERT INTO ${table} (ssn, card_number, birth_date) VALUES ($1, $2, $3)`, [ssns[i], cards[i] + luhn(cards[i] as string), births[i]]);
    }));
    return (CLIENTS * 500) / (Number(process.hrtime.bigint() - t0) / 1e9);
  };
  const unprotectedConcurrent: number[] = [];
  const protectedConcurrent: number[] = [];
  for (let round = 0; round < 3; round++) {
    unprotectedConcurrent.push(await concurrent('bulk_plain', 10_000 + round * CLIENTS * 500));
    protectedConcurrent.push(await concurrent('customers', 10_000 + round * CLIENTS * 500));
  }
  const [u8, p8] = [median(unprotectedConcurrent), median(protectedConcurrent)];
  console.log(`INSERT (3 fpe columns), ${CLIENTS} concurrent clients, medians of 3: unprotected ${Math.round(u8)}/s, protected ${Math.round(p8)}/s (${(p8 / u8).toFixed(2)}×)`);
  for (const client of [app, analyst, plain, ...pool]) await client.end();
} finally {
  await harness.stop();
}

function luhn(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

async function writePolicies(): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  const { POLICIES_YAML } = await import('../../test/proxy-policy/support/policyHarness.js');
  const extra = `
  public.bulk.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext } }
  public.bulk.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { app: plaintext } }
  public.bulk.birth_date: { kind: date, method: fpe, scope: customers, reveal: { app: plaintext } }
`;
  await writeFile(harness.store.current.file, POLICIES_YAML + extra);
  const outcome = await harness.store.reload();
  if (!outcome.ok) throw outcome.error;
}
