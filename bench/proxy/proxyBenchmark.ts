/**
 * `npm run bench:proxy`: pgbench -S (-M prepared and -M simple, -c 8 -j 2) against PostgreSQL
 * directly, through PgBouncer (session mode), through pgveil (its sessions' sockets on the native
 * socket addon, as by default, and on Node's streams: pgveil-streams), through a bare Node byte pipe (the
 * floor for a relay on Node's net) and through a byte pipe in C inside Node's event loop (the floor
 * for a native byte path, when `npm run bench:native-pipe` built it), interleaved round by round so
 * that machine noise hits all alike;
 * then a 2-million-row SELECT streamed through pgveil while its RSS is sampled. Prints medians,
 * ratios, and the CPU each middle process spent per transaction (user and system apart, with the
 * proxy's read and write system calls). pgveil runs from the compiled dist/ (see ../compiled.ts).
 *
 * Environment: PGVEIL_BENCH_SECONDS (default 15), PGVEIL_BENCH_ROUNDS (3), PGVEIL_BENCH_SCALE (10),
 * PGVEIL_BENCH_ROWS (2000000), PGVEIL_BENCH_TARGETS (e.g. "pgveil,pgveil+policy": only those; the
 * ratio lines need their targets), PGVEIL_TEST_DATABASE_URL (an existing server instead of an embedded one),
 * PGVEIL_BENCH_UPSTREAM=socket (PgBouncer, pgveil and the pipe reach PostgreSQL over its Unix-domain
 * socket, as when they run on the database host; embedded server only), PGVEIL_BENCH_BASELINE_DIST
 * (another build's dist/, e.g. a worktree of the last commit: its proxy without and with the same
 * policy file are the targets baseline and baseline+policy, alternated with the others, and this
 * build / baseline is printed for each).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startTestPostgres } from '../../test/support/postgres.js';
import { startPgBouncer } from './pgbouncerProcess.js';
import { streamLargeResult } from './largeResult.js';
import { cpuSplit, ioSyscalls, median, startProcess } from './benchProcesses.js';

const SECONDS = Number(process.env.PGVEIL_BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 3);
const SCALE = Number(process.env.PGVEIL_BENCH_SCALE ?? 10);
const ROWS = Number(process.env.PGVEIL_BENCH_ROWS ?? 2_000_000);
const ACCOUNT = { email: 'bench@example.com', password: 'bench-password' };
const run = promisify(execFile);

type TargetName = 'direct' | 'pgbouncer' | 'pgveil' | 'pgveil-streams' | 'pgveil+policy' | 'baseline' | 'baseline+policy' | 'node-pipe' | 'native-pipe' | 'native-io';

/** Built by `npm run bench:native-pipe` (bench:proxy runs it first); without it the native-pipe row is left out. */
const NATIVE_PIPE_ADDON = new URL('./nativePipe/build/Release/native_pipe.node', import.meta.url);

/** Column policies on a table pgbench never touches: what a policy file costs queries that touch no protected column. */
const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: people, reveal: { bench: plaintext } }
  public.customers.email: { kind: email, method: tokenise, scope: people, reveal: { bench: plaintext } }
