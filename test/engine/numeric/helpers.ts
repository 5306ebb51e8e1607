/** Shared checks for the digit kinds' tests: the cipher under test, round-trip and layout. */
import { expect } from 'vitest';
import fc from 'fast-check';
import type { FpeCipher, NumeralConstraint, Tweaks } from '../../../src/engine/crypto/fpeCipher.js';
import { isElementFailure, type ElementFailure } from '../../../src/engine/errors.js';
import type { KindHandler } from '../../../src/engine/kinds/kind.js';
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';

export interface CountedCipher extends FpeCipher {
  readonly calls: { numerals: number; integers: number; constraints: (NumeralConstraint | undefined)[] };
}

/** Wraps a cipher and counts its calls, to check that a kind batches a request. */
export function counted(inner: FpeCipher): CountedCipher {
  const calls = { numerals: 0, integers: 0, constraints: [] as (NumeralConstraint | undefined)[] };
  return {
    calls,
    encryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint) {
      calls.numerals++;
      calls.constraints.push(constraint);
      return inner.encryptNumerals(radix, values, tweak, constraint);
    },
    decryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint) {
      calls.numerals++;
      calls.constraints.push(constraint);
      return inner.decryptNumerals(radix, values, tweak, constraint);
    },
    encryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks) {
      calls.integers++;
      return inner.encryptInteger(domain, values, tweak);
    },
    decryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks) {
      calls.integers++;
      return inner.decryptInteger(domain, values, tweak);
    },
  };
}

/** A fixed test key: outputs are the same on every run, so a failure reproduces. */
const TEST_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const realCipher = createFpeCipher(TEST_KEY);

/** The real FF1-based cipher with the fixed test key, counting calls. */
export function testCipher(): CountedCipher {
  return counted(realCipher);
}

export const cipher = testCipher();

export function encrypt(kind: KindHandler, values: readonly string[], c: FpeCipher = cipher): (string | ElementFailure)[] {
  return kind.fpe(values, 'encrypt', c, 'en');
}

export function decrypt(kind: KindHandler, values: readonly string[], c: FpeCipher = cipher): (string | ElementFailure)[] {
  return kind.fpe(values, 'decrypt', c, 'en');
}

/** Encrypts one value that must succeed, checks that it decrypts back, returns the output. */
export function roundTrip(kind: KindHandler, value: string): string {
  const [out] = encrypt(kind, [value]);
  if (typeof out !== 'string') throw new Error(`fpe failed: ${out?.failure ?? 'no result'}`);
  expect(decrypt(kind, [out])).toEqual([value]);
  return out;
}

/** Same length, the same non-digit characters in the same places, digits where digits were. */
export function expectSameLayout(input: string, output: string): void {
  expect(output.length).toBe(input.length);
  for (let i = 0; i < input.length; i++) {
    const a = input[i] ?? '';
    const b = output[i] ?? '';
    if (/\d/.test(a)) expect(b).toMatch(/^\d$/);
    else expect(b).toBe(a);
  }
}

export function failureOf(result: string | ElementFailure | undefined): string | undefined {
  return isElementFailure(result) ? result.failure : undefined;
}

/** A string of `min`–`max` decimal digits. */
export function digitString(min: number, max: number): fc.Arbitrary<string> {
  return fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((ds) => ds.join(''));
}

export const PROPERTY_RUNS = { numRuns: 300 };
