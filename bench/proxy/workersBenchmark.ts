/**
 * `npm run bench:workers`: pgbench -S (-M prepared, -c 8 -j 2) through `pgveil serve` (the compiled dist/)
 * with proxy.workers 1 and with PGVEIL_BENCH_WORKERS (default 2), and directly against PostgreSQL,
 * interleaved round by round so machine noise hits all alike. Prints medians, the ratio of the two
 * pgveil runs, and the CPU per transaction of the whole pgveil process tree (primary + workers), with
 * the primary's own share (it accepts and hands over connections, then is out of the data path).
 *
 * Environment: PGVEIL_BENCH_SECONDS (default 15), PGVEIL_BENCH_ROUNDS (3), PGVEIL_BENCH_SCALE (10),
 * PGVEIL_BENCH_CLIENTS (8), PGVEIL_BENCH_WORKERS (2), PGVEIL_TEST_DATABASE_URL (an existing server).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseDocument } from 'yaml';
import { main as pgveil } from '../../src/cli/main.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { freePort, startTestPostgres } from '../../test/support/postgres.js';
import { cpuSeconds, median } from './benchProcesses.js';

const SECONDS = Number(process.env.PGVEIL_BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 3);
const SCALE = Number(process.env.PGVEIL_BENCH_SCALE ?? 10);
const CLIENTS = Number(process.env.PGVEIL_BENCH_CLIENTS ?? 8);
const WORKERS = Number(process.env.PGVEIL_BENCH_WORKERS ?? 2);
const run = promisify(execFile);

interface Serve { child: ChildProcess; port: number; pid: number }

/** The process and its children (the workers), from /proc. */
function processTree(pid: number): number[] {
  const children = `/proc/${pid}/task/${pid}/children`;
  const kids = existsSync(children) ? readFileSync(children, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
  return [pid, ...kids.flatMap(processTree)];
}

function treeCpu(pid: number): { total: number; primary: number } {
  const pids = processTree(pid);
  return { total: pids.reduce((sum, p) => sum + cpuSeconds(p), 0), primary: cpuSeconds(pid) };
}

async function startServe(workers: number, upstream: Record<string, unknown>, env: Record<string, string>): Promise<Serve & { password: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pgveil-bench-workers-'));
  const file = path.join(dir, 'pgveil.yaml');
  await copyFile('config/pgveil.example.yaml', file);
  let printed = '';
  const io = { out: (text: string) => { printed += `${text}\n`; }, err: (text: string) => { printed += text; }, env: {} };
  if (await pgveil(['account', 'add', '--config', file, '--email', 'bench@example.com', '--roles', 'bench'], io) !== 0) throw new Error(printed);
  const password = /password:\s*(\S+)/i.exec(printed)?.[1];
  if (password === undefined) throw new Error('no password printed by account add');
  const port = await freePort();
  const doc = parseDocument(await readFile(file, 'utf8'));
  doc.set('proxy', doc.createNode({ listen: { host: '127.0.0.1', port }, tls: { mode: 'disable' }, allowCleartextFromLoopback: true, upstream, workers }));
  await writeFile(file, doc.toString());
  const child = spawn(process.execPath, ['bin/pgveil.js', 'serve', '--config', file], {
    env: { ...process.env, ...env, PGVEIL_API_PORT: String(await freePort()), PGVEIL_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`pgveil serve exited with ${String(code)}:\n${out}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split('\n').some((line) => line.includes('"Postgres proxy listening"') && !line.includes('"worker"'))) resolve();
    });
  });
  return { child, port, pid: child.pid as number, password };
}

async function pgbench(env: Record<string, string>): Promise<{ tps: number; transactions: number }> {
  const { stdout } = await run('pgbench', ['-n', '-S', '-M', 'prepared', '-c', String(CLIENTS), '-j', '2', '-T', String(SECONDS)], {
    env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', ...env }, maxBuffer: 1 << 20,
  });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
  const transactions = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!tps || !transactions) throw new Error(`no tps in pgbench output:\n${stdout}`);
  return { tps: Number(tps[1]), transactions: Number(transactions[1]) };
}

async function main(): Promise<void> {
  const database = await startTestPostgres();
  const stops: Array<() => Promise<void>> = [() => database.stop()];
  try {
    const directEnv = { PGHOST: database.host, PGPORT: String(database.port), PGUSER: database.user, PGPASSWORD: database.password, PGDATABASE: database.database };
    process.stdout.write(`pgbench -i -s ${SCALE} ...\n`);
    await run('pgbench', ['-i', '-q', '-s', String(SCALE)], { env: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', ...directEnv } });
    const upstream = { host: database.host, port: database.port, user: database.user, sslmode: 'disable' };
    const env = { PGVEIL_MASTER_KEY: generateMasterKey(), PGVEIL_UPSTREAM_PASSWORD: database.password };
    const targets: { name: string; env: Record<string, string>; pid?: number }[] = [{ name: 'direct', env: directEnv }];
    for (const workers of [1, WORKERS]) {
      const serve = await startServe(workers, upstream, env);
      stops.unshift(async () => {
        const exited = new Promise((resolve) => serve.child.once('exit', resolve));
        serve.child.kill('SIGTERM');
        await exited;
      });
      targets.push({ name: `workers=${workers}`, pid: serve.pid, env: { PGHOST: '127.0.0.1', PGPORT: String(serve.port), PGUSER: 'bench@example.com', PGPASSWORD: serve.password, PGDATABASE: database.database } });
    }
    const tps = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const primaryCpu = new Map<string, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      const ordered = targets.map((_, i) => targets[(i + round) % targets.length] as (typeof targets)[number]);
      for (const target of ordered) {
        const before = target.pid ? treeCpu(target.pid) : { total: 0, primary: 0 };
        const result = await pgbench(target.env);
        tps.set(target.name, [...(tps.get(target.name) ?? []), result.tps]);
        let note = '';
        if (target.pid) {
          const after = treeCpu(target.pid);
          const micros = ((after.total - before.total) * 1e6) / result.transactions;
          const primaryMicros = ((after.primary - before.primary) * 1e6) / result.transactions;
          cpu.set(target.name, [...(cpu.get(target.name) ?? []), micros]);
          primaryCpu.set(target.name, [...(primaryCpu.get(target.name) ?? []), primaryMicros]);
          note = `   ${micros.toFixed(1)} µs CPU/tx (primary ${primaryMicros.toFixed(1)})`;
        }
        process.stdout.write(`round ${round} ${target.name.padEnd(10)} ${(result.tps / 1000).toFixed(1).padStart(7)} k tps${note}\n`);
      }
    }
    process.stdout.write('\nmedians:\n');
    for (const target of targets) {
      const cpuNote = cpu.has(target.name) ? `   ${median(cpu.get(target.name) ?? []).toFixed(1)} µs CPU/tx (primary ${median(primaryCpu.get(target.name) ?? []).toFixed(1)})` : '';
      process.stdout.write(`  ${target.name.padEnd(10)} ${(median(tps.get(target.name) ?? []) / 1000).toFixed(1).padStart(7)} k tps${cpuNote}\n`);
    }
    const one = median(tps.get('workers=1') ?? []);
    const many = median(tps.get(`workers=${WORKERS}`) ?? []);
    process.stdout.write(`  workers=${WORKERS} / workers=1: ${(many / one).toFixed(2)}x   pgveil workers=${WORKERS} / direct: ${(many / median(tps.get('direct') ?? [])).toFixed(2)}\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

await main();
