/**
 * `npm run bench:instructions`: what the proxy's own thread executes per transaction, counted by
 * valgrind's callgrind rather than timed, so that it does not move with the machine's load: pgbench
 * -S (-c 1, prepared and simple) through pgveil without and with the policy file (pgbench touches no
 * protected table), each proxy run under callgrind. The counters are zeroed after a warm-up (the JIT
 * has tiered up, the caches are filled) and dumped after the measured transactions; only the main
 * thread counts (the compiler and garbage-collector threads are not on the data path, and under
 * valgrind they run late). Prints instructions per transaction, the policy file's ratio, and with
 * PGVEIL_BENCH_TOP the functions whose own instructions differ most between the two, JIT-compiled
 * JavaScript named from V8's perf map (`--perf-basic-prof`).
 *
 * Instructions are not time (the kernel's share, about 60 % of a relay's CPU, is not counted, nor
 * cache misses), and valgrind runs the code about 50 times slower, so a function the JIT
 * deoptimised runs unoptimised longer than it would (baseline frames: `^` in the names). Use it to
 * compare two builds or two configurations, not for absolute figures.
 *
 * Needs valgrind (Debian package `valgrind`). Environment: PGVEIL_BENCH_WARMUP (transactions before
 * counting, default 4000), PGVEIL_BENCH_TRANSACTIONS (counted, 8000), PGVEIL_BENCH_MODES
 * ("prepared,simple"), PGVEIL_BENCH_TOP (0: no function list), PGVEIL_BENCH_BASELINE_DIST (another
 * build's dist/: its proxy without and with the policy file is counted too, and this build /
 * baseline printed for both),
 * PGVEIL_BENCH_KEEP=1 (the callgrind dumps and V8's perf maps are kept, their paths printed),
 * PGVEIL_BENCH_SYNC_COMPILE=1 (compile on the main thread: see SYNC_COMPILE), PGVEIL_TEST_DATABASE_URL
 * (an existing server instead of an embedded one).
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { scriptAsJavaScript } from './benchProcesses.js';
import { startPolicyBench } from './policyBenchSetup.js';

const WARMUP = Number(process.env.PGVEIL_BENCH_WARMUP ?? 4000);
const TRANSACTIONS = Number(process.env.PGVEIL_BENCH_TRANSACTIONS ?? 8000);
const MODES = (process.env.PGVEIL_BENCH_MODES ?? 'prepared,simple').split(',');
const TOP = Number(process.env.PGVEIL_BENCH_TOP ?? 0);
/** PGVEIL_BENCH_KEEP=1: the callgrind dumps and perf maps are left in place (their paths printed), for callgrind_annotate --tree=caller. */
const KEEP = process.env.PGVEIL_BENCH_KEEP === '1' ? true : undefined;
/**
 * TurboFan on the main thread. By default it compiles on its own threads, as natively, and the main
 * thread's count leaves the compiling out; but under valgrind a job finishes at a point that varies
 * from run to run, and the code it replaces runs unoptimised until then: the same build counted twice
 * differed by up to 8 %. Compiling on the main thread puts the compiles in the count (valgrind's
 * slowness makes the JIT recompile more than natively: counts about twice as high) but repeats
 * within 2 %: the setting to compare two builds.
 */
const SYNC_COMPILE = process.env.PGVEIL_BENCH_SYNC_COMPILE === '1';
const run = promisify(execFile);

interface Counted {
  /** Main-thread instructions per counted transaction. */
  perTransaction: number;
  /** Own instructions per transaction by function (JIT code by its JavaScript name). */
  functions: Map<string, number>;
}

/** V8's perf map: code address ranges and their names (a later entry wins: code space is reused). */
function perfMapNamer(file: string): (address: number) => string | undefined {
  const entries = readFileSync(file, 'utf8').split('\n').flatMap((line) => {
    const [start, size, ...name] = line.split(' ');
    return start && size ? [{ start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: name.join(' ') }] : [];
  });
  return (address) => {
    let found: string | undefined;
    for (const entry of entries) if (entry.start <= address && address < entry.end) found = entry.name;
    return found;
  };
}

async function ownInstructions(dump: string, mapFile: string): Promise<Map<string, number>> {
  const { stdout } = await run('callgrind_annotate', ['--threshold=100', dump], { maxBuffer: 64 << 20 });
  const nameOf = perfMapNamer(mapFile);
  const functions = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+)$/.exec(line);
    if (!match || match[2] === 'PROGRAM TOTALS') continue;
    const raw = (match[2] as string).trim();
    const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(raw);
    const name = (jit ? nameOf(parseInt(jit[1] as string, 16)) : undefined) ?? raw;
    // Without line and column, so that two builds' functions meet by name.
    const short = name.replace(/file:\/\/\/\S*\/dist\//, 'dist/').replace(/ \[\S+\]$/, '').replace(/:\d+:\d+$/, '');
    functions.set(short, (functions.get(short) ?? 0) + Number((match[1] as string).replaceAll(',', '')));
  }
  return functions;
}

