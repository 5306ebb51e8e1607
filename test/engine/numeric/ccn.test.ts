import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ccnKind } from '../../../src/engine/kinds/ccn.js';
import { PROPERTY_RUNS, decrypt, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

function luhnValid(value: string): boolean {
  const digits = value.replace(/\D/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** Luhn "delta": how far the check digit is from the one that makes the number valid. */
function luhnDelta(value: string): number {
  const digits = value.replace(/\D/g, '');
  const last = Number(digits[digits.length - 1]);
  for (let c = 0; c < 10; c++) if (luhnValid(digits.slice(0, -1) + String(c))) return (last - c + 10) % 10;
  throw new Error('unreachable');
}

/** Card numbers of 12–19 digits, grouped at random by one kind of separator. */
const ccnArb = fc
  .record({
    digits: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 19 }),
    separator: fc.constantFrom('', ' ', '-'),
    gaps: fc.array(fc.boolean(), { minLength: 18, maxLength: 18 }),
  })
  .map(({ digits, separator, gaps }) =>
    digits.map((d, i) => (i > 0 && gaps[i - 1] ? separator : '') + String(d)).join(''));

/** Makes the last digit a valid Luhn check digit. */
function withValidCheck(value: string): string {
  for (let c = 0; c < 10; c++) {
    const candidate = value.slice(0, -1) + String(c);
    if (luhnValid(candidate)) return candidate;
  }
  throw new Error('unreachable');
}

describe('ccn kind', () => {
  it('accepts the usual card layouts and refuses the rest', () => {
    for (const ok of ['4111 1111 1111 1111', '4111111111111111', '4111-1111-1111-1111', '3782 822463 10005', '411111111111', '4111111111111111111', '4111 1111 1111 1112']) {
      expect(ccnKind.isValid(ok, 'en')).toBe(true);
    }
    for (const bad of ['', '41111111111', '41111111111111111111', '4111  1111 1111 1111', '4111 1111-1111 1111', ' 4111111111111111', '4111111111111111 ', '-4111111111111111', '4111 1111 1111 111a', '4111.1111.1111.1111', '４111111111111111']) {
      expect(ccnKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('keeps the layout and the Luhn validity of a real test card', () => {
    const out = roundTrip(ccnKind, '4111 1111 1111 1111');
    expectSameLayout('4111 1111 1111 1111', out);
    expect(out).not.toBe('4111 1111 1111 1111');
    expect(luhnValid(out)).toBe(true);
    expect(roundTrip(ccnKind, '4111-1111-1111-1111')).toMatch(/^\d{4}-\d{4}-\d{4}-\d{4}$/);
    expect(roundTrip(ccnKind, '4111111111111111')).toMatch(/^\d{16}$/);
  });

  it('keeps an invalid check digit invalid by the same delta', () => {
    const out = roundTrip(ccnKind, '4111 1111 1111 1112');
    expect(luhnValid(out)).toBe(false);
    expect(luhnDelta(out)).toBe(luhnDelta('4111 1111 1111 1112'));
  });

  it('gives different layouts different permutations', () => {
    const [spaced, plain] = encrypt(ccnKind, ['4111 1111 1111 1111', '4111111111111111']);
    expect(typeof spaced).toBe('string');
    expect(String(spaced).replace(/ /g, '')).not.toBe(plain);
  });

  it('round-trips any card number, keeping layout and Luhn state', () => {
    fc.assert(
      fc.property(ccnArb, fc.boolean(), (raw, makeValid) => {
        const value = makeValid ? withValidCheck(raw) : raw;
        const out = roundTrip(ccnKind, value);
        expectSameLayout(value, out);
        expect(ccnKind.isValid(out, 'en')).toBe(true);
        expect(luhnDelta(out)).toBe(luhnDelta(value));
        if (makeValid) expect(luhnValid(out)).toBe(true);
      }),
      PROPERTY_RUNS,
    );
  });

  it('refuses non-card strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (value) => {
        fc.pre(!ccnKind.isValid(value, 'en'));
        expect(failureOf(encrypt(ccnKind, [value])[0])).toBe('invalid_value');
        expect(failureOf(decrypt(ccnKind, [value])[0])).toBe('invalid_value');
      }),
      PROPERTY_RUNS,
    );
  });

  it('processes a mixed batch in one cipher call, failing only the bad elements', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(ccnArb, fc.constantFrom('hello', '1234', '', '4111 1111 1111 111x')), { maxLength: 30 }), (values) => {
        const cipher = testCipher();
        const out = encrypt(ccnKind, values, cipher);
        const valid = values.map((v) => ccnKind.isValid(v, 'en'));
        expect(cipher.calls.numerals).toBe(valid.some(Boolean) ? 1 : 0);
        out.forEach((o, i) => {
          if (valid[i]) expect(typeof o).toBe('string');
          else expect(failureOf(o)).toBe('invalid_value');
        });
        const back = decrypt(ccnKind, out.map((o, i) => (typeof o === 'string' ? o : values[i] ?? '')), cipher);
        expect(back.map((b, i) => (valid[i] ? b : values[i]))).toEqual(values);
      }),
      { numRuns: 100 },
    );
  });

  it('masks all but the last four digits and redacts to the layout', () => {
    expect(ccnKind.mask('4111 1111 1111 1111', 'en')).toBe('**** **** **** 1111');
    expect(ccnKind.mask('4111-1111-1111-1234', 'en')).toBe('****-****-****-1234');
    expect(ccnKind.mask('378282246310005', 'en')).toBe('***********0005');
    expect(ccnKind.redact('4111 1111 1111 1111', 'en')).toBe('**** **** **** ****');
  });
});
