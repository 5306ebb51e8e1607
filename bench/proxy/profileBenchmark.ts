/**
 * `npm run bench:profile`: where the proxy's CPU goes per transaction, natively and at steady state.
 * Each proxy (without and with the policy file of proxyBenchmark.ts, which pgbench never touches)
 * runs pgbench -S -c 8 for a warm-up, then again while `perf record` samples it; the samples become
 * microseconds per transaction by part (the kernel, pgveil's JavaScript, Node's JavaScript, V8's
 * builtins and runtime, Node's C++, libuv, libc) and by function, the two proxies side by side, then
 * the user-space functions that cost the proxy without a policy file most.
 *
 * Why natively and after a warm-up: under valgrind (bench:instructions) the JIT tiers up far later
 * than here, so its counts hold baseline code and compiles; natively the compiles settle within the
 * first seconds of load (checked with --trace-opt: none after 15 s). JavaScript is named from V8's
 * perf map (--perf-basic-prof), which lists every code object ever made: code moved or collected
 * leaves entries whose addresses later code reuses, and perf takes the first that matches. Read after
 * the warm-up, the map is cut down to the newest entry for each address before the report: the code
 * that ran while sampling. What a sample costs is the machine's (perf's cpu-clock, a tick per
 * millisecond per CPU at -F 1000).
 *
 * Needs perf (Debian package linux-perf) and permission to profile another process (root, or
 * kernel.perf_event_paranoid ≤ 1). Environment: PGVEIL_BENCH_WARMUP_SECONDS (default 15),
 * PGVEIL_BENCH_SECONDS (10), PGVEIL_BENCH_MODES ("prepared"; "prepared,simple"), PGVEIL_BENCH_TOP
 * (25 functions), PGVEIL_TEST_DATABASE_URL (an existing server instead of an embedded one).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess } from './benchProcesses.js';
import { startPolicyBench } from './policyBenchSetup.js';

const WARMUP_SECONDS = Number(process.env.PGVEIL_BENCH_WARMUP_SECONDS ?? 15);
const SECONDS = Number(process.env.PGVEIL_BENCH_SECONDS ?? 10);
const MODES = (process.env.PGVEIL_BENCH_MODES ?? 'prepared').split(',');
const TOP = Number(process.env.PGVEIL_BENCH_TOP ?? 25);
const run = promisify(execFile);

/** Microseconds per transaction by function name. */
type Profile = Map<string, number>;

/** Keeps, for each address, only the newest perf map entry that covers it (later entries replace the code earlier ones named). */
function newestPerfMapEntries(map: string): string {
  let entries: Array<{ start: number; end: number; line: string }> = [];
  for (const line of map.split('\n')) {
    const [start, size] = line.split(' ');
    if (!start || !size) continue;
    const from = parseInt(start, 16);
    const to = from + parseInt(size, 16);
    entries = entries.filter((entry) => entry.end <= from || entry.start >= to);
    entries.push({ start: from, end: to, line });
  }
  return entries.sort((a, b) => a.start - b.start).map((entry) => `${entry.line}\n`).join('');
}

/** The part of the process a symbol belongs to, by perf's name for it. */
function partOf(symbol: string, kernel: boolean): string {
  if (kernel) return 'kernel';
  if (symbol.startsWith('JS:')) return /\/dist\/(?!bench\/)/.test(symbol) ? 'JavaScript, pgveil' : 'JavaScript, Node';
  if (symbol.startsWith('Builtins_')) return 'V8 builtins';
  if (symbol.startsWith('v8::') || symbol.startsWith('cppgc::')) return 'V8 runtime (GC included)';
  if (symbol.startsWith('node::')) return "Node's C++";
  if (symbol.startsWith('uv_') || symbol.startsWith('uv__')) return 'libuv';
  return 'libc and the rest';
}

