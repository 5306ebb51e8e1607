/**
 * The policy proxy's read throughput: SELECT of 100 000 rows with three fpe columns (ssn, ccn,
 * date) revealed as plaintext — or, with PGVEIL_BENCH_REVEAL=tokenise, three tokenised ones
 * (email, name, a 10-digit number) — beside the same SELECT straight to PostgreSQL and through a
 * proxy whose role sees the stored tokens (the raw-bytes path). Each proxy is its own process running
 * the compiled `dist/`, as `pgveil serve` does, so the client's own parsing is not counted as the
 * proxy's; the client reads every value as text and does nothing else with it. Rounds interleave
 * the three targets; medians are printed, with the proxy's CPU per row (all its threads, to the
 * nanosecond; steadier than rows/s on a shared machine). Protected INSERTs are measured by
 * insertBenchmark.ts.
 * Run: npx tsx bench/proxyEnforcement/revealBenchmark.ts [rows]   Environment: PGVEIL_BENCH_ROUNDS
 * (7: a round reads in a fraction of a second), PGVEIL_BENCH_REVEAL (fpe, or tokenise),
 * PGVEIL_BENCH_BASELINE_DIST (another build's dist/, e.g. a worktree of the last commit: its
 * revealing proxy is a fourth target, alternated, and this build / baseline is printed), PGVEIL_BENCH_NODE_OPTIONS (e.g.
 * "--cpu-prof --cpu-prof-dir=…" for the proxy processes).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createEngine, type Kind } from '../../src/engine/index.js';
import { startTestPostgres } from '../../test/support/postgres.js';
import { cpuSecondsPrecise, median, startProcess } from '../proxy/benchProcesses.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 7);
const ACCOUNT = { email: 'bench@example.com', password: 'bench-password' };

/** One workload: three protected columns of a table `bulk`, their values and how they are stored. */
interface Workload {
  readonly title: string;
  readonly columns: readonly { readonly name: string; readonly kind: Kind; readonly method: 'fpe' | 'tokenise'; readonly scope: string; readonly type: string }[];
  /** Row i's plaintext values, in column order. */
  readonly row: (i: number) => readonly string[];
}

const FIRST_NAMES = ['Ann', 'Bob', 'Chloé', 'Dmitri', 'Eve', 'Fatima', 'Gus', 'Hiro'];
const LAST_NAMES = ['Smith', 'Okafor', 'García', 'Ng', 'Novak', 'Haddad'];
const WORKLOADS: Record<'fpe' | 'tokenise', Workload> = {
  fpe: {
    title: '3 fpe',
    columns: [
      { name: 'ssn', kind: 'ssn', method: 'fpe', scope: 'customers', type: 'text' },
      { name: 'card_number', kind: 'ccn', method: 'fpe', scope: 'payments', type: 'text' },
      { name: 'birth_date', kind: 'date', method: 'fpe', scope: 'customers', type: 'date' },
    ],
    row: (i) => {
      const d = String(100_000_000 + i);
      const card = `4${String(i).padStart(14, '0')}`;
      return [`${d.slice(0, 3)}-${d.slice(3, 5)}-${d.slice(5)}`.replace(/^1/, '2'), card + luhn(card), `19${String(50 + (i % 40))}-0${1 + (i % 9)}-1${i % 9}`];
    },
  },
  tokenise: {
    title: '3 tokenised',
    columns: [
      { name: 'email', kind: 'email', method: 'tokenise', scope: 'customers', type: 'text' },
      { name: 'full_name', kind: 'name', method: 'tokenise', scope: 'customers', type: 'text' },
      { name: 'phone', kind: 'numeric', method: 'tokenise', scope: 'customers', type: 'text' },
    ],
    row: (i) => [
      `user${i}@mail${i % 97}.example.com`,
      `${FIRST_NAMES[i % FIRST_NAMES.length] as string} ${LAST_NAMES[(i >> 3) % LAST_NAMES.length] as string}`,
      String(5_550_000_000 + i),
    ],
  },
};
const workloadName = process.env.PGVEIL_BENCH_REVEAL ?? 'fpe';
if (workloadName !== 'fpe' && workloadName !== 'tokenise') throw new Error('PGVEIL_BENCH_REVEAL is fpe or tokenise');
const WORKLOAD = WORKLOADS[workloadName];
const QUERY = `SELECT ${WORKLOAD.columns.map((column) => column.name).join(', ')} FROM bulk`;

