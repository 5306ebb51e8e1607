import { FF1 as NobleFF1 } from '@noble/ciphers/ff1.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { feistelArithmeticFor, type FeistelArithmetic } from '../../../src/engine/crypto/ff1Halves.js';
import { minLengthForDomain } from '../../../src/engine/crypto/ff1Params.js';

/** noble's FF1 is the oracle: a straightforward, separately written implementation. */
function nobleCrypt(key: Uint8Array, radix: number, x: Uint16Array, tweak: Uint8Array, decrypt: boolean): number[] {
  const cipher = NobleFF1(radix, key, tweak);
  return decrypt ? cipher.decrypt(Array.from(x)) : cipher.encrypt(Array.from(x));
}

const keyArb = fc.constantFrom(16, 24, 32).chain((len) => fc.uint8Array({ minLength: len, maxLength: len }));
const tweakArb = fc.uint8Array({ maxLength: 40 });

interface Case {
  key: Uint8Array;
  radix: number;
  values: Uint16Array[];
  tweaks: Uint8Array[];
  sharedTweak: boolean;
}

/** A batch of values of mixed lengths in [minLen, maxLen], shared or per-value tweaks. */
function caseArb(radixArb: fc.Arbitrary<number>, extraLength: (radix: number) => [number, number]): fc.Arbitrary<Case> {
  return fc.record({ key: keyArb, radix: radixArb }).chain(({ key, radix }) => {
    const minLength = Math.max(2, minLengthForDomain(radix, 1_000_000));
    const [from, to] = extraLength(radix);
    const value = fc.integer({ min: minLength + from, max: minLength + to }).chain((n) =>
      fc.array(fc.integer({ min: 0, max: radix - 1 }), { minLength: n, maxLength: n }).map((xs) => Uint16Array.from(xs)));
    return fc.record({
      key: fc.constant(key),
      radix: fc.constant(radix),
      values: fc.array(value, { minLength: 1, maxLength: 12 }),
      sharedTweak: fc.boolean(),
      tweaks: fc.array(tweakArb, { minLength: 12, maxLength: 12 }),
    });
  });
}

function checkCase({ key, radix, values, tweaks, sharedTweak }: Case): void {
  const ff1 = new FF1(key, radix);
  const perValue = values.map((_, j) => (sharedTweak ? tweaks[0] : tweaks[j]) as Uint8Array);
  const cipher = ff1.encrypt(values, sharedTweak ? perValue[0] as Uint8Array : perValue);
  expect(cipher.length).toBe(values.length);
  values.forEach((x, j) => {
    expect(Array.from(cipher[j] as Uint16Array)).toEqual(nobleCrypt(key, radix, x, perValue[j] as Uint8Array, false));
  });
  const plain = ff1.decrypt(cipher, perValue);
  expect(plain.map((x) => Array.from(x))).toEqual(values.map((x) => Array.from(x)));
  // one value per call (its own code path) and decrypt are checked against noble as well
  values.forEach((x, j) => {
    const [alone] = ff1.encrypt([x], perValue[j] as Uint8Array);
    expect(Array.from(alone as Uint16Array)).toEqual(nobleCrypt(key, radix, x, perValue[j] as Uint8Array, false));
    const [back] = ff1.decrypt([x], perValue[j] as Uint8Array);
    expect(Array.from(back as Uint16Array)).toEqual(nobleCrypt(key, radix, x, perValue[j] as Uint8Array, true));
  });
}

describe('FF1 against @noble/ciphers', () => {
  it('agrees over random keys, radixes, lengths, tweaks and mixed batches', () => {
    const radix = fc.oneof(fc.constantFrom(2, 10, 26, 36, 256, 11172, 65535), fc.integer({ min: 2, max: 65535 }));
    fc.assert(fc.property(caseArb(radix, () => [0, 30]), checkCase), { numRuns: 150 });
  });

  const paths: [FeistelArithmetic, string, fc.Arbitrary<number>, (radix: number) => [number, number]][] = [
    ['number', 'radix 10/26/36, up to radix^v <= 2^44', fc.constantFrom(10, 26, 36), (r) => [0, r === 10 ? 20 : 8]],
    ['number', 'radix 2, up to 88 bits', fc.constant(2), () => [0, 68]],
    ['bytes', 'radix 256 beyond 11 bytes', fc.constant(256), () => [9, 60]],
    ['bigint', 'radix 10, long values (multi-block Q, S over 16 bytes)', fc.constant(10), () => [21, 110]],
    ['bigint', 'radix 2, long values', fc.constant(2), () => [70, 200]],
    ['bigint', 'large radixes (11172, 65535)', fc.constantFrom(11172, 65535), () => [5, 30]],
  ];
  for (const [path, title, radix, lengths] of paths) {
    it(`agrees on the ${path} path: ${title}`, () => {
      fc.assert(fc.property(caseArb(radix, lengths), (c) => {
        for (const x of c.values) expect(feistelArithmeticFor(c.radix, x.length)).toBe(path);
        checkCase(c);
      }), { numRuns: 40 });
    });
  }

  it('covers the three arithmetic paths', () => {
    expect(feistelArithmeticFor(10, 15)).toBe('number');
    expect(feistelArithmeticFor(10, 26)).toBe('number');
    expect(feistelArithmeticFor(10, 27)).toBe('bigint');
    expect(feistelArithmeticFor(256, 10)).toBe('number');
    expect(feistelArithmeticFor(256, 12)).toBe('bytes');
    expect(feistelArithmeticFor(2, 88)).toBe('number');
    expect(feistelArithmeticFor(2, 89)).toBe('bigint');
    expect(feistelArithmeticFor(11172, 6)).toBe('number');
    expect(feistelArithmeticFor(11172, 8)).toBe('bigint');
  });
});