async function countProxy(script: string, env: Record<string, string>, mode: string, pgbenchEnv: Record<string, string>): Promise<Counted> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pgveil-bench-callgrind-'));
  let perfMap: string | undefined;
  let child: ChildProcessByStdio<null, Readable, Readable> | undefined;
  try {
    const out = path.join(dir, 'callgrind.out');
    child = spawn('valgrind', [
      '--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`,
      process.execPath, '--perf-basic-prof', ...(SYNC_COMPILE ? ['--no-concurrent-recompilation'] : []), script,
    ], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const proxy = child;
    let stderr = '';
    proxy.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const exited = new Promise<void>((resolve) => proxy.once('exit', () => resolve()));
    const port = await new Promise<number>((resolve, reject) => {
      proxy.once('exit', (code) => reject(new Error(`proxy under valgrind exited with ${code}:\n${stderr.slice(-2000)}`)));
      proxy.stdout.on('data', (chunk: Buffer) => {
        const match = /port=(\d+)/.exec(chunk.toString());
        if (match) resolve(Number(match[1]));
      });
    });
    const pid = String(proxy.pid);
    // V8 writes its perf map there, whatever TMPDIR says; under valgrind the process keeps valgrind's pid.
    perfMap = `/tmp/perf-${pid}.map`;
    const pgbench = (transactions: number) => run('pgbench', ['-n', '-S', '-M', mode, '-c', '1', '-t', String(transactions)], {
      env: { ...pgbenchEnv, PGPORT: String(port) }, maxBuffer: 1 << 20, timeout: 1_800_000,
    });
    await pgbench(WARMUP);
    await run('callgrind_control', ['-z', pid]);
    await pgbench(TRANSACTIONS);
    await run('callgrind_control', ['-d', pid]);
    // Thread 1 of dump 1: the main thread, counted since the zeroing.
    const dump = readdirSync(dir).find((file) => /^callgrind\.out\.1-0*1$/.test(file));
    if (dump === undefined) throw new Error(`no callgrind dump of the main thread in ${readdirSync(dir).join(', ')}`);
    const text = readFileSync(path.join(dir, dump), 'utf8');
    const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
    const functions = TOP > 0 ? await ownInstructions(path.join(dir, dump), perfMap) : new Map<string, number>();
    proxy.kill('SIGTERM');
    await exited;
    for (const [name, count] of functions) {
      // The frames at the root of the thread (main, node::Start…) carry the thread's whole count, not their own.
      if (count >= total * 0.9) functions.delete(name);
      else functions.set(name, count / TRANSACTIONS);
    }
    return { perTransaction: total / TRANSACTIONS, functions };
  } finally {
    // A pgbench or callgrind_control that failed leaves the proxy running: it goes too.
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (KEEP !== undefined) {
      process.stdout.write(`kept the callgrind dumps in ${dir}${perfMap === undefined ? '' : ` and V8's perf map ${perfMap}`}\n`);
    } else {
      await rm(dir, { recursive: true, force: true });
      if (perfMap !== undefined) await rm(perfMap, { force: true });
    }
  }
}

function printDifferences(label: string, base: Counted, other: Counted): void {
  const names = new Set([...base.functions.keys(), ...other.functions.keys()]);
  const rows = [...names].map((name) => ({ name, base: base.functions.get(name) ?? 0, other: other.functions.get(name) ?? 0 }))
    .sort((a, b) => Math.abs(b.other - b.base) - Math.abs(a.other - a.base)).slice(0, TOP);
  process.stdout.write(`  functions whose own instructions per transaction differ most (${label}):\n`);
  for (const row of rows) {
    process.stdout.write(`  ${(row.other - row.base).toFixed(0).padStart(7)}  ${row.base.toFixed(0).padStart(7)} → ${row.other.toFixed(0).padStart(7)}  ${row.name.slice(0, 100)}\n`);
  }
}

async function main(): Promise<void> {
  try {
    await run('valgrind', ['--version']);
  } catch {
    throw new Error('bench:instructions needs valgrind (Debian package valgrind)');
  }
  const bench = await startPolicyBench(1);
  try {
    const { plain, withPolicy, pgbenchEnv } = bench;
    const script = scriptAsJavaScript(new URL('./proxyProcess.ts', import.meta.url));
    const baselineDist = process.env.PGVEIL_BENCH_BASELINE_DIST;
    process.stdout.write(`pgbench -S -c 1, ${WARMUP} transactions of warm-up, then ${TRANSACTIONS} counted; proxy main thread under callgrind\n`);
    for (const mode of MODES) {
      const none = await countProxy(script, { PGVEIL_BENCH_PROXY: plain }, mode, pgbenchEnv);
      const policy = await countProxy(script, { PGVEIL_BENCH_PROXY: withPolicy }, mode, pgbenchEnv);
      process.stdout.write(`${mode.padEnd(9)} pgveil ${(none.perTransaction / 1000).toFixed(1)} k   pgveil+policy ${(policy.perTransaction / 1000).toFixed(1)} k instructions per transaction   policy / none ${(policy.perTransaction / none.perTransaction).toFixed(2)} x\n`);
      if (TOP > 0) printDifferences('pgveil → pgveil+policy', none, policy);
      if (baselineDist !== undefined) {
        const baselineNone = await countProxy(script, { PGVEIL_BENCH_PROXY: plain, PGVEIL_BENCH_DIST: baselineDist }, mode, pgbenchEnv);
        process.stdout.write(`${mode.padEnd(9)} baseline ${(baselineNone.perTransaction / 1000).toFixed(1)} k   this build / baseline ${(none.perTransaction / baselineNone.perTransaction).toFixed(2)} x (no policy file)\n`);
        if (TOP > 0) printDifferences('baseline → this build, no policy file', baselineNone, none);
        const baseline = await countProxy(script, { PGVEIL_BENCH_PROXY: withPolicy, PGVEIL_BENCH_DIST: baselineDist }, mode, pgbenchEnv);
        process.stdout.write(`${mode.padEnd(9)} baseline+policy ${(baseline.perTransaction / 1000).toFixed(1)} k   this build / baseline ${(policy.perTransaction / baseline.perTransaction).toFixed(2)} x\n`);
        if (TOP > 0) printDifferences('baseline → this build, with the policy file', baseline, policy);
      }
    }
  } finally {
    await bench.stop();
  }
}

await main();