/** The workload's three columns; `reveal` is what the bench role sees (no entry: the stored tokens). */
const policies = (reveal: string): string => `
columns:
${WORKLOAD.columns.map((column) => `  public.bulk.${column.name}: { kind: ${column.kind}, method: ${column.method}, scope: ${column.scope}${reveal} }`).join('\n')}
`;

/** Every value as the text PostgreSQL sent: the client's cost stays small and the same for all targets. */
const asText = { getTypeParser: () => (value: string) => value };

interface Target {
  label: string;
  config: pg.ClientConfig;
  proxyPid?: number;
}

interface Measurement {
  rowsPerSecond: number;
  /** The proxy process's CPU per row (user + system), µs; 0 for the direct target. */
  proxyMicrosPerRow: number;
}

async function measure(target: Target): Promise<Measurement> {
  const client = new pg.Client({ ...target.config, types: asText });
  await client.connect();
  try {
    const cpuBefore = target.proxyPid ? cpuSecondsPrecise(target.proxyPid) : 0;
    const start = process.hrtime.bigint();
    const result = await client.query({ text: QUERY, rowMode: 'array' });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const rows = result.rowCount ?? 0;
    if (rows !== ROWS) throw new Error(`${target.label}: ${rows} rows, expected ${ROWS}`);
    const proxySeconds = (target.proxyPid ? cpuSecondsPrecise(target.proxyPid) : 0) - cpuBefore;
    return { rowsPerSecond: rows / seconds, proxyMicrosPerRow: (proxySeconds * 1e6) / rows };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const database = await startTestPostgres();
  const folder = await mkdtemp(path.join(tmpdir(), 'pgveil-reveal-bench-'));
  const cleanup: Array<() => Promise<void>> = [() => database.stop(), () => rm(folder, { recursive: true, force: true })];
  try {
    const masterKey = randomBytes(32);
    const engine = createEngine({ masterKey });
    const rows = Array.from({ length: ROWS }, (_, i) => WORKLOAD.row(i));
    const stored: string[][] = [];
    for (const [c, column] of WORKLOAD.columns.entries()) {
      const values = rows.map((row) => row[c] as string);
      stored.push((await engine.protect(column.kind, values, { method: column.method, scope: column.scope })).result);
    }
    const setup = new pg.Client({ connectionString: database.url });
    await setup.connect();
    await setup.query(`CREATE TABLE bulk (id int, ${WORKLOAD.columns.map((column) => `${column.name} ${column.type}`).join(', ')})`);
    const arrays = WORKLOAD.columns.map((column, c) => `$${c + 2}::${column.type}[]`).join(', ');
    for (let start = 0; start < ROWS; start += 10_000) {
      const end = Math.min(ROWS, start + 10_000);
      await setup.query(`INSERT INTO bulk SELECT * FROM unnest($1::int[], ${arrays})`, [
        Array.from({ length: end - start }, (_, k) => start + k), ...stored.map((values) => values.slice(start, end)),
      ]);
    }
    await setup.end();

    const upstream = { host: database.host, port: database.port, user: database.user, password: database.password, sslmode: 'disable' as const };
    const startProxy = async (name: string, reveal: string, dist?: string): Promise<{ port: number; pid: number }> => {
      const policiesFile = path.join(folder, `${name}.yaml`);
      await writeFile(policiesFile, policies(reveal));
      const proxy = await startProcess('../proxy/proxyProcess.ts', {
        PGVEIL_BENCH_PROXY: JSON.stringify({
          upstream, databases: { bench: database.database }, account: ACCOUNT, policiesFile, masterKeyHex: masterKey.toString('hex'),
        }),
        ...(dist === undefined ? {} : { PGVEIL_BENCH_DIST: dist }),
      });
      cleanup.unshift(() => proxy.stop());
      return proxy;
    };
    const passing = await startProxy('pass', '');
    const revealing = await startProxy('reveal', ', reveal: { bench: plaintext }');
    const viaProxy = (port: number): pg.ClientConfig => ({ host: '127.0.0.1', port, user: ACCOUNT.email, password: ACCOUNT.password, database: 'bench' });
    const targets: Target[] = [
      { label: 'direct              ', config: { connectionString: database.url } },
      { label: 'proxy, tokens (pass)', config: viaProxy(passing.port), proxyPid: passing.pid },
      { label: `proxy, ${WORKLOAD.title} reveal`.padEnd(20), config: viaProxy(revealing.port), proxyPid: revealing.pid },
    ];
    const baselineDist = process.env.PGVEIL_BENCH_BASELINE_DIST;
    if (baselineDist !== undefined) {
      const baseline = await startProxy('baseline', ', reveal: { bench: plaintext }', baselineDist);
      targets.push({ label: 'baseline build reveal', config: viaProxy(baseline.port), proxyPid: baseline.pid });
    }

    // One unmeasured read each: plans, JIT and the first engine keys are not what is measured.
    for (const target of targets) await measure(target);
    const results = new Map<string, Measurement[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(i + round) % targets.length] as Target;
        const m = await measure(target);
        results.set(target.label, [...(results.get(target.label) ?? []), m]);
        const cpu = target.proxyPid ? `, proxy CPU ${m.proxyMicrosPerRow.toFixed(2)} µs/row` : '';
        process.stdout.write(`round ${round} ${target.label}: ${Math.round(m.rowsPerSecond)} rows/s${cpu}\n`);
      }
    }
    const summary = (label: string): Measurement => {
      const all = results.get(label) ?? [];
      return { rowsPerSecond: median(all.map((m) => m.rowsPerSecond)), proxyMicrosPerRow: median(all.map((m) => m.proxyMicrosPerRow)) };
    };
    const [direct, pass, reveal] = targets.map((target) => summary(target.label)) as [Measurement, Measurement, Measurement];
    const described = WORKLOAD.columns.map((column) => `${column.kind} ${column.method}`).join(', ');
    process.stdout.write(`\nSELECT of ${ROWS} rows (${described}), median of ${ROUNDS} interleaved rounds\n`);
    process.stdout.write(`direct ${Math.round(direct.rowsPerSecond)} rows/s; tokens through pgveil ${Math.round(pass.rowsPerSecond)} rows/s ` +
      `(proxy CPU ${pass.proxyMicrosPerRow.toFixed(2)} µs/row); revealed ${Math.round(reveal.rowsPerSecond)} rows/s (proxy CPU ${reveal.proxyMicrosPerRow.toFixed(2)} µs/row)\n`);
    process.stdout.write(`reveal / pass: ${(reveal.rowsPerSecond / pass.rowsPerSecond).toFixed(2)} x rows/s, ` +
      `${(pass.proxyMicrosPerRow / reveal.proxyMicrosPerRow).toFixed(2)} x by the proxy's CPU per row; reveal / direct ${(reveal.rowsPerSecond / direct.rowsPerSecond).toFixed(2)} x rows/s\n`);
    // The same ratio taken within each round, where both targets met the same machine: steadier when its speed drifts.
    const passRounds = results.get(targets[1]?.label ?? '') ?? [];
    const perRound = (results.get(targets[2]?.label ?? '') ?? []).map((m, r) => m.rowsPerSecond / (passRounds[r]?.rowsPerSecond ?? Number.NaN)).sort((a, b) => a - b);
    process.stdout.write(`reveal / pass within each round: median ${median(perRound).toFixed(2)} x rows/s (rounds ${perRound[0]?.toFixed(2)}–${perRound.at(-1)?.toFixed(2)})\n`);
    const baselineRounds = results.get(targets[3]?.label ?? '');
    if (baselineRounds !== undefined) {
      const revealRounds = results.get(targets[2]?.label ?? '') ?? [];
      const cpu = revealRounds.map((m, r) => m.proxyMicrosPerRow / (baselineRounds[r]?.proxyMicrosPerRow ?? Number.NaN)).sort((a, b) => a - b);
      const speed = revealRounds.map((m, r) => m.rowsPerSecond / (baselineRounds[r]?.rowsPerSecond ?? Number.NaN)).sort((a, b) => a - b);
      process.stdout.write(`this build / baseline, reveal, within each round: proxy CPU per row ${median(cpu).toFixed(2)} x (rounds ${cpu[0]?.toFixed(2)}–${cpu.at(-1)?.toFixed(2)}), ` +
        `rows/s ${median(speed).toFixed(2)} x (rounds ${speed[0]?.toFixed(2)}–${speed.at(-1)?.toFixed(2)})\n`);
    }
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
  }
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

await main();
