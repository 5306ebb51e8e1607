/**
 * Protected INSERT throughput: pgbench with a custom script inserting three protected bind
 * parameters (ssn fpe, card_number ccn fpe, phone tokenise), through a pgveil proxy process with
 * column policies, beside the same INSERT into an unprotected table of the same shape through the
 * same proxy, and directly into PostgreSQL. Target: protected ≥ 0.8 × unprotected.
 * Interleaved rounds, medians; the CPU the proxy spent per INSERT is printed too (steadier than tps
 * on a shared machine), and its socket system calls per INSERT (writes / reads, from /proc: one
 * write upstream and one to the client is the least an INSERT can cost). /proc counts only the
 * read/write family: on the native socket addon (send/recv) they are left out, shown as n/a.
 *
 * Run: npx tsx bench/proxyEnforcement/insertBenchmark.ts
 * Environment: PGVEIL_BENCH_SECONDS (default 10), PGVEIL_BENCH_ROUNDS (3), PGVEIL_BENCH_CLIENTS ("8,1":
 * each client count is a separate series; 1 client measures latency, 8 the proxy's throughput),
 * PGVEIL_BENCH_MODES ("prepared,extended": pgbench query modes), PGVEIL_BENCH_WARMUP (default 2: seconds
 * each case runs unrecorded first, so that the proxy's first connections and compilation are not
 * measured), PGVEIL_BENCH_CASES (e.g. "protected": only the cases whose label contains one of these
 * words, to profile one; the ratio lines need all three), PGVEIL_TEST_DATABASE_URL (an existing server
 * instead of an embedded one), PGVEIL_BENCH_BASELINE_DIST (another build's dist/, e.g. a worktree of
 * the last commit: its proxy runs as a fourth case, the protected INSERT alternated with the others,
 * and this build / baseline is printed per series — steadier than two runs on a machine whose speed drifts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startTestPostgres } from '../../test/support/postgres.js';
import { cpuSplit, ioSyscalls, median, startProcess } from '../proxy/benchProcesses.js';

const SECONDS = Number(process.env.PGVEIL_BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 3);
const CLIENT_COUNTS = (process.env.PGVEIL_BENCH_CLIENTS ?? '8,1').split(',').map(Number);
const MODES = (process.env.PGVEIL_BENCH_MODES ?? 'prepared,extended').split(',');
const WARMUP_SECONDS = Number(process.env.PGVEIL_BENCH_WARMUP ?? 2);
const ACCOUNT = { email: 'bench@example.com', password: 'bench-password' };
const run = promisify(execFile);

const TABLES = `
CREATE TABLE people_protected (id bigserial PRIMARY KEY, ssn text, card_number text, phone text, created_at timestamptz DEFAULT now());
CREATE TABLE people_plain (LIKE people_protected INCLUDING ALL);
`;

const POLICIES = `
columns:
  public.people_protected.ssn: { kind: ssn, method: fpe, scope: people, reveal: { bench: plaintext } }
  public.people_protected.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { bench: plaintext } }
  public.people_protected.phone: { kind: numeric, method: tokenise, scope: people, reveal: { bench: plaintext } }
`;

/** pgbench variables are numbers; each is bound as a text parameter of its column. */
const script = (table: string): string => `\\set ssn random(100000000, 999999999)
\\set card random(4000000000000000, 4999999999999999)
\\set phone random(2000000000, 9999999999)
INSERT INTO ${table} (ssn, card_number, phone) VALUES (:ssn, :card, :phone);
`;

interface Case {
  label: string;
  env: Record<string, string>;
  scriptFile: string;
  proxyPid?: number;
}

async function pgbench(target: Case, mode: string, clients: number, seconds = SECONDS): Promise<{ tps: number; transactions: number }> {
  const args = ['-n', '-M', mode, '-c', String(clients), '-j', String(Math.min(2, clients)), '-T', String(seconds), '-f', target.scriptFile];
  const { stdout } = await run('pgbench', args, {
    env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', ...target.env },
    maxBuffer: 1 << 20,
  });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
  const transactions = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!tps || !transactions) throw new Error(`no tps in pgbench output for ${target.label}:\n${stdout}`);
  return { tps: Number(tps[1]), transactions: Number(transactions[1]) };
}

