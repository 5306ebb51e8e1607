/**
 * Engine throughput: values per CPU-second (process.cpuUsage: steadier than wall time on a shared
 * machine) for protect and unprotect per kind and method at batch 1 and 1 000, protect of one value
 * through valueProtection (what the proxy can hold per column), the ratios of one value per call
 * to 1 000 per call (the proxy's shape against the batch), unprotect of fpe tokens in place over
 * their bytes against the same as strings (the proxy's read path), and @noble/ciphers' FF1 on the
 * same credit-card digits in the same run as a baseline.
 * Run: npm run bench (single process, one core).
 */
import { FF1 as nobleFF1 } from '@noble/ciphers/ff1.js';
import fc from 'fast-check';
import { nativeFf1Status } from '../src/engine/crypto/nativeFf1.js';
import { formatDate, parseDate } from '../src/engine/kinds/date.js';
import { createEngine, KINDS, type Kind, type Method } from '../src/index.js';
import type { EngineWithValueProtection } from '../src/engine/index.js';
import { ARBITRARY } from '../test/support/samples.js';

const BUDGET_MS = Number(process.env.BENCH_MS ?? 300);

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Values per CPU-second of `run`, called for about BUDGET_MS of CPU time. */
async function rate(run: () => Promise<unknown> | unknown, valuesPerCall: number): Promise<number> {
  for (let i = 0; i < 3; i++) await run(); // warm-up
  let calls = 0;
  const start = cpuMs();
  let elapsed = 0;
  while (elapsed < BUDGET_MS) {
    // Synchronous runs in groups of 16: the clock read costs as much as a cheap call.
    for (let k = 0; k < 16; k++) {
      const pending = run();
      if (pending instanceof Promise) await pending;
    }
    calls += 16;
    elapsed = cpuMs() - start;
  }
  return (calls * valuesPerCall) / (elapsed / 1000);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(11);

async function benchKind(engine: EngineWithValueProtection, kind: Kind, method: Method): Promise<string> {
  const values = fc.sample(ARBITRARY[kind], { numRuns: 1000, seed: 42 });
  const cells: string[] = [];
  const protectRates: number[] = [];

  for (const batch of [1, 1000]) {
    const options = { method };
    // One value per call walks through the batch's values, as a proxy protects one bind after another.
    const data = batch === 1 ? values.map((v) => [v]) : [values.slice(0, batch)];
    const results = await Promise.all(data.map(async (d) => (await engine.protect(kind, d, options)).result));
    let next = 0;
    const protectRate = await rate(() => engine.protect(kind, data[next++ % data.length] as string[], options), batch);
    protectRates.push(protectRate);
    cells.push(fmt(protectRate));
    cells.push(method === 'mask' ? '          -' : fmt(await rate(() => engine.unprotect(kind, results[next++ % results.length] as string[], options), batch)));
  }
  // Last, so that it runs warm like the others: the first cell of a kind pays the warm-up.
  const one = engine.valueProtection(kind, { method });
  let at = 0;
  const oneRate = await rate(() => one.protect(values[at++ % values.length] as string), 1);
  const batchRate = protectRates[1] as number;
  const ratio = (protectRates[0] as number) / batchRate;
  return `${kind.padEnd(8)} ${method.padEnd(9)} ${cells.join(' ')} ${fmt(oneRate)} ${ratio.toFixed(2).padStart(9)} ${(oneRate / batchRate).toFixed(2).padStart(9)}`;
}

/**
 * The proxy's read path for fpe of ssn, ccn and dates: unprotect of 1 000 values lying as bytes
 * (DataRow fields), rewritten in place, against unprotect of the same values as strings. Each
 * in-place call first copies the 1 000 tokens back into its buffer (included: a few µs).
 */
async function benchInPlace(engine: EngineWithValueProtection): Promise<string> {
  const lines = ['unprotect ×1k of fpe tokens: as strings (engine.unprotect) vs in place over their bytes (valueProtection.unprotectInPlace)'];
  for (const kind of ['ssn', 'ccn', 'date'] as const) {
    const options = { method: 'fpe' as const, scope: 'bench' };
    const plain = fc.sample(ARBITRARY[kind], { numRuns: 1000, seed: 42 }).map((v) => (kind === 'date' ? isoDateOf(v) : v));
    const tokens = (await engine.protect(kind, plain, options)).result;
    const stored = Buffer.from(tokens.join(''));
    const work = Buffer.alloc(stored.length);
    const starts = new Int32Array(tokens.length);
    const lengths = new Int32Array(tokens.length);
    tokens.reduce((at, token, i) => {
      starts[i] = at;
      lengths[i] = Buffer.byteLength(token);
      return at + (lengths[i] as number);
    }, 0);
    const fields = { count: tokens.length, buffers: tokens.map(() => work), starts, lengths };
    const handled = new Uint8Array(tokens.length);
    const inPlace = engine.valueProtection(kind, options).unprotectInPlace;
    if (inPlace === undefined) throw new Error(`${kind} fpe has no unprotect in place`);
    const strings = await rate(() => engine.unprotect(kind, tokens, options), tokens.length);
    const bytes = await rate(() => {
      stored.copy(work);
      inPlace(fields, handled);
    }, tokens.length);
    if (work.toString() !== plain.join('')) throw new Error(`${kind}: in place did not give the plaintext back`);
    lines.push(`${kind.padEnd(8)} strings ${fmt(strings)}   in place ${fmt(bytes)}   ${(bytes / strings).toFixed(2)} x`);
  }
  return lines.join('\n');
}

/** A date of the kind's sample in ISO spelling (what PostgreSQL prints). */
function isoDateOf(value: string): string {
  const date = parseDate(value);
  if (date === undefined) throw new Error('the date sample is no date');
  return formatDate(date, 'year-first', '-');
}

async function main(): Promise<void> {
  const engine = createEngine({ masterKey: Buffer.alloc(32, 1) });
  console.log(`pgveil engine benchmark (values per CPU-second, ${BUDGET_MS} ms of CPU per cell, node ${process.version}, native FF1 ${nativeFf1Status})`);
  console.log('×1: protect([value]) per call; one×1: valueProtection(kind, options).protect(value); ratios against protect×1k');
  console.log(`${'kind'.padEnd(8)} ${'method'.padEnd(9)} ${'protect×1'.padStart(11)} ${'unprot×1'.padStart(11)} ${'protect×1k'.padStart(11)} ${'unprot×1k'.padStart(11)} ${'one×1'.padStart(11)} ${'×1/1k'.padStart(9)} ${'one×1/1k'.padStart(9)}`);
  const only = process.env.BENCH_KINDS?.split(',');
  for (const kind of KINDS) {
    if (only && !only.includes(kind)) continue;
    for (const method of ['tokenise', 'fpe', 'mask'] as const) console.log(await benchKind(engine, kind, method));
  }

  console.log('');
  console.log(await benchInPlace(engine));

  // Baseline: the same 1 000 card numbers' first 15 digits through @noble/ciphers FF1.
  const cards = fc.sample(ARBITRARY.ccn, { numRuns: 1000, seed: 42 });
  const key = new Uint8Array(32).fill(1);
  const noble = nobleFF1(10, key);
  const numerals = cards.map((c) => c.replace(/\D/g, '').slice(0, 15).split('').map(Number));
  const nobleRate = await rate(() => { for (const n of numerals) noble.encrypt(n); }, numerals.length);
  const oursRate = await rate(() => engine.protect('ccn', cards, { method: 'fpe' }), cards.length);
  console.log('');
  console.log(`ccn fpe ×1000, pgveil engine (parse + FF1 + Luhn + format): ${fmt(oursRate)} values/s`);
  console.log(`@noble/ciphers FF1 on the same 15 digits (FF1 alone):       ${fmt(nobleRate)} values/s`);
  console.log(`ratio pgveil / noble: ${(oursRate / nobleRate).toFixed(1)}×  (target: ≥ 500 000 values/s)`);
  console.log('bench/singleValue.ts measures ×1 against ×1000 interleaved, with medians: steadier on a shared machine.');
}

await main();
