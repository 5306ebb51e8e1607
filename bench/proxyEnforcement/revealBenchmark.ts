/**
 * The policy proxy's read throughput: SELECT of 100 000 rows with three fpe columns revealed as
 * plaintext (target ≥ 100 000 rows/s), beside the same SELECT straight to PostgreSQL and through
 * the proxy as a role that sees tokens (the raw-bytes path). Protected INSERTs are measured by
 * insertBenchmark.ts. Run: npx tsx bench/proxyEnforcement/revealBenchmark.ts [rows]
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import pg from 'pg';
import { ANALYST, APP, startPolicyHarness } from '../../test/proxy/enforcement/support/policyHarness.js';

const ROWS = Number(process.argv[2] ?? 100_000);
/** Set to a directory to write one CPU profile of each measured query (proxy, client and engine share this process). */
const PROFILE_DIR = process.env.PGVEIL_BENCH_PROFILE_DIR;
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
  const measure = async (label: string, client: pg.Client, sql: string): Promise<{ rowsPerSecond: number; cpuMicrosPerRow: number }> => {
    await client.query(sql);
    const profiler = PROFILE_DIR === undefined ? undefined : new Session();
    if (profiler !== undefined) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const result = await client.query(sql);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    if (profiler !== undefined && PROFILE_DIR !== undefined) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(path.join(PROFILE_DIR, `${label.trim().replace(/\W+/g, '-')}.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    const rows = result.rowCount ?? 0;
    // CPU time per row (this process: client, proxy and engine) is steadier than rows/s on a busy machine.
    const cpuMicrosPerRow = (cpu.user + cpu.system) / Math.max(1, rows);
    console.log(`${label}: ${rows} rows in ${seconds.toFixed(2)} s = ${Math.round(rows / seconds)} rows/s, ${cpuMicrosPerRow.toFixed(2)} us CPU/row`);
    return { rowsPerSecond: rows / seconds, cpuMicrosPerRow };
  };
  const app = await harness.connect(APP);
  const analyst = await harness.connect(ANALYST);
  const plain = new pg.Client({ connectionString: harness.database.url });
  await plain.connect();
  await measure('direct              ', plain, 'SELECT ssn, card_number, birth_date FROM bulk');
  const pass = await measure('proxy, tokens (pass)', analyst, 'SELECT ssn, card_number, birth_date FROM bulk');
  const reveal = await measure('proxy, 3 fpe reveal ', app, 'SELECT ssn, card_number, birth_date FROM bulk');
  console.log(`reveal / pass: ${(reveal.rowsPerSecond / pass.rowsPerSecond).toFixed(2)} x rows/s, ${(pass.cpuMicrosPerRow / reveal.cpuMicrosPerRow).toFixed(2)} x by CPU per row`);
  for (const client of [app, analyst, plain]) await client.end();
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
  const { POLICIES_YAML } = await import('../../test/proxy/enforcement/support/policyHarness.js');
  const extra = `
  public.bulk.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext } }
  public.bulk.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { app: plaintext } }
  public.bulk.birth_date: { kind: date, method: fpe, scope: customers, reveal: { app: plaintext } }
`;
  await writeFile(harness.store.current.file, POLICIES_YAML + extra);
  const outcome = await harness.store.reload();
  if (!outcome.ok) throw outcome.error;
}