async function profileProxy(config: string, mode: string, env: Record<string, string>): Promise<{ functions: Profile; parts: Profile; userFunctions: Profile; transactions: number }> {
  const proxy = await startProcess('./proxyProcess.ts', { PGVEIL_BENCH_PROXY: config }, ['--perf-basic-prof']);
  const dir = await mkdtemp(path.join(tmpdir(), 'pgveil-bench-perf-'));
  // V8 writes its map there, whatever TMPDIR says.
  const perfMap = `/tmp/perf-${proxy.pid}.map`;
  try {
    const pgbenchEnv = { ...env, PGPORT: String(proxy.port) };
    const pgbench = (seconds: number) => run('pgbench', ['-n', '-S', '-M', mode, '-c', '8', '-j', '2', '-T', String(seconds)], { env: pgbenchEnv, maxBuffer: 1 << 20 });
    await pgbench(WARMUP_SECONDS);
    const data = path.join(dir, 'perf.data');
    const recorder = spawn('perf', ['record', '-F', '1000', '-p', String(proxy.pid), '-o', data, '--', 'sleep', String(SECONDS)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let recorderErrors = '';
    recorder.stderr.on('data', (chunk: Buffer) => { recorderErrors += chunk.toString(); });
    const recorded = new Promise<number | null>((resolve) => recorder.once('exit', resolve));
    const { stdout } = await pgbench(SECONDS);
    const code = await recorded;
    if (code !== 0) throw new Error(`perf record failed (${code}): ${recorderErrors.slice(-500)}`);
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
    writeFileSync(perfMap, newestPerfMapEntries(readFileSync(perfMap, 'utf8')));
    const report = await run('perf', ['report', '-i', data, '--stdio', '--no-children', '--sort', 'sym', '-g', 'none', '-F', 'overhead,sym', '--percent-limit', '0.01'], { maxBuffer: 64 << 20 });
    const eventCount = Number(/Event count \(approx\.\): (\d+)/.exec(report.stdout)?.[1]);
    const functions: Profile = new Map();
    const parts: Profile = new Map();
    const userFunctions: Profile = new Map();
    for (const line of report.stdout.split('\n')) {
      const match = /^\s*([\d.]+)%\s+\[(.)\]\s+(.+)$/.exec(line);
      if (!match) continue;
      // cpu-clock counts nanoseconds: a share of it, per transaction, in microseconds.
      const micros = (Number(match[1]) / 100) * eventCount / 1000 / transactions;
      const symbol = (match[3] as string).trim();
      const name = symbol.replace(/file:\/\/\/\S*\/dist\//, 'dist/').replace(/:\d+:\d+$/, '');
      functions.set(name, (functions.get(name) ?? 0) + micros);
      const part = partOf(symbol, match[2] === 'k');
      parts.set(part, (parts.get(part) ?? 0) + micros);
      if (part !== 'kernel') userFunctions.set(name, (userFunctions.get(name) ?? 0) + micros);
    }
    return { functions, parts, userFunctions, transactions };
  } finally {
    await proxy.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(perfMap, { force: true });
  }
}

function printSideBySide(title: string, none: Profile, policy: Profile, limit: number): void {
  const rows = [...new Set([...none.keys(), ...policy.keys()])]
    .map((name) => ({ name, none: none.get(name) ?? 0, policy: policy.get(name) ?? 0 }))
    .sort((a, b) => Math.abs(b.policy - b.none) - Math.abs(a.policy - a.none))
    .slice(0, limit);
  process.stdout.write(`  ${title}\n`);
  for (const row of rows) {
    process.stdout.write(`  ${row.none.toFixed(2).padStart(7)} → ${row.policy.toFixed(2).padStart(6)}  ${(row.policy - row.none >= 0 ? '+' : '') + (row.policy - row.none).toFixed(2)}  ${row.name.slice(0, 100)}\n`);
  }
}

function printLargest(title: string, profile: Profile, limit: number): void {
  process.stdout.write(`  ${title}\n`);
  for (const [name, micros] of [...profile].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    process.stdout.write(`  ${micros.toFixed(2).padStart(7)}  ${name.slice(0, 100)}\n`);
  }
}

async function main(): Promise<void> {
  try {
    await run('perf', ['--version']);
  } catch {
    throw new Error('bench:profile needs perf (Debian package linux-perf)');
  }
  const bench = await startPolicyBench(10);
  try {
    const { plain, withPolicy, pgbenchEnv: env } = bench;
    process.stdout.write(`pgbench -S -c 8 -j 2: ${WARMUP_SECONDS} s of warm-up, then ${SECONDS} s sampled by perf; µs of the proxy's CPU per transaction\n`);
    for (const mode of MODES) {
      const none = await profileProxy(plain, mode, env);
      const policy = await profileProxy(withPolicy, mode, env);
      const total = (profile: Profile): number => [...profile.values()].reduce((sum, micros) => sum + micros, 0);
      process.stdout.write(`${mode}: pgveil ${total(none.parts).toFixed(1)} µs (${none.transactions} transactions)   pgveil+policy ${total(policy.parts).toFixed(1)} µs (${policy.transactions})\n`);
      printSideBySide('by part (pgveil → pgveil+policy):', none.parts, policy.parts, 10);
      printSideBySide(`the ${TOP} functions whose time differs most:`, none.functions, policy.functions, TOP);
      printLargest(`the ${TOP} user-space functions that cost pgveil (no policy file) most:`, none.userFunctions, TOP);
    }
  } finally {
    await bench.stop();
  }
}

await main();
