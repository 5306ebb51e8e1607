/**
 * One value per call, the proxy's shape, beside the same values 1 000 per call, in one process:
 * values per CPU-second (process.cpuUsage, steadier than wall time on a shared machine) and the
 * ratio. Rounds alternate the two so that noise hits both alike; the median round is printed.
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

async function batches(): Promise<number> {
  const start = cpuSeconds();
  for (let i = 0; i < VALUES; i += values.length) await engine.protect(kind, values, options);
  return VALUES / (cpuSeconds() - start);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
await singles();
await batches();
const one: number[] = [];
const many: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  one.push(await singles());
  many.push(await batches());
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(10);
console.log(`${kind} ${method} (native FF1 ${nativeFf1Status}): ×1 ${fmt(median(one))} values/CPU-s, ×1000 ${fmt(median(many))} values/CPU-s, ratio ${(median(one) / median(many)).toFixed(3)}`);
