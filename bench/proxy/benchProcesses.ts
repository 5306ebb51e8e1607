/** Shared by the proxy benchmarks: child processes, their CPU time, medians. */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** User + system CPU seconds a process used so far (from /proc). */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/**
 * CPU seconds every thread of a process ran so far, to the nanosecond (the scheduler's own count,
 * /proc/<pid>/task/<tid>/schedstat): fine enough for runs too short for cpuSplit's 10 ms ticks.
 */
export function cpuSecondsPrecise(pid: number): number {
  let nanos = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanos += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read: its time is gone with it.
    }
  }
  return nanos / 1e9;
}

/** User and system CPU seconds a process used so far, apart: system time is mostly the kernel's socket work. */
export function cpuSplit(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/**
 * Read and write system calls a process made so far (from /proc): the read/write family only
 * (read, readv, write, writev). send/recv, which PgBouncer and the native socket addon use, are not counted.
 */
export function ioSyscalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
  return { reads: field('syscr'), writes: field('syscw') };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const BENCH = new URL('../', import.meta.url);
const BENCH_AS_JAVASCRIPT = new URL('../dist/bench/', BENCH);
/** Whether dist/bench/ was emptied in this process: what a previous run left there is never run. */
let benchJavaScriptCleared = false;

/**
 * A bench script and the bench modules it imports, as JavaScript under dist/bench/ (the same
 * layout as bench/); returns the script's path there. A measured process then runs on plain Node,
 * as `pgveil serve` does: under tsx it would also run tsx's module loader on a thread of its own,
 * whose garbage collections landed in the process's CPU time at random (0 to 10 µs per transaction).
 */
export function scriptAsJavaScript(script: URL, done = new Set<string>()): string {
  const source = fileURLToPath(script);
  const relative = source.slice(fileURLToPath(BENCH).length).replace(/\.ts$/, '.js');
  const target = new URL(relative, BENCH_AS_JAVASCRIPT);
  if (!benchJavaScriptCleared) {
    rmSync(BENCH_AS_JAVASCRIPT, { recursive: true, force: true });
    benchJavaScriptCleared = true;
  }
  if (!done.has(source)) {
    done.add(source);
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: source,
    });
    // The imports the JavaScript still makes (type-only ones are gone), as TypeScript's own scanner finds them.
    const imports = ts.preProcessFile(outputText, true, true).importedFiles.map((file) => file.fileName);
    for (const imported of imports.filter((name) => name.startsWith('./') || name.startsWith('../'))) {
      if (!imported.endsWith('.js')) throw new Error(`${relative} imports ${imported}: bench scripts import bench modules as .js`);
      const dependency = new URL(imported.replace(/\.js$/, '.ts'), script);
      if (!fileURLToPath(dependency).startsWith(fileURLToPath(BENCH))) throw new Error(`${relative} imports ${imported} at run time: bench scripts import the library from dist/ (compiled.ts)`);
      scriptAsJavaScript(dependency, done);
    }
    mkdirSync(new URL('.', target), { recursive: true });
    writeFileSync(target, outputText);
  }
  return fileURLToPath(target);
}

/**
 * Runs one of this folder's process scripts on plain Node (scriptAsJavaScript); resolves once it
 * printed its port. Extra Node options: `nodeOptions`, then PGVEIL_BENCH_NODE_OPTIONS (e.g.
 * `--cpu-prof` to profile the proxy).
 */
export function startProcess(script: string, env: Record<string, string>, nodeOptions: readonly string[] = []): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const options = [...nodeOptions, ...(process.env.PGVEIL_BENCH_NODE_OPTIONS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...options, scriptAsJavaScript(new URL(script, import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`proxy process exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port=(\d+)/.exec(chunk.toString());
      if (!match) return;
      resolve({
        port: Number(match[1]),
        pid: child.pid as number,
        stop: async () => {
          child.removeAllListeners('exit');
          const exited = new Promise((done) => child.once('exit', done));
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

