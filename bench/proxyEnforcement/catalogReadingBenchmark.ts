/**
 * How long one catalog reading holds the event loop in one go, with a large catalog: every other
 * session of the process stalls for the longest of those turns. Creates PGVEIL_BENCH_TABLES tables
 * of PGVEIL_BENCH_COLUMNS columns (default 4 000 × 50: 200 000 columns) and a few views over them
 * in a real PostgreSQL, then reads the catalog as the proxy does (upstreamCatalogLoader) several
 * times, and prints per reading the longest event-loop turn (the longest gap between ticks of a
 * 1 ms timer) and the reading's total time. On a shared machine a gap also counts the time the
 * process waited for a CPU: the CPU time the event loop's thread used between two ticks (Linux:
 * /proc/thread-self/schedstat; elsewhere the whole process's) is printed too, and is the steadier
 * of the two; and
 * the longest turn once the garbage collector's pauses in it are taken out, beside the longest
 * pause, to tell the reading's own slices from the collector's work. The V8 heap's peak above
 * its size before the reading is printed too (sampled at each tick; it counts garbage not yet collected).
 *
 * Run: npx tsx bench/proxyEnforcement/catalogReadingBenchmark.ts
 * Environment: PGVEIL_BENCH_TABLES, PGVEIL_BENCH_COLUMNS, PGVEIL_BENCH_VIEWS (default 200),
 * PGVEIL_BENCH_ROUNDS (default 5), PGVEIL_TEST_DATABASE_URL (an existing server instead of an
 * embedded one or a container), PGVEIL_BENCH_BASELINE_SRC (another checkout's src/, e.g. a worktree
 * of the last commit: its loader reads alternately with this one, so both are measured in one run
 * on one machine).
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getHeapStatistics } from 'node:v8';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { upstreamCatalogLoader, type CatalogLoader } from '../../src/proxy/enforcement/catalog/upstreamCatalogReader.js';
import type { UpstreamOptions } from '../../src/proxy/proxyOptions.js';
import { median } from '../proxy/benchProcesses.js';

const TABLES = Number(process.env.PGVEIL_BENCH_TABLES ?? 4_000);
const COLUMNS = Number(process.env.PGVEIL_BENCH_COLUMNS ?? 50);
const VIEWS = Number(process.env.PGVEIL_BENCH_VIEWS ?? 200);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 5);
/** Tables created per statement: one DO block each, so creating 4 000 takes seconds, not minutes. */
const TABLES_PER_BATCH = 200;

async function createCatalog(server: TestPostgres): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const columns = Array.from({ length: COLUMNS }, (_, i) => `c${i} ${i % 3 === 0 ? 'text' : i % 3 === 1 ? 'int8' : 'numeric(12,2)'}`).join(', ');
  for (let first = 0; first < TABLES; first += TABLES_PER_BATCH) {
    const last = Math.min(TABLES, first + TABLES_PER_BATCH) - 1;
    await client.query(`DO $$ BEGIN FOR i IN ${first}..${last} LOOP
      EXECUTE format('CREATE TABLE bench_%s (${columns})', i); END LOOP; END $$`);
  }
  for (let i = 0; i < Math.min(VIEWS, TABLES); i++) {
    await client.query(`CREATE VIEW bench_view_${i} AS SELECT c0, c1, c2 || 'x' AS c2x, c1 + 1 AS c1p FROM bench_${i}`);
  }
  await client.end();
}

interface Reading {
  /** The longest event-loop turn while the reading ran (ms). */
  readonly longestTurnMs: number;
  /** The most CPU time the event loop's thread used between two ticks of the timer (ms). */
  readonly longestTurnCpuMs: number;
  /** The longest turn less the garbage collector's pauses in it (ms). */
  readonly longestTurnOutsideGcMs: number;
  /** The longest pause of the garbage collector (ms). */
  readonly longestGcMs: number;
  /** The heap's peak during the reading above its size before it (MB). */
  readonly heapPeakMb: number;
  readonly totalMs: number;
  readonly relations: number;
}

