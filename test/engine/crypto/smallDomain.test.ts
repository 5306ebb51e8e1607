import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildPermutationTable, PermutationTableCache, type PermutationTable,
} from '../../../src/engine/crypto/smallDomain.js';

const key = new Uint8Array(32).fill(7);
const otherKey = new Uint8Array(32).fill(8);
const tweak = new Uint8Array([1, 2, 3]);

function expectPermutation(table: PermutationTable): void {
  // Plain loops and one expect: a million expect() calls would take minutes.
  const seen = new Uint8Array(table.size);
  let problems = 0;
  for (let x = 0; x < table.size; x++) {
    const y = table.forward[x] as number;
    if (y >= table.size || seen[y] === 1 || table.inverse[y] !== x) problems++;
    else seen[y] = 1;
  }
  expect(table.forward.length).toBe(table.size);
  expect(table.inverse.length).toBe(table.size);
  expect(problems).toBe(0);
}

/** Positions where two tables agree: about 1 for unrelated permutations. */
function agreements(a: PermutationTable, b: PermutationTable): number {
  let same = 0;
  for (let x = 0; x < Math.min(a.size, b.size); x++) if (a.forward[x] === b.forward[x]) same++;
  return same;
}

describe('small-domain permutation', () => {
  it('is a permutation with a working inverse, for random keys, sizes and tweaks', () => {
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.integer({ min: 100, max: 20_000 }), fc.uint8Array({ maxLength: 24 }),
      (k, size, t) => expectPermutation(buildPermutationTable(k, size, t)),
    ), { numRuns: 40 });
  });

  it('covers a domain just below 10^6', () => {
    const table = buildPermutationTable(key, 999_999, tweak);
    expect(table.forward).toBeInstanceOf(Uint32Array);
    expectPermutation(table);
  });

  it('is deterministic', () => {
    const a = buildPermutationTable(key, 5000, tweak);
    const b = buildPermutationTable(new Uint8Array(key), 5000, new Uint8Array(tweak));
    expect(Buffer.from(a.forward.buffer).equals(Buffer.from(b.forward.buffer))).toBe(true);
  });

  it('gives unrelated permutations for another key, tweak or size', () => {
    const base = buildPermutationTable(key, 10_000, tweak);
    expect(agreements(base, buildPermutationTable(otherKey, 10_000, tweak))).toBeLessThan(10);
    expect(agreements(base, buildPermutationTable(key, 10_000, new Uint8Array([1, 2, 4])))).toBeLessThan(10);
    expect(agreements(base, buildPermutationTable(key, 10_000, new Uint8Array([1, 2, 3, 0])))).toBeLessThan(10);
    expect(agreements(base, buildPermutationTable(key, 10_001, tweak))).toBeLessThan(10);
  });

  it('draws every permutation of a tiny domain about equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const runs = 6000;
    for (let i = 0; i < runs; i++) {
      const t = new Uint8Array(4);
      new DataView(t.buffer).setUint32(0, i);
      const { forward } = buildPermutationTable(key, 3, t);
      const name = Array.from(forward).join('');
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect(counts.size).toBe(6);
    // Chi-square with 5 degrees of freedom: 20.5 is the 0.999 quantile.
    const expected = runs / 6;
    const chi2 = [...counts.values()].reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(20.5);
  });

  it('refuses sizes outside 1..2^24', () => {
    expect(() => buildPermutationTable(key, 0, tweak)).toThrow(RangeError);
    expect(() => buildPermutationTable(key, 1.5, tweak)).toThrow(RangeError);
    expect(() => buildPermutationTable(key, 2 ** 24 + 1, tweak)).toThrow(RangeError);
  });
});

describe('permutation table cache', () => {
  it('returns the cached table on a hit and the same table as a fresh build', () => {
    const cache = new PermutationTableCache();
    const a = cache.get(key, 1000, tweak);
    expect(cache.get(key, 1000, new Uint8Array(tweak))).toBe(a);
    expect(Array.from(a.forward)).toEqual(Array.from(buildPermutationTable(key, 1000, tweak).forward));
    expect(cache.get(otherKey, 1000, tweak)).not.toBe(a);
    expect(cache.stats).toEqual({ tables: 2, entries: 4000 });
  });

  it('evicts the least recently used tables beyond its entry budget', () => {
    const cache = new PermutationTableCache(5000); // two tables of 1000 (2000 entries each)
    const t1 = new Uint8Array([1]);
    const t2 = new Uint8Array([2]);
    const t3 = new Uint8Array([3]);
    const first = cache.get(key, 1000, t1);
    cache.get(key, 1000, t2);
    cache.get(key, 1000, t1); // t1 is now the most recent
    cache.get(key, 1000, t3); // evicts t2
    expect(cache.stats).toEqual({ tables: 2, entries: 4000 });
    expect(cache.get(key, 1000, t1)).toBe(first);
    const big = cache.get(key, 4000, t1); // alone above the budget: kept, everything else goes
    expect(cache.stats).toEqual({ tables: 1, entries: 8000 });
    expect(cache.get(key, 4000, t1)).toBe(big);
  });
});
