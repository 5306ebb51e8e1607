/**
 * The benchmarks measure the compiled library in dist/, as `pgveil serve` and library users run it:
 * tsx's on-the-fly transform keeps every function's name with a call per closure created, a cost
 * per message that the shipped code does not pay. `npm run build` first (the bench scripts do).
 *
 * `compiled('proxy/index.js')` gives the module of dist/proxy/index.js, typed as its source.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIST = new URL('../dist/', import.meta.url);

export async function compiled<T>(modulePath: string): Promise<T> {
  const url = new URL(modulePath, DIST);
  if (!existsSync(fileURLToPath(url))) throw new Error(`dist/${modulePath} is missing: run \`npm run build\` before the benchmarks`);
  return (await import(url.href)) as T;
}
