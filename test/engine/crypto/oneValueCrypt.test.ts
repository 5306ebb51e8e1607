import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { FF1_IMPLEMENTATIONS } from './nativeAddon.js';

const KEY = Buffer.alloc(32, 0x3c);
/** Radixes whose FF1 takes each arithmetic path (plain numbers, bytes, BigInt) and the one-value shortcut or not. */
const RADIXES = [2, 10, 26, 36, 256, 1000, 65536] as const;

/** A numeral string for `radix` of a length FF1 takes, up to a few past the addon's range. */
function numerals(radix: number, minLength: number): fc.Arbitrary<Uint16Array> {
  return fc.integer({ min: minLength, max: minLength + 24 }).chain((n) =>
    fc.array(fc.integer({ min: 0, max: radix - 1 }), { minLength: n, maxLength: n }).map((x) => Uint16Array.from(x)));
}

describe.each(FF1_IMPLEMENTATIONS)('FF1.cryptInto (%s)', (_name, addon) => {
  it.each(RADIXES)('gives what encrypt and decrypt of a batch of one give, radix %i', (radix) => {
    const ff1 = new FF1(KEY, radix, addon());
    fc.assert(fc.property(numerals(radix, ff1.minLength), fc.uint8Array({ maxLength: 40 }), (x, tweak) => {
      const out = new Uint16Array(x.length);
      ff1.cryptInto(x, tweak, false, out);
      expect([...out]).toEqual([...(ff1.encrypt([x], tweak)[0] as Uint16Array)]);
      const back = new Uint16Array(x.length);
      ff1.cryptInto(out, tweak, true, back);
      expect([...back]).toEqual([...x]);
      expect([...back]).toEqual([...(ff1.decrypt([out], [tweak])[0] as Uint16Array)]);
    }), { numRuns: 40 });
  });

  it('refuses what the batch refuses: short values, numerals out of range, the input as output', () => {
    const ff1 = new FF1(KEY, 10, addon());
    const out = new Uint16Array(3);
    expect(() => ff1.cryptInto(Uint16Array.of(1, 2, 3), new Uint8Array(0), false, out)).toThrow(RangeError);
    const x = Uint16Array.of(1, 2, 3, 4, 5, 6, 7, 10);
    expect(() => ff1.cryptInto(x, new Uint8Array(0), false, new Uint16Array(8))).toThrow(RangeError);
    const y = Uint16Array.of(1, 2, 3, 4, 5, 6, 7, 8);
    expect(() => ff1.cryptInto(y, new Uint8Array(0), false, y)).toThrow(RangeError);
  });
});

describe('FpeCipher.cryptNumeralsInto', () => {
  const cipher = createFpeCipher(KEY);

  it('gives what encryptNumerals and decryptNumerals give, small domains and leadingNonZero included', () => {
    const value = fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(
      fc.constantFrom(2, 10, 16, 36),
      fc.boolean(),
      fc.array(fc.nat(), { minLength: n, maxLength: n }),
      fc.uint8Array({ maxLength: 12 }),
    ));
    fc.assert(fc.property(value, ([radix, leadingNonZero, raw, tweak]) => {
      const x = Uint16Array.from(raw, (r) => r % radix);
      if (leadingNonZero && x[0] === 0) x[0] = 1;
      const constraint = { leadingNonZero };
      const out = new Uint16Array(x.length);
      const expected = cipher.encryptNumerals(radix, [x], tweak, constraint)[0] ?? null;
      const ok = cipher.cryptNumeralsInto?.(radix, x, tweak, false, out, constraint);
      expect(ok).toBe(expected !== null);
      if (expected === null) return;
      expect([...out]).toEqual([...expected]);
      const back = new Uint16Array(x.length);
      expect(cipher.cryptNumeralsInto?.(radix, out, tweak, true, back, constraint)).toBe(true);
      expect([...back]).toEqual([...x]);
    }), { numRuns: 150 });
  });

  it('refuses a leading 0 under leadingNonZero, as the batch does', () => {
    const x = Uint16Array.of(0, 1, 2, 3, 4, 5, 6);
    expect(() => cipher.encryptNumerals(10, [x], new Uint8Array(0), { leadingNonZero: true })).toThrow(RangeError);
    expect(() => cipher.cryptNumeralsInto?.(10, x, new Uint8Array(0), false, new Uint16Array(7), { leadingNonZero: true })).toThrow(RangeError);
  });
});
