/** The integer-run walk: every value lands in its domain and comes back, and no scratch keeps a value's bits after a call. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FF1 } from '../../../src/engine/crypto/ff1.js';
import { cryptIntegerRunWith } from '../../../src/engine/crypto/integerRuns.js';

const BITS = 12;
const MASK = (1 << BITS) - 1;
/** A permutation of [0, 2^12) and its inverse: enough of an FF1 to walk cycles, whatever the key. */
const forward = (x: number): number => (Math.imul(x, 2053) + 1111) & MASK;
const INVERSE_2053 = (() => { for (let m = 1; m <= MASK; m += 2) if (((m * 2053) & MASK) === 1) return m; throw new Error('no inverse'); })();
const backward = (y: number): number => Math.imul((y - 1111) & MASK, INVERSE_2053) & MASK;

/** A stand-in FF1 with both run paths (bits in integers, or one numeral per bit), keeping every array it was handed. */
function recordingFf1(bitsPath: boolean): { ff1: FF1; seen: (Uint32Array | Uint16Array)[] } {
  const seen: (Uint32Array | Uint16Array)[] = [];
  const ff1 = {
    cryptBitsRun(n: number, input: Uint32Array, _tweak: unknown, decrypt: boolean, out: Uint32Array): boolean {
      if (!bitsPath) return false;
      seen.push(input, out);
      for (let j = 0; j < input.length; j++) out[j] = (decrypt ? backward : forward)(input[j] as number);
      return n === BITS;
    },
    cryptRun(n: number, input: Uint16Array, _tweak: unknown, decrypt: boolean, out: Uint16Array): void {
      seen.push(input, out);
      for (let j = 0; j < input.length / n; j++) {
        let x = 0;
        for (let p = 0; p < n; p++) x = (x << 1) | (input[j * n + p] as number);
        const y = (decrypt ? backward : forward)(x);
        for (let p = 0; p < n; p++) out[j * n + p] = (y >> (n - 1 - p)) & 1;
      }
    },
  } as unknown as FF1;
  return { ff1, seen };
}

describe.each([['bits in integers', true], ['one numeral per bit', false]] as const)('cryptIntegerRunWith (%s)', (_name, bitsPath) => {
  it('puts every value in the domain, decrypts it back, and leaves no bits in its scratch', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: MASK + 1 }).chain((domain) => fc.tuple(
      fc.constant(domain), fc.array(fc.integer({ min: 0, max: domain - 1 }), { minLength: 1, maxLength: 40 }),
    )), ([domain, raw]) => {
      const { ff1, seen } = recordingFf1(bitsPath);
      const values = Int32Array.from(raw);
      const encrypted = new Int32Array(values.length);
      cryptIntegerRunWith(ff1, BITS, domain, values, new Uint8Array(0), false, encrypted);
      for (const y of encrypted) expect(y).toBeLessThan(domain);
      const back = new Int32Array(values.length);
      cryptIntegerRunWith(ff1, BITS, domain, encrypted, new Uint8Array(0), true, back);
      expect([...back]).toEqual(raw);
      expect(seen.length).toBeGreaterThan(0);
      for (const scratch of seen) expect(scratch.every((bit) => bit === 0)).toBe(true);
    }), { numRuns: 200 });
  });
});
