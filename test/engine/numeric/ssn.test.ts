import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ssnKind } from '../../../src/engine/kinds/ssn.js';
import { PROPERTY_RUNS, decrypt, digitString, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

const ssnArb = fc
  .tuple(digitString(9, 9), fc.constantFrom('-', ' ', ''))
  .map(([d, sep]) => `${d.slice(0, 3)}${sep}${d.slice(3, 5)}${sep}${d.slice(5)}`);

describe('ssn kind', () => {
  it('accepts the three layouts only', () => {
    for (const ok of ['123-45-6789', '123 45 6789', '123456789', '000-00-0000']) expect(ssnKind.isValid(ok, 'en')).toBe(true);
    for (const bad of ['123-456-789', '123-45 6789', '12345678', '1234567890', '123-45-678a', ' 123-45-6789', 'ssn']) {
      expect(ssnKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('encrypts 123-45-6789 into the same hyphen layout and back', () => {
    const out = roundTrip(ssnKind, '123-45-6789');
    expect(out).toMatch(/^\d{3}-\d{2}-\d{4}$/);
    expect(out).not.toBe('123-45-6789');
  });

  it('round-trips every ssn, keeping its layout', () => {
    fc.assert(
      fc.property(ssnArb, (value) => {
        const out = roundTrip(ssnKind, value);
        expectSameLayout(value, out);
      }),
      PROPERTY_RUNS,
    );
  });

  it('refuses non-ssn strings in a mixed batch, one cipher call for the rest', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(ssnArb, fc.string({ maxLength: 12 })), { maxLength: 20 }), (values) => {
        const cipher = testCipher();
        const out = encrypt(ssnKind, values, cipher);
        const valid = values.map((v) => ssnKind.isValid(v, 'en'));
        expect(cipher.calls.numerals).toBe(valid.some(Boolean) ? 1 : 0);
        out.forEach((o, i) => {
          if (valid[i]) expect(decrypt(ssnKind, [String(o)])).toEqual([values[i]]);
          else expect(failureOf(o)).toBe('invalid_value');
        });
      }),
      { numRuns: 100 },
    );
  });

  it('masks to the last four and redacts to the layout', () => {
    expect(ssnKind.mask('123-45-6789', 'en')).toBe('***-**-6789');
    expect(ssnKind.mask('123456789', 'en')).toBe('*****6789');
    expect(ssnKind.redact('123-45-6789', 'en')).toBe('***-**-****');
  });
});
