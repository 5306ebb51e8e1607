/**
 * One value per call, the proxy's shape, beside the same values 1 000 per call, in one process:
 * values per CPU-second (process.cpuUsage, steadier than wall time on a shared machine) and the
 * ratios. One value per call is measured twice: `protect(kind, [value])` (a batch of one, awaited)
 * and `valueProtection(kind, options).protect(value)` (resolved once, synchronous: what the proxy
 * can hold per column). Rounds alternate them so that noise hits all alike; medians are printed.
 * Run: npx tsx bench/singleValue.ts   Environment: KIND (ccn), METHOD (fpe), ROUNDS (5), VALUES (20000);
 * PGVEIL_NATIVE=0 for FF1 in TypeScript only.
 */
import fc from 'fast-check';
import { nativeFf1Status } from '../src/engine/crypto/nativeFf1.js';
import { createEngine, KINDS, type Kind, type Method } from '../src/index.js';
import { ARBITRARY } from '../test/support/samples.js';

const kind = (process.env.KIND ?? 'ccn') as Kind;
if (!KINDS.includes(kind)) throw new Error(`unknown kind ${kind}`);
const method = (process.env.METHOD ?? 'fpe') as Method;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const VALUES = Number(process.env.VALUES ?? 20_000);

const engine = createEngine({ masterKey: Buffer.alloc(32, 1) });
const values = fc.sample(ARBITRARY[kind], { numRuns: 1000, seed: 42 });
const options = { method, scope: 'bench' };

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function singles(): Promise<number> {
  const start = cpuSeconds();
  for (let i = 0; i < VALUES; i++) await engine.protect(kind, [values[i % values.length] as string], options);
  return VALUES / (cpuSeconds() - start);
}

function compiled(): number {
  const one = engine.valueProtection(kind, options);
  const start = cpuSeconds();
  for (let i = 0; i < VALUES; i++) one.protect(values[i % values.length] as string);
  return VALUES / (cpuSeconds() - start);
}

async function batches(): Promise<number> {
  const start = cpuSeconds();
  for (let i = 0; i < VALUES; i += values.length) await engine.protect(kind, values, options);
  return VALUES / (cpuSeconds() - start);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
await singles();
compiled();
await batches();
const one: number[] = [];
const held: number[] = [];
const many: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  one.push(await singles());
  held.push(compiled());
  many.push(await batches());
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(10);
const batch = median(many);
console.log(`${kind} ${method} (native FF1 ${nativeFf1Status}), values/CPU-s: ×1000 ${fmt(batch)}; ×1 protect([v]) ${fmt(median(one))}, ratio ${(median(one) / batch).toFixed(3)}; ×1 valueProtection ${fmt(median(held))}, ratio ${(median(held) / batch).toFixed(3)}`);
