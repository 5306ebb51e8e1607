import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fromBaseDigits, fromMixedRadix, mixedRadixDomain, toBaseDigits, toMixedRadix,
} from '../../../src/engine/scripts/mixedRadix.js';

/** The plain digit-by-digit reference. */
function reference(digits: readonly number[], radices: readonly number[]): bigint {
  return digits.reduce((acc, d, i) => acc * BigInt(radices[i] as number) + BigInt(d), 0n);
}

const digitsAndRadices = fc
  .array(fc.integer({ min: 1, max: 42_720 }), { minLength: 0, maxLength: 200 })
  .chain((radices) => fc.tuple(fc.constant(radices), fc.tuple(...radices.map((r) => fc.integer({ min: 0, max: r - 1 })))));

describe('mixed radix', () => {
  it('agrees with the digit-by-digit reference and round trips', () => {
    fc.assert(
      fc.property(digitsAndRadices, ([radices, digits]) => {
        const value = fromMixedRadix(digits, radices);
        expect(value).toBe(reference(digits, radices));
        expect(value < mixedRadixDomain(radices)).toBe(true);
        expect(toMixedRadix(value, radices)).toEqual(digits);
      }),
      { numRuns: 200 },
    );
  });

  it('has the product of the radices as its domain', () => {
    expect(mixedRadixDomain([])).toBe(1n);
    expect(mixedRadixDomain([26, 26, 10])).toBe(6760n);
  });

  it('refuses a value outside the domain', () => {
    expect(() => toMixedRadix(6760n, [26, 26, 10])).toThrow(RangeError);
    expect(() => toMixedRadix(-1n, [26])).toThrow(RangeError);
  });

  it('writes a positive number in one base without leading zeros', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 1n << 2000n }), fc.integer({ min: 2, max: 21_000 }), (value, base) => {
        const digits = toBaseDigits(value, base);
        expect(digits[0]).not.toBe(0);
        expect(fromBaseDigits(digits, base)).toBe(value);
      }),
      { numRuns: 200 },
    );
    expect(toBaseDigits(52n, 52)).toEqual([1, 0]);
    expect(toBaseDigits(1n, 52)).toEqual([1]);
  });
});