/** CPU time of the calling thread (ms): Linux's scheduler statistics, else the whole process's. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
}

/** Runs one reading while a 1 ms timer records the longest gap between its ticks. */
async function measured(loader: CatalogLoader, database: string): Promise<Reading> {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let longest = 0;
  let longestCpu = 0;
  const heapBefore = getHeapStatistics().used_heap_size;
  let heapPeak = heapBefore;
  const turns: Array<[number, number]> = [];
  const pauses: Array<[number, number]> = [];
  const collector = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  collector.observe({ entryTypes: ['gc'] });
  const ticker = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    longest = Math.max(longest, now - last);
    turns.push([last, now]);
    heapPeak = Math.max(heapPeak, getHeapStatistics().used_heap_size);
    longestCpu = Math.max(longestCpu, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  }, 1);
  const started = performance.now();
  const snapshot = await loader(database);
  const totalMs = performance.now() - started;
  // The turn that finished the reading ends here: the timer's next tick measures it.
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  collector.disconnect();
  const inGc = ([start, end]: [number, number]): number =>
    pauses.reduce((sum, [from, to]) => sum + Math.max(0, Math.min(end, to) - Math.max(start, from)), 0);
  const longestTurnOutsideGcMs = Math.max(0, ...turns.map((turn) => turn[1] - turn[0] - inGc(turn)));
  const longestGcMs = Math.max(0, ...pauses.map(([from, to]) => to - from));
  const heapPeakMb = (heapPeak - heapBefore) / 2 ** 20;
  return { longestTurnMs: longest, longestTurnCpuMs: longestCpu, longestTurnOutsideGcMs, longestGcMs, heapPeakMb, totalMs, relations: snapshot.relations.size };
}

async function baselineLoader(upstream: UpstreamOptions): Promise<CatalogLoader | undefined> {
  const src = process.env.PGVEIL_BENCH_BASELINE_SRC;
  if (src === undefined) return undefined;
  const module = await import(path.resolve(src, 'proxy/enforcement/catalog/upstreamCatalogReader.ts')) as {
    upstreamCatalogLoader: typeof upstreamCatalogLoader;
  };
  return module.upstreamCatalogLoader(upstream);
}

function summary(label: string, readings: readonly Reading[]): string {
  const turns = readings.map((reading) => reading.longestTurnMs);
  const cpus = readings.map((reading) => reading.longestTurnCpuMs);
  const outside = readings.map((reading) => reading.longestTurnOutsideGcMs);
  const pauses = readings.map((reading) => reading.longestGcMs);
  const totals = readings.map((reading) => reading.totalMs);
  const heaps = readings.map((reading) => reading.heapPeakMb);
  return `${label.padEnd(9)} longest turn: median ${median(turns).toFixed(1)} ms, max ${Math.max(...turns).toFixed(1)} ms; `
    + `its CPU: median ${median(cpus).toFixed(1)} ms, max ${Math.max(...cpus).toFixed(1)} ms; `
    + `outside GC: median ${median(outside).toFixed(1)} ms, max ${Math.max(...outside).toFixed(1)} ms; `
    + `longest GC pause: median ${median(pauses).toFixed(1)} ms; heap peak: median +${median(heaps).toFixed(0)} MB; `
    + `reading: median ${median(totals).toFixed(0)} ms (${readings[0]?.relations ?? 0} relations)`;
}

async function main(): Promise<void> {
  const server = await startTestPostgres();
  try {
    const started = performance.now();
    await createCatalog(server);
    console.log(`created ${TABLES} tables × ${COLUMNS} columns and ${Math.min(VIEWS, TABLES)} views in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const upstream: UpstreamOptions = { host: server.host, port: server.port, user: server.user, password: server.password, sslmode: 'disable' };
    const loaders: Array<[string, CatalogLoader]> = [['this', upstreamCatalogLoader(upstream)]];
    const baseline = await baselineLoader(upstream);
    if (baseline !== undefined) loaders.unshift(['baseline', baseline]);
    const readings = new Map<string, Reading[]>(loaders.map(([label]) => [label, []]));
    // One unrecorded reading each: compilation and the server's caches.
    for (const [, loader] of loaders) await measured(loader, server.database);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [label, loader] of loaders) {
        const reading = await measured(loader, server.database);
        readings.get(label)?.push(reading);
        console.log(`${label.padEnd(9)} round ${round + 1}: longest turn ${reading.longestTurnMs.toFixed(1)} ms (CPU ${reading.longestTurnCpuMs.toFixed(1)} ms, outside GC ${reading.longestTurnOutsideGcMs.toFixed(1)} ms, GC pause ${reading.longestGcMs.toFixed(1)} ms, heap +${reading.heapPeakMb.toFixed(0)} MB), reading ${reading.totalMs.toFixed(0)} ms`);
      }
    }
    for (const [label] of loaders) console.log(summary(label, readings.get(label) ?? []));
  } finally {
    await server.stop();
  }
}

await main();
