/**
 * The benchmarks measure the compiled library in dist/, as `pgveil serve` and library users run it:
 * tsx's on-the-fly transform keeps every function's name with a call per closure created, a cost
 * per message that the shipped code does not pay. `npm run build` first (the bench scripts do).
 *
 * `compiled('proxy/index.js')` gives the module of dist/proxy/index.js, typed as its source;
 * `compiled(path, otherDist)` the same module of another build (an A/B in one process).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** dist/ of this checkout, seen from bench/ or from bench's JavaScript copy in dist/bench/ (benchProcesses.ts). */
const DIST = new URL(import.meta.url.endsWith('/dist/bench/compiled.js') ? '../' : '../dist/', import.meta.url);

export async function compiled<T>(modulePath: string, dist: URL = DIST): Promise<T> {
  const url = new URL(modulePath, dist);
  if (!existsSync(fileURLToPath(url))) throw new Error(`${fileURLToPath(url)} is missing: run \`npm run build\` before the benchmarks`);
  return (await import(url.href)) as T;
}
