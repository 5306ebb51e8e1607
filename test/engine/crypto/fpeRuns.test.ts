import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import type { NativeFf1 } from '../../../src/engine/crypto/nativeFf1.js';
import { FF1_IMPLEMENTATIONS } from './nativeAddon.js';

/**
 * The run entry points (many values of one length laid end to end, one tweak) against the
 * batch calls they stand for: FF1.cryptRun in TypeScript and native, the cipher's
 * cryptNumeralRun and cryptIntegerRun (numbers, cycle walking) against encryptNumerals and
 * encryptInteger.
 */
const KEY = Buffer.alloc(32, 3);

function valuesOf(run: Uint16Array, n: number): Uint16Array[] {
  return Array.from({ length: run.length / n }, (_, j) => run.slice(j * n, (j + 1) * n));
}

describe.each(FF1_IMPLEMENTATIONS)('FF1.cryptRun (%s)', (_name, addon) => {
  it('gives each value what encrypt / decrypt give it', () => {
    fc.assert(fc.property(
      fc.constantFrom(2, 10, 26, 36, 256), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 12 }), fc.uint8Array({ maxLength: 30 }), fc.boolean(), fc.nat(),
      (radix, extra, count, tweak, decrypt, seed) => {
        const ff1 = new FF1(KEY, radix, addon());
        const n = ff1.minLength + (extra % 30);
        const run = Uint16Array.from({ length: count * n }, (_, p) => (seed * 7919 + p * 104729) % radix);
        const out = new Uint16Array(run.length);
        ff1.cryptRun(n, run, tweak, decrypt, out);
        const expected = decrypt ? ff1.decrypt(valuesOf(run, n), tweak) : ff1.encrypt(valuesOf(run, n), tweak);
        expect(valuesOf(out, n)).toEqual(expected);
      },
    ), { numRuns: 150 });
  });

  it('refuses what encrypt refuses, naming no value', () => {
    const ff1 = new FF1(KEY, 10, addon());
    const out = new Uint16Array(12);
    expect(() => ff1.cryptRun(6, Uint16Array.of(1, 2, 3, 4, 5, 10, 1, 2, 3, 4, 5, 6), new Uint8Array(0), false, out)).toThrow(RangeError);
    expect(() => ff1.cryptRun(5, new Uint16Array(12), new Uint8Array(0), false, out)).toThrow(/whole values/);
    expect(() => ff1.cryptRun(3, new Uint16Array(12), new Uint8Array(0), false, out)).toThrow(/at least 6/);
    const same = new Uint16Array(12);
    expect(() => ff1.cryptRun(6, same, new Uint8Array(0), false, same)).toThrow(/another array/);
    // Views of one buffer that overlap, shifted by a numeral: results would overwrite input still to be read.
    const wide = new Uint16Array(13);
    expect(() => ff1.cryptRun(6, wide.subarray(0, 12), new Uint8Array(0), false, wide.subarray(1, 13))).toThrow(/another array/);
    const bits = new Uint32Array(5);
    expect(() => ff1.cryptBitsRun(22, bits.subarray(0, 4), new Uint8Array(0), false, bits.subarray(1, 5))).toThrow(/another array/);
    expect(ff1.cryptRun(6, wide.subarray(0, 6), new Uint8Array(0), false, wide.subarray(6, 12))).toBeUndefined();
  });
});

/** A build from before cryptBits: integer runs go through FF1 as numerals. */
const withoutBits = (addon: NativeFf1 | null): NativeFf1 | null => (addon === null ? null : {
  createContext: (key) => addon.createContext(key),
  crypt: (...args) => addon.crypt(...args),
  ...(addon.maxBytes === undefined ? {} : { maxBytes: addon.maxBytes }),
});
const CIPHER_FF1S: readonly (readonly [string, () => NativeFf1 | null])[] = [
  ...FF1_IMPLEMENTATIONS,
  ...FF1_IMPLEMENTATIONS.filter(([name]) => name === 'native').map(([, addon]) => ['native without cryptBits', () => withoutBits(addon())] as const),
];

