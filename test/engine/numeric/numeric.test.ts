import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { numericKind } from '../../../src/engine/kinds/numeric.js';
import { PROPERTY_RUNS, decrypt, digitString, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

const numericArb = fc
  .tuple(fc.constantFrom('', '-', '+'), digitString(1, 25), fc.option(digitString(1, 10), { nil: undefined }))
  .map(([sign, int, fraction]) => sign + int + (fraction === undefined ? '' : `.${fraction}`));

/** What fpe can encrypt in a numeric value, by the rules in numeric.ts. */
function encryptable(value: string): { leadingZeros: number; numerals: number; significant: boolean } {
  const [int = '', fraction = ''] = value.replace(/^[-+]/, '').split('.');
  const leadingZeros = /^0*/.exec(int)?.[0].length ?? 0;
  const significant = leadingZeros < int.length;
  return { leadingZeros, numerals: int.length - leadingZeros + fraction.length, significant };
}

/**
 * The cipher refuses domains of fewer than MIN_DOMAIN (100) values: 10^n, or 9·10^(n-1) when the
 * first numeral must stay non-zero (a significant integer part).
 */
function domainTooSmall(value: string): boolean {
  const { numerals, significant } = encryptable(value);
  return (significant ? 9 * 10 ** (numerals - 1) : 10 ** numerals) < 100;
}

describe('numeric kind', () => {
  it('accepts signed decimals and refuses the rest', () => {
    for (const ok of ['42', '-12.50', '+0.003', '0042', '0', '-0.0', '123456789012345678901234567890']) {
      expect(numericKind.isValid(ok, 'en')).toBe(true);
    }
    for (const bad of ['', '-', '.5', '5.', '1,234', '1e5', '--1', '1.2.3', ' 42', '4 2', 'NaN', '٤٢']) {
      expect(numericKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('keeps sign, length and digit count of realistic values', () => {
    const out = roundTrip(numericKind, '-12345.50');
    expect(out).toMatch(/^-[1-9]\d{4}\.\d{2}$/);
    expect(roundTrip(numericKind, '1000000')).toMatch(/^[1-9]\d{6}$/);
    expect(roundTrip(numericKind, '0.75')).toMatch(/^0\.\d\d$/);
  });

  it('keeps leading zeros as padding and encrypts the significant digits', () => {
    expect(roundTrip(numericKind, '000123')).toMatch(/^000[1-9]\d\d$/);
    expect(roundTrip(numericKind, '-00.125')).toMatch(/^-00\.\d{3}$/);
  });

  it('round-trips every numeric value, keeping sign, layout and significant digit count', () => {
    fc.assert(
      fc.property(numericArb, (value) => {
        const [out] = encrypt(numericKind, [value]);
        if (domainTooSmall(value)) {
          expect(failureOf(out)).toBe('domain_too_small');
          return;
        }
        expect(typeof out).toBe('string');
        const output = String(out);
        expectSameLayout(value, output);
        expect(decrypt(numericKind, [output])).toEqual([value]);
        const before = encryptable(value);
        const after = encryptable(output);
        expect(after.leadingZeros).toBe(before.leadingZeros);
        expect(after.significant).toBe(before.significant);
      }),
      PROPERTY_RUNS,
    );
  });

  it('does not encrypt a value with nothing to encrypt', () => {
    expect(encrypt(numericKind, ['0', '-000', '0.5', '7', '-0007', '42']).map(failureOf)).toEqual(Array(6).fill('domain_too_small'));
    expect(roundTrip(numericKind, '420')).toMatch(/^[1-9]\d\d$/);
  });

  it('processes a mixed batch with one cipher call per constraint', () => {
    const cipher = testCipher();
    const values = ['1234.5', 'abc', '0.123', '-98765', '7', '', '0007.25'];
    const out = encrypt(numericKind, values, cipher);
    expect(cipher.calls.numerals).toBe(2);
    expect(cipher.calls.constraints).toEqual([{ leadingNonZero: true }, { leadingNonZero: false }]);
    expect(out.map(failureOf)).toEqual([undefined, 'invalid_value', undefined, undefined, 'domain_too_small', 'invalid_value', undefined]);
    const back = decrypt(numericKind, out.map((o, i) => (typeof o === 'string' ? o : values[i] ?? '')));
    expect([back[0], back[2], back[3], back[6]]).toEqual(['1234.5', '0.123', '-98765', '0007.25']);
  });

  it('masks to the first significant digit, keeping the magnitude', () => {
    expect(numericKind.mask('-1234.56', 'en')).toBe('-1000.00');
    expect(numericKind.mask('0.0042', 'en')).toBe('0.0040');
    expect(numericKind.mask('0042', 'en')).toBe('0040');
    expect(numericKind.mask('0', 'en')).toBe('0');
    expect(numericKind.redact('-12.50', 'en')).toBe('-**.**');
  });
});
