import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { priceKind } from '../../../src/engine/kinds/price.js';
import { PROPERTY_RUNS, decrypt, digitString, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

interface Style { group: string; decimal: string; indian?: boolean }
const STYLES: Style[] = [
  { group: ',', decimal: '.' },
  { group: '.', decimal: ',' },
  { group: '\u202F', decimal: ',' },
  { group: '\u00A0', decimal: ',' },
  { group: ' ', decimal: ',' },
  { group: "'", decimal: '.' },
  { group: '', decimal: '.' },
  { group: ',', decimal: '.', indian: true },
];

function grouped(int: string, style: Style): string {
  if (style.group === '') return int;
  const groups: string[] = [];
  let rest = int;
  groups.unshift(rest.slice(-3));
  rest = rest.slice(0, -3);
  const size = style.indian ? 2 : 3;
  while (rest.length > 0) {
    groups.unshift(rest.slice(-size));
    rest = rest.slice(0, -size);
  }
  return groups.join(style.group);
}

/** A generated price and the integer part it was built with. */
const priceArb = fc
  .record({
    sign: fc.constantFrom('', '-'),
    signAfterCurrency: fc.boolean(),
    currency: fc.constantFrom('', '$', '€', '£', '¥', 'US$', 'EUR', 'CHF', '₹'),
    currencyAfter: fc.boolean(),
    space: fc.constantFrom('', ' ', '\u00A0'),
    style: fc.constantFrom(...STYLES),
    int: fc.oneof(fc.constant('0'), digitString(1, 1).map((d) => String(Math.max(1, Number(d)))), digitString(2, 12).map((d) => `${Math.max(1, Number(d[0]))}${d.slice(1)}`)),
    fraction: fc.option(digitString(1, 3), { nil: undefined }),
  })
  .map((p) => {
    const amount = grouped(p.int, p.style) + (p.fraction === undefined ? '' : p.style.decimal + p.fraction);
    const space = p.currency === '' ? '' : p.space;
    const signed = (inner: string): string => (p.signAfterCurrency && !p.currencyAfter ? inner : p.sign + inner);
    const value = p.currencyAfter || p.currency === ''
      ? p.sign + amount + space + p.currency
      : signed(p.currency + space + (p.signAfterCurrency ? p.sign : '') + amount);
    return { value, intLength: p.int.length };
  });

/** The integer digits of `value`, given how many there are. */
function intDigits(value: string, intLength: number): string {
  return value.replace(/\D/g, '').slice(0, intLength);
}

describe('price kind', () => {
  it('accepts prices in the usual notations', () => {
    for (const ok of ['$1,234.56', '€ 12.345,67', '1 234,50 €', '-$5.00', '$-5.00', 'USD 12.00', '12.00 USD', "CHF 1'234.50",
      '₹1,23,456.00', '1234.56', '12,50 €', 'US$ 3', '1\u202F234,56\u00A0€', '−5,00 €', '£0.99', '¥1,000', '$ 1 234', '0,125 €']) {
      expect(priceKind.isValid(ok, 'en')).toBe(true);
    }
    for (const bad of ['', '$', '$$5', '--5', '-$-5', '$5 €', 'usd 5', '1,2,3', '1,234,5', '1.234,567.8', '1,,234', '5.', '.5',
      '1,234 567', 'five dollars', '$1e5', '0,123,456', '1,23,45']) {
      expect(priceKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('keeps currency, separators, sign and digit count of realistic prices', () => {
    expect(roundTrip(priceKind, '$1,234.56')).toMatch(/^\$[1-9],\d{3}\.\d{2}$/);
    expect(roundTrip(priceKind, '€ 12.345,67')).toMatch(/^€ [1-9]\d\.\d{3},\d{2}$/);
    expect(roundTrip(priceKind, '1 234,50 €')).toMatch(/^[1-9] \d{3},\d{2} €$/);
    expect(roundTrip(priceKind, '-$5.00')).toMatch(/^-\$[1-9]\.\d{2}$/);
    expect(roundTrip(priceKind, '$0.99')).toMatch(/^\$0\.\d{2}$/);
  });

  it('round-trips every generated price, keeping layout, sign and integer digit count', () => {
    fc.assert(
      fc.property(priceArb, ({ value, intLength }) => {
        expect(priceKind.isValid(value, 'en')).toBe(true);
        const [out] = encrypt(priceKind, [value]);
        if (typeof out !== 'string') {
          // Only tiny amounts have fewer than 100 possible values: one digit after a sole 0,
          // or two digits whose first must stay non-zero.
          expect(failureOf(out)).toBe('domain_too_small');
          const digits = value.replace(/\D/g, '');
          expect(digits.startsWith('0') ? digits.length - 1 : digits.length).toBeLessThanOrEqual(digits.startsWith('0') ? 1 : 2);
          return;
        }
        expectSameLayout(value, out);
        expect(decrypt(priceKind, [out])).toEqual([value]);
        const before = intDigits(value, intLength);
        const after = intDigits(out, intLength);
        if (before === '0') expect(after).toBe('0');
        else expect(after[0]).not.toBe('0');
      }),
      PROPERTY_RUNS,
    );
  });

  it('processes a mixed batch, failing only the bad elements', () => {
    const cipher = testCipher();
    const values = ['$1,234.56', 'free', '€ 0,50', '$5', '€ 12.345,67'];
    const out = encrypt(priceKind, values, cipher);
    expect(cipher.calls.numerals).toBe(2);
    expect(out.map(failureOf)).toEqual([undefined, 'invalid_value', undefined, 'domain_too_small', undefined]);
    const back = decrypt(priceKind, [out[0], out[2], out[4]].map(String));
    expect(back).toEqual(['$1,234.56', '€ 0,50', '€ 12.345,67']);
  });

  it('masks to the first significant digit, keeping currency and separators', () => {
    expect(priceKind.mask('$1,234.56', 'en')).toBe('$1,000.00');
    expect(priceKind.mask('€ 12.345,67', 'en')).toBe('€ 10.000,00');
    expect(priceKind.mask('-$5.99', 'en')).toBe('-$5.00');
    expect(priceKind.redact('$1,234.56', 'en')).toBe('$*,***.**');
  });
});