async function main(): Promise<void> {
  const database = await startTestPostgres();
  const folder = await mkdtemp(path.join(tmpdir(), 'pgveil-insert-bench-'));
  const cleanup: Array<() => Promise<void>> = [() => database.stop(), () => rm(folder, { recursive: true, force: true })];
  try {
    const setup = new pg.Client({ connectionString: database.url });
    await setup.connect();
    await setup.query(TABLES);
    const policiesFile = path.join(folder, 'policies.yaml');
    await writeFile(policiesFile, POLICIES);
    const scripts = { plain: path.join(folder, 'plain.sql'), protected: path.join(folder, 'protected.sql') };
    await writeFile(scripts.plain, script('people_plain'));
    await writeFile(scripts.protected, script('people_protected'));

    const upstream = { host: database.host, port: database.port, user: database.user, password: database.password, sslmode: 'disable' as const };
    const proxy = await startProcess('../proxy/proxyProcess.ts', {
      PGVEIL_BENCH_PROXY: JSON.stringify({
        upstream, databases: { bench: database.database }, account: ACCOUNT, policiesFile, masterKeyHex: randomBytes(32).toString('hex'),
      }),
    });
    cleanup.unshift(() => proxy.stop());
    const baselineDist = process.env.PGVEIL_BENCH_BASELINE_DIST;
    const baselineProxy = baselineDist === undefined ? undefined : await startProcess('../proxy/proxyProcess.ts', {
      PGVEIL_BENCH_DIST: baselineDist,
      PGVEIL_BENCH_PROXY: JSON.stringify({
        upstream, databases: { bench: database.database }, account: ACCOUNT, policiesFile, masterKeyHex: randomBytes(32).toString('hex'),
      }),
    });
    if (baselineProxy !== undefined) cleanup.unshift(() => baselineProxy.stop());
    const directEnv = { PGHOST: database.host, PGPORT: String(database.port), PGUSER: database.user, PGPASSWORD: database.password, PGDATABASE: database.database };
    const proxyEnv = { PGHOST: '127.0.0.1', PGPORT: String(proxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: 'bench' };
    const cases: Case[] = [
      { label: 'direct, plain table', env: directEnv, scriptFile: scripts.plain },
      { label: 'pgveil, plain table', env: proxyEnv, scriptFile: scripts.plain, proxyPid: proxy.pid },
      { label: 'pgveil, protected table', env: proxyEnv, scriptFile: scripts.protected, proxyPid: proxy.pid },
    ];
    const baselineCase: Case | undefined = baselineProxy === undefined ? undefined : {
      label: 'baseline, protected table', env: { ...proxyEnv, PGPORT: String(baselineProxy.port) }, scriptFile: scripts.protected, proxyPid: baselineProxy.pid,
    };
    const only = process.env.PGVEIL_BENCH_CASES?.split(',');
    if (only !== undefined) cases.splice(0, cases.length, ...cases.filter((target) => only.some((word) => target.label.includes(word))));
    // Measured in the same rounds, but outside `cases`: the summary's columns stay the three.
    const measured = baselineCase === undefined ? cases : [...cases, baselineCase];
    const series = CLIENT_COUNTS.flatMap((clients) => MODES.map((mode) => ({ mode, clients, name: `${mode} -c ${clients}` })));
    if (WARMUP_SECONDS > 0) for (const target of measured) await pgbench(target, MODES[0] ?? 'prepared', Math.max(...CLIENT_COUNTS), WARMUP_SECONDS);
    const tps = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const writes = new Map<string, number[]>();
    const add = (map: Map<string, number[]>, key: string, value: number): void => void map.set(key, [...(map.get(key) ?? []), value]);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const { mode, clients, name } of series) {
        for (let i = 0; i < measured.length; i++) {
          const target = measured[(i + round) % measured.length] as Case; // rotate, so no case always runs first
          const cpuBefore = target.proxyPid ? cpuSplit(target.proxyPid) : { user: 0, system: 0 };
          const ioBefore = target.proxyPid ? ioSyscalls(target.proxyPid) : { reads: 0, writes: 0 };
          const result = await pgbench(target, mode, clients);
          const key = `${target.label}/${name}`;
          add(tps, key, result.tps);
          let note = '';
          if (target.proxyPid) {
            const cpuAfter = cpuSplit(target.proxyPid);
            const microsOf = (seconds: number): number => (seconds * 1e6) / result.transactions;
            const micros = microsOf(cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system);
            add(cpu, key, micros);
            const io = ioSyscalls(target.proxyPid);
            const perInsert = (count: number): string => (count / result.transactions).toFixed(2);
            // Fewer reads than INSERTs: the session's sockets use send/recv (the native addon), which /proc does not count.
            const counted = io.reads - ioBefore.reads >= result.transactions;
            if (counted) add(writes, key, (io.writes - ioBefore.writes) / result.transactions);
            const calls = counted ? `, syscalls ${perInsert(io.writes - ioBefore.writes)} writes ${perInsert(io.reads - ioBefore.reads)} reads/insert` : '';
            note = `   proxy CPU ${micros.toFixed(0)} µs/insert (user ${microsOf(cpuAfter.user - cpuBefore.user).toFixed(0)}, system ${microsOf(cpuAfter.system - cpuBefore.system).toFixed(0)})${calls}`;
          }
          process.stdout.write(`round ${round} ${name.padEnd(16)} ${target.label.padEnd(24)} ${result.tps.toFixed(0).padStart(7)} tps${note}\n`);
        }
      }
    }

    const stored = await setup.query<{ ssn: string }>('SELECT ssn FROM people_protected LIMIT 1');
    process.stdout.write(`\npgbench -f (INSERT, 3 protected bind parameters) -T ${SECONDS}, median of ${ROUNDS} interleaved rounds\n`);
    process.stdout.write('series           direct     pgveil plain  pgveil protected  protected/plain  protected/direct  proxy CPU plain → protected  writes/insert plain → protected\n');
    // PGVEIL_BENCH_CASES may have left fewer cases: the rounds above are the whole output then.
    for (const { name } of cases.length === 3 ? series : []) {
      const [d, p, v] = cases.map((c) => median(tps.get(`${c.label}/${name}`) ?? []));
      const [cp, cv] = cases.slice(1).map((c) => median(cpu.get(`${c.label}/${name}`) ?? []));
      const [wp, wv] = cases.slice(1).map((c) => {
        const counts = writes.get(`${c.label}/${name}`) ?? [];
        return counts.length === 0 ? 'n/a' : median(counts).toFixed(2);
      });
      process.stdout.write(`${name.padEnd(15)} ${(d as number).toFixed(0).padStart(7)}    ${(p as number).toFixed(0).padStart(9)}     ${(v as number).toFixed(0).padStart(12)}  ` +
        `${((v as number) / (p as number)).toFixed(2).padStart(13)} x  ${((v as number) / (d as number)).toFixed(2).padStart(14)} x   ${(cp as number).toFixed(0)} → ${(cv as number).toFixed(0)} µs` +
        `${''.padStart(14)}${wp} → ${wv}\n`);
    }
    if (baselineCase !== undefined) {
      process.stdout.write('this build / the baseline build, protected table (median of the per-round ratios):\n');
      for (const { name } of series) {
        const perRound = (values: Map<string, number[]>): string => {
          const ours = values.get(`pgveil, protected table/${name}`) ?? [];
          const theirs = values.get(`${baselineCase.label}/${name}`) ?? [];
          const ratios = ours.map((value, i) => value / (theirs[i] as number)).sort((a, b) => a - b);
          return `${median(ratios).toFixed(2)} x (rounds ${(ratios[0] ?? NaN).toFixed(2)}–${(ratios[ratios.length - 1] ?? NaN).toFixed(2)})`;
        };
        process.stdout.write(`${name.padEnd(15)} tps ${perRound(tps)}   proxy CPU per insert ${perRound(cpu)}\n`);
      }
    }
    process.stdout.write(`(the protected table holds protected values only: a stored ssn is ${stored.rows[0]?.ssn.length ?? 0} digits of fpe output)\n`);
    await setup.end();
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
  }
}

await main();
