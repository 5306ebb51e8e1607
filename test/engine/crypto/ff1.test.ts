import { FF1 as NobleFF1 } from '@noble/ciphers/ff1.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { referenceFf1 } from './referenceFf1.js';

const key32 = new Uint8Array(32).map((_, i) => i * 7 + 1);

describe('FF1 radix 65536 and the reference transcription', () => {
  it('the reference agrees with noble (so it can stand in where noble cannot go)', () => {
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      fc.constantFrom(10, 36, 1000, 65535),
      fc.uint8Array({ maxLength: 20 }),
      fc.boolean(),
      (key, radix, tweak, decrypt) => {
        const x = Array.from({ length: 8 }, (_, i) => (i * 7919) % radix);
        const noble = NobleFF1(radix, key, tweak);
        expect(referenceFf1(key, radix, x, tweak, decrypt)).toEqual(decrypt ? noble.decrypt(x) : noble.encrypt(x));
      },
    ), { numRuns: 30 });
  });

  it('radix 65536 matches the reference on every arithmetic path and round-trips', () => {
    fc.assert(fc.property(
      fc.constantFrom(16, 24, 32).chain((len) => fc.uint8Array({ minLength: len, maxLength: len })),
      fc.array(fc.integer({ min: 2, max: 24 }).chain((n) =>
        fc.array(fc.integer({ min: 0, max: 65535 }), { minLength: n, maxLength: n })), { minLength: 1, maxLength: 6 }),
      fc.uint8Array({ maxLength: 40 }),
      (key, xs, tweak) => {
        const ff1 = new FF1(key, 65536);
        const values = xs.map((x) => Uint16Array.from(x));
        const out = ff1.encrypt(values, tweak);
        xs.forEach((x, j) => expect(Array.from(out[j] as Uint16Array)).toEqual(referenceFf1(key, 65536, x, tweak, false)));
        expect(ff1.decrypt(out, tweak).map((x) => Array.from(x))).toEqual(xs);
      },
    ), { numRuns: 40 });
  });
});

describe('FF1 argument checks', () => {
  it('refuses radixes outside 2..65536 and keys that are not AES keys', () => {
    expect(() => new FF1(key32, 1)).toThrow(RangeError);
    expect(() => new FF1(key32, 65537)).toThrow(RangeError);
    expect(() => new FF1(key32, 10.5)).toThrow(RangeError);
    expect(() => new FF1(new Uint8Array(20), 10)).toThrow(RangeError);
  });

  it('enforces radix^length >= 10^6 (NIST SP 800-38G Rev.1)', () => {
    const ff1 = new FF1(key32, 10);
    expect(ff1.minLength).toBe(6);
    expect(() => ff1.encrypt([new Uint16Array(5)], new Uint8Array(0))).toThrow(RangeError);
    expect(ff1.encrypt([new Uint16Array(6)], new Uint8Array(0))[0]).toHaveLength(6);
    expect(new FF1(key32, 2).minLength).toBe(20);
    expect(new FF1(key32, 1000).minLength).toBe(2);
    expect(new FF1(key32, 65536).minLength).toBe(2);
  });

  it('refuses numerals outside the radix and a wrong number of tweaks', () => {
    const ff1 = new FF1(key32, 10);
    expect(() => ff1.encrypt([Uint16Array.of(1, 2, 3, 4, 5, 10)], new Uint8Array(0))).toThrow(RangeError);
    const x = new Uint16Array(8);
    expect(() => ff1.encrypt([x, x], [new Uint8Array(0)])).toThrow(RangeError);
  });

  it('handles an empty batch and keeps the order of a batch with mixed lengths and tweaks', () => {
    const ff1 = new FF1(key32, 10);
    expect(ff1.encrypt([], new Uint8Array(0))).toEqual([]);
    const values = [6, 9, 6, 15, 9].map((n, j) => Uint16Array.from({ length: n }, (_, i) => (i + j) % 10));
    const tweaks = [0, 1, 20, 1, 0].map((t) => new Uint8Array(t).fill(t));
    const batched = ff1.encrypt(values, tweaks);
    values.forEach((x, j) => expect(batched[j]).toEqual(ff1.encrypt([x], tweaks[j] as Uint8Array)[0]));
  });

  it('does not show key material when inspected', () => {
    expect(JSON.stringify({ ff1: new FF1(key32, 10) })).not.toMatch(/\d{3,}/);
  });
});
