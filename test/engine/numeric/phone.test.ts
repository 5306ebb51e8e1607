import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { phoneKind } from '../../../src/engine/kinds/phone.js';
import type { FpeCipher } from '../../../src/engine/crypto/fpeCipher.js';
import { PROPERTY_RUNS, cipher, decrypt, digitString, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

/** Phone numbers built from the grammar: "+"? group (separator? group)*. */
const phoneArb = fc
  .record({
    plus: fc.boolean(),
    groups: fc.array(fc.tuple(digitString(1, 5), fc.boolean(), fc.constantFrom('', ' ', '-', '.')), { minLength: 1, maxLength: 6 }),
  })
  .map(({ plus, groups }) =>
    (plus ? '+' : '') + groups.map(([digits, paren, sep], i) => (i > 0 ? sep : '') + (paren ? `(${digits})` : digits)).join(''))
  .filter((v) => {
    const n = v.replace(/\D/g, '').length;
    return n >= 3 && n <= 20;
  });

describe('phone kind', () => {
  it('accepts phone layouts and refuses the rest', () => {
    for (const ok of ['+1 (555) 010-4477', '555.010.4477', '+44 20 7946 0958', '(02)9374-4000', '911', '+33 1 23 45 67 89', '0049-(0)30-1234567']) {
      expect(phoneKind.isValid(ok, 'en')).toBe(true);
    }
    for (const bad of ['', '12', '+', '555--0104', '555 ', ' 555', '(555', '555)', '((555))', '+1 555 CALL', '1'.repeat(21), '+-555', '555+0104', '()555']) {
      expect(phoneKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('encrypts +1 (555) 010-4477 into the same shape and back', () => {
    const out = roundTrip(phoneKind, '+1 (555) 010-4477');
    expect(out).toMatch(/^\+\d \(\d{3}\) \d{3}-\d{4}$/);
    expect(out).not.toBe('+1 (555) 010-4477');
  });

  it('round-trips every phone number, keeping its layout', () => {
    fc.assert(
      fc.property(phoneArb, (value) => {
        expect(phoneKind.isValid(value, 'en')).toBe(true);
        const out = roundTrip(phoneKind, value);
        expectSameLayout(value, out);
        expect(phoneKind.isValid(out, 'en')).toBe(true);
      }),
      PROPERTY_RUNS,
    );
  });

  it('reports a domain the cipher finds too small, and still processes the others', () => {
    const smallDomains: FpeCipher = {
      ...cipher,
      encryptNumerals: (radix, values, tweak, constraint) =>
        cipher.encryptNumerals(radix, values, tweak, constraint).map((v, i) => ((values[i]?.length ?? 0) < 4 ? null : v)),
    };
    const out = encrypt(phoneKind, ['911', 'nope', '+1 (555) 010-4477'], smallDomains);
    expect(failureOf(out[0])).toBe('domain_too_small');
    expect(failureOf(out[1])).toBe('invalid_value');
    expect(decrypt(phoneKind, [String(out[2])])).toEqual(['+1 (555) 010-4477']);
  });

  it('refuses invalid elements in a mixed batch, one cipher call for the rest', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(phoneArb, fc.string({ maxLength: 12 })), { maxLength: 20 }), (values) => {
        const counting = testCipher();
        const out = encrypt(phoneKind, values, counting);
        const valid = values.map((v) => phoneKind.isValid(v, 'en'));
        expect(counting.calls.numerals).toBe(valid.some(Boolean) ? 1 : 0);
        out.forEach((o, i) => {
          if (valid[i]) expect(decrypt(phoneKind, [String(o)])).toEqual([values[i]]);
          else expect(failureOf(o)).toBe('invalid_value');
        });
      }),
      { numRuns: 100 },
    );
  });

  it('masks all but the last four digits (hiding at least three) and redacts to the layout', () => {
    expect(phoneKind.mask('+1 (555) 010-4477', 'en')).toBe('+* (***) ***-4477');
    expect(phoneKind.mask('555-0104', 'en')).toBe('***-0104');
    expect(phoneKind.mask('12345', 'en')).toBe('***45');
    expect(phoneKind.mask('911', 'en')).toBe('***');
    expect(phoneKind.mask('+44 20 7946 0958', 'en')).toBe('+** ** **** 0958');
    expect(phoneKind.redact('+1 (555) 010-4477', 'en')).toBe('+* (***) ***-****');
  });
});