describe.each(CIPHER_FF1S)('cipher runs against the batch calls (%s)', (name, addon) => {
  const cipher = createFpeCipher(KEY, addon());
  it('takes integer runs as bits in integers where the build has them, with the numeral path\'s outputs', () => {
    const loaded = addon();
    let bitCalls = 0;
    const cryptBits = loaded?.cryptBits;
    const counted = loaded === null || cryptBits === undefined ? loaded : {
      ...withoutBits(loaded) as NativeFf1,
      cryptBits: (...args: Parameters<typeof cryptBits>) => {
        bitCalls++;
        cryptBits(...args);
      },
    };
    const values = Int32Array.from({ length: 300 }, (_, j) => (j * 7_919) % 1_048_577);
    const viaCounted = new Int32Array(values.length);
    const viaNumerals = new Int32Array(values.length);
    expect(createFpeCipher(KEY, counted).cryptIntegerRun?.(1_048_577, values, Uint8Array.of(4), false, viaCounted)).toBe(true);
    expect(createFpeCipher(KEY, null).cryptIntegerRun?.(1_048_577, values, Uint8Array.of(4), false, viaNumerals)).toBe(true);
    expect(viaCounted).toEqual(viaNumerals);
    // 1 048 577 is just past 2^20: about half the values walk again, so more than one call.
    expect(bitCalls > 1).toBe(name === 'native');
  });
  if (cipher.cryptNumeralRun === undefined || cipher.cryptIntegerRun === undefined) throw new Error('the AES fpe cipher takes runs');
  const numeralRun = cipher.cryptNumeralRun.bind(cipher);
  const integerRun = cipher.cryptIntegerRun.bind(cipher);

  it('cryptNumeralRun equals encryptNumerals / decryptNumerals, and declines domains below FF1', () => {
    fc.assert(fc.property(fc.integer({ min: 6, max: 20 }), fc.integer({ min: 1, max: 9 }), fc.uint8Array({ maxLength: 12 }), fc.boolean(), fc.nat(), (n, count, tweak, decrypt, seed) => {
      const run = Uint16Array.from({ length: count * n }, (_, p) => (seed + p * 31) % 10);
      const out = new Uint16Array(run.length);
      expect(numeralRun(10, n, run, tweak, decrypt, out)).toBe(true);
      const values = valuesOf(run, n);
      const expected = decrypt ? cipher.decryptNumerals(10, values, tweak) : cipher.encryptNumerals(10, values, tweak);
      expect(valuesOf(out, n)).toEqual(expected);
    }), { numRuns: 100 });
    const small = new Uint16Array(5);
    expect(numeralRun(10, 5, Uint16Array.of(1, 2, 3, 4, 5), new Uint8Array(0), false, small)).toBe(false);
    expect([...small]).toEqual([0, 0, 0, 0, 0]);
  });

  it('cryptIntegerRun equals encryptInteger / decryptInteger, cycle walk included', () => {
    const domains = fc.oneof(fc.integer({ min: 1_000_000, max: 2 ** 31 }), fc.constantFrom(2 ** 20, 2 ** 31, 3_652_059, 1_000_000, 1_048_577));
    fc.assert(fc.property(domains, fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 30 }), fc.uint8Array({ maxLength: 16 }), fc.boolean(), (domain, fractions, tweak, decrypt) => {
      const values = Int32Array.from(fractions, (f) => Math.floor(f * domain));
      const out = new Int32Array(values.length);
      expect(integerRun(domain, values, tweak, decrypt, out)).toBe(true);
      const big = Array.from(values, BigInt);
      const expected = decrypt ? cipher.decryptInteger(BigInt(domain), big, tweak) : cipher.encryptInteger(BigInt(domain), big, tweak);
      expect(Array.from(out, BigInt)).toEqual(expected);
      for (const y of out) expect(y >= 0 && y < domain).toBe(true);
    }), { numRuns: 150 });
  });

  it('cryptIntegerRun declines domains outside [10^6, 2^31] and refuses integers outside the domain', () => {
    const out = new Int32Array(1);
    expect(integerRun(999_999, Int32Array.of(5), new Uint8Array(0), false, out)).toBe(false);
    expect(integerRun(2 ** 31 + 1, Int32Array.of(5), new Uint8Array(0), false, out)).toBe(false);
    expect(integerRun(1.5e6 + 0.5, Int32Array.of(5), new Uint8Array(0), false, out)).toBe(false);
    expect(out[0]).toBe(0);
    expect(() => integerRun(1_000_000, Int32Array.of(1_000_000), new Uint8Array(0), false, out)).toThrow(/outside/);
    expect(() => integerRun(1_000_000, Int32Array.of(-1), new Uint8Array(0), false, out)).toThrow(/outside/);
  });
});