`;

interface Target {
  name: TargetName;
  env: Record<string, string>;
  /** The middle process whose CPU time per transaction is measured. */
  pid?: number;
}

interface PgbenchRun {
  tps: number;
  transactions: number;
}

async function pgbench(target: Target, mode: 'prepared' | 'simple'): Promise<PgbenchRun> {
  const { stdout } = await run('pgbench', ['-n', '-S', '-M', mode, '-c', '8', '-j', '2', '-T', String(SECONDS)], {
    // Neither SSL nor GSS encryption is negotiated: the pipes pass the login through unparsed.
    env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', PGGSSENCMODE: 'disable', ...target.env },
    maxBuffer: 1 << 20,
  });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
  const transactions = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!tps || !transactions) throw new Error(`no tps in pgbench output for ${target.name}:\n${stdout}`);
  return { tps: Number(tps[1]), transactions: Number(transactions[1]) };
}

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

const format = (tps: number): string => `${(tps / 1000).toFixed(1)} k`.padStart(9);

async function main(): Promise<void> {
  const database = await startTestPostgres();
  const pgveilDatabase = 'bench';
  const cleanup: Array<() => Promise<void>> = [() => database.stop()];
  try {
    const directEnv = { PGHOST: database.host, PGPORT: String(database.port), PGUSER: database.user, PGPASSWORD: database.password, PGDATABASE: database.database };
    process.stdout.write(`pgbench -i -s ${SCALE} ...\n`);
    await run('pgbench', ['-i', '-q', '-s', String(SCALE)], { env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', ...directEnv } });

    const overSocket = process.env.PGVEIL_BENCH_UPSTREAM === 'socket';
    if (overSocket && !database.socketDir) throw new Error('PGVEIL_BENCH_UPSTREAM=socket needs the embedded server');
    const upstreamHost = overSocket ? (database.socketDir as string) : database.host;
    const upstream = { host: upstreamHost, port: database.port, user: database.user, password: database.password, sslmode: 'disable' as const };
    const plainConfig = JSON.stringify({ upstream, databases: { [pgveilDatabase]: database.database }, account: ACCOUNT });
    const proxy = await startProcess('./proxyProcess.ts', { PGVEIL_BENCH_PROXY: plainConfig });
    cleanup.unshift(() => proxy.stop());
    const streamsProxy = await startProcess('./proxyProcess.ts', {
      PGVEIL_BENCH_PROXY: JSON.stringify({ upstream, databases: { [pgveilDatabase]: database.database }, account: ACCOUNT, nativeSocketIo: false }),
    });
    cleanup.unshift(() => streamsProxy.stop());
    await run('psql', ['-q', '-c', 'CREATE TABLE customers (id bigserial PRIMARY KEY, ssn text, email text)'], { env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', ...directEnv } });
    const policyDir = await mkdtemp(path.join(tmpdir(), 'pgveil-bench-'));
    cleanup.push(() => rm(policyDir, { recursive: true, force: true }));
    const policiesFile = path.join(policyDir, 'policies.yaml');
    await writeFile(policiesFile, POLICIES);
    const policyConfig = JSON.stringify({
      upstream, databases: { [pgveilDatabase]: database.database }, account: ACCOUNT, policiesFile, masterKeyHex: randomBytes(32).toString('hex'),
    });
    const policyProxy = await startProcess('./proxyProcess.ts', { PGVEIL_BENCH_PROXY: policyConfig });
    cleanup.unshift(() => policyProxy.stop());
    const baselineDist = process.env.PGVEIL_BENCH_BASELINE_DIST;
    const baselineProxy = baselineDist === undefined ? undefined : await startProcess('./proxyProcess.ts', { PGVEIL_BENCH_PROXY: policyConfig, PGVEIL_BENCH_DIST: baselineDist });
    if (baselineProxy !== undefined) cleanup.unshift(() => baselineProxy.stop());
    const plainBaselineProxy = baselineDist === undefined ? undefined : await startProcess('./proxyProcess.ts', { PGVEIL_BENCH_PROXY: plainConfig, PGVEIL_BENCH_DIST: baselineDist });
    if (plainBaselineProxy !== undefined) cleanup.unshift(() => plainBaselineProxy.stop());
    const pipe = await startProcess('./nodePipeProcess.ts', { PG_HOST: upstreamHost, PG_PORT: String(database.port) });
    cleanup.unshift(() => pipe.stop());
    const nativePipe = existsSync(NATIVE_PIPE_ADDON) ? await startProcess('./nativePipeProcess.ts', { PG_HOST: upstreamHost, PG_PORT: String(database.port) }) : undefined;
    if (nativePipe !== undefined) cleanup.unshift(() => nativePipe.stop());
    const nativeIo = nativePipe === undefined ? undefined : await startProcess('./nativePipeProcess.ts', { PG_HOST: upstreamHost, PG_PORT: String(database.port), PG_FRAMING: 'javascript' });
    if (nativeIo !== undefined) cleanup.unshift(() => nativeIo.stop());
    const bouncer = await startPgBouncer({
      ...upstream, database: database.database, listenPort: await freePort(),
      clientUser: 'bench', clientPassword: 'bench-password', clientDatabase: pgveilDatabase,
    });
    cleanup.unshift(() => bouncer.stop());

    const targets: Target[] = [
      { name: 'direct', env: directEnv },
      { name: 'pgbouncer', pid: bouncer.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(bouncer.port), PGUSER: 'bench', PGPASSWORD: 'bench-password', PGDATABASE: pgveilDatabase } },
      { name: 'pgveil', pid: proxy.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(proxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: pgveilDatabase } },
      { name: 'pgveil-streams', pid: streamsProxy.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(streamsProxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: pgveilDatabase } },
      { name: 'pgveil+policy', pid: policyProxy.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(policyProxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: pgveilDatabase } },
      { name: 'node-pipe', pid: pipe.pid, env: { ...directEnv, PGHOST: '127.0.0.1', PGPORT: String(pipe.port) } },
    ];
    if (nativePipe !== undefined) targets.push({ name: 'native-pipe', pid: nativePipe.pid, env: { ...directEnv, PGHOST: '127.0.0.1', PGPORT: String(nativePipe.port) } });
    if (nativeIo !== undefined) targets.push({ name: 'native-io', pid: nativeIo.pid, env: { ...directEnv, PGHOST: '127.0.0.1', PGPORT: String(nativeIo.port) } });
    if (baselineProxy !== undefined && plainBaselineProxy !== undefined) {
      targets.push({ name: 'baseline', pid: plainBaselineProxy.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(plainBaselineProxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: pgveilDatabase } });
      targets.push({ name: 'baseline+policy', pid: baselineProxy.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(baselineProxy.port), PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: pgveilDatabase } });
    }
    const only = process.env.PGVEIL_BENCH_TARGETS?.split(',');
    if (only !== undefined) targets.splice(0, targets.length, ...targets.filter((target) => only.includes(target.name)));
    const modes = ['prepared', 'simple'] as const;
    const results = new Map<string, number[]>();
    const cpuPerTransaction = new Map<string, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of modes) {
        // Rotate the order each round so no target always runs first.
        const ordered = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
        for (const target of ordered) {
          const cpuBefore = target.pid ? cpuSplit(target.pid) : { user: 0, system: 0 };
          const ioBefore = target.pid ? ioSyscalls(target.pid) : { reads: 0, writes: 0 };
          const { tps, transactions } = await pgbench(target, mode);
          const key = `${target.name}/${mode}`;
          results.set(key, [...(results.get(key) ?? []), tps]);
          let cpuNote = '';
          if (target.pid) {
            const cpu = cpuSplit(target.pid);
            const microsOf = (seconds: number): number => (seconds * 1e6) / transactions;
            const micros = microsOf(cpu.user + cpu.system - cpuBefore.user - cpuBefore.system);
            cpuPerTransaction.set(key, [...(cpuPerTransaction.get(key) ?? []), micros]);
            const io = ioSyscalls(target.pid);
            const perTransaction = (count: number): string => (count / transactions).toFixed(1);
            // recv/send (PgBouncer's, the native pipes') are not in these counters, only the read/write family: shown where there are any.
            const calls = io.reads - ioBefore.reads >= transactions ? `, ${perTransaction(io.reads - ioBefore.reads)} reads + ${perTransaction(io.writes - ioBefore.writes)} writes` : '';
            cpuNote = `   ${micros.toFixed(1)} µs CPU per transaction (user ${microsOf(cpu.user - cpuBefore.user).toFixed(1)}, system ${microsOf(cpu.system - cpuBefore.system).toFixed(1)})${calls}`;
          }
          process.stdout.write(`round ${round} ${mode.padEnd(8)} ${target.name.padEnd(13)} ${format(tps)} tps${cpuNote}\n`);
        }
      }
    }

    process.stdout.write(`\npgbench -S -c 8 -j 2 -T ${SECONDS}, scale ${SCALE}, median of ${ROUNDS} interleaved rounds, upstream over ${overSocket ? 'the Unix socket' : 'TCP'}\n`);
    process.stdout.write('mode       direct     pgbouncer  pgveil     node-pipe  pgveil/pgbouncer  pgveil/direct  pgveil/node-pipe\n');
    for (const mode of modes) {
      const [d, b, v, p] = (['direct', 'pgbouncer', 'pgveil', 'node-pipe'] as const).map((name) => median(results.get(`${name}/${mode}`) ?? []) as number);
      const ratio = (x: number, y: number): string => `${(x / y).toFixed(2).padStart(10)} x`;
      process.stdout.write(`${mode.padEnd(9)} ${format(d as number)}  ${format(b as number)}  ${format(v as number)}  ${format(p as number)}  ${ratio(v as number, b as number)}  ${ratio(v as number, d as number)}  ${ratio(v as number, p as number)}\n`);
    }
    for (const mode of modes) {
      const bouncer = median(results.get(`pgbouncer/${mode}`) ?? []);
      const natives = (['native-pipe', 'native-io'] as const).flatMap((name) => {
        const tps = median(results.get(`${name}/${mode}`) ?? []);
        return Number.isFinite(tps) ? [`${name} ${format(tps)} = ${(tps / bouncer).toFixed(2)} x pgbouncer`] : [];
      });
      if (natives.length > 0) process.stdout.write(`${mode.padEnd(9)} socket I/O in C, tps: ${natives.join('   ')}\n`);
      const [native, streams] = (['pgveil', 'pgveil-streams'] as const).map((name) => median(results.get(`${name}/${mode}`) ?? []));
      if (Number.isFinite(streams)) {
        process.stdout.write(`${mode.padEnd(9)} pgveil on Node's streams (nativeSocketIo: false) ${format(streams as number)} = ${((streams as number) / bouncer).toFixed(2)} x pgbouncer; pgveil / pgveil-streams ${((native as number) / (streams as number)).toFixed(2)} x\n`);
      }
    }
    process.stdout.write('with a policy file loaded (pgbench touches no protected table) vs none, same proxy harness:\n');
    for (const mode of modes) {
      const [v, w] = (['pgveil', 'pgveil+policy'] as const).map((name) => median(results.get(`${name}/${mode}`) ?? []) as number);
      const [cv, cw] = (['pgveil', 'pgveil+policy'] as const).map((name) => median(cpuPerTransaction.get(`${name}/${mode}`) ?? []) as number);
      // Each round's own ratio too: their spread says how far this run can resolve the median.
      const plain = results.get(`pgveil/${mode}`) ?? [];
      const rounds = (results.get(`pgveil+policy/${mode}`) ?? []).map((tps, i) => tps / (plain[i] as number)).sort((a, b) => a - b);
      const spread = rounds.length > 1 ? ` (rounds ${(rounds[0] as number).toFixed(2)}–${(rounds[rounds.length - 1] as number).toFixed(2)})` : '';
      process.stdout.write(`${mode.padEnd(9)} ${format(w as number)} vs ${format(v as number)} tps = ${((w as number) / (v as number)).toFixed(2)} x${spread}   CPU ${(cw as number).toFixed(1)} vs ${(cv as number).toFixed(1)} µs per transaction\n`);
    }
    if (baselineProxy !== undefined) {
      process.stdout.write('this build / the baseline build, without and with the policy file (median of the per-round ratios):\n');
      for (const [ours, theirs] of [['pgveil', 'baseline'], ['pgveil+policy', 'baseline+policy']] as const) {
        for (const mode of modes) {
          const perRound = (values: Map<string, number[]>): string => {
            const mine = values.get(`${ours}/${mode}`) ?? [];
            const base = values.get(`${theirs}/${mode}`) ?? [];
            return median(mine.map((value, i) => value / (base[i] as number))).toFixed(2);
          };
          process.stdout.write(`${ours.padEnd(14)} ${mode.padEnd(9)} tps ${perRound(results)} x   CPU per transaction ${perRound(cpuPerTransaction)} x\n`);
        }
      }
    }
    process.stdout.write('CPU of the middle process per transaction (median, user + system; steadier than tps on a busy machine):\n');
    for (const mode of modes) {
      const [b, v, w, p, s] = (['pgbouncer', 'pgveil', 'pgveil+policy', 'node-pipe', 'pgveil-streams'] as const).map((name) => median(cpuPerTransaction.get(`${name}/${mode}`) ?? []) as number);
      const nativeNote = (['native-pipe', 'native-io'] as const).map((name) => {
        const micros = median(cpuPerTransaction.get(`${name}/${mode}`) ?? []);
        return Number.isFinite(micros) ? `   ${name} ${micros.toFixed(1)} µs (${(micros / (b as number)).toFixed(2)} x)` : '';
      }).join('');
      const streamsNote = Number.isFinite(s) ? `   pgveil-streams ${(s as number).toFixed(1)} µs (${((s as number) / (b as number)).toFixed(2)} x)` : '';
      process.stdout.write(`${mode.padEnd(9)} pgbouncer ${(b as number).toFixed(1)} µs   pgveil ${(v as number).toFixed(1)} µs (${((v as number) / (b as number)).toFixed(2)} x pgbouncer)${streamsNote}   pgveil+policy ${(w as number).toFixed(1)} µs   node-pipe ${(p as number).toFixed(1)} µs (${((p as number) / (b as number)).toFixed(2)} x)${nativeNote}\n`);
    }

    const streamed = await streamLargeResult({ port: proxy.port, user: ACCOUNT.email, password: ACCOUNT.password, database: pgveilDatabase }, ROWS, () => rssMiB(proxy.pid, 'VmRSS'));
    process.stdout.write(`\n${ROWS} rows (${(streamed.bytes / 2 ** 20).toFixed(0)} MiB) streamed through pgveil in ${streamed.seconds.toFixed(1)} s: ` +
      `proxy RSS max ${streamed.maxRssMiB.toFixed(0)} MiB during the stream, peak (VmHWM) ${rssMiB(proxy.pid, 'VmHWM').toFixed(0)} MiB\n`);
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
  }
}

await main();
