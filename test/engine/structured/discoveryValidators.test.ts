import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIssuableSsn, isLuhnValidCcn, isValueOfKind } from '../../../src/engine/index.js';

/** The textbook Luhn check, written independently of the engine's. */
function referenceLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

const digitString = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

describe('engine validators discovery uses', () => {
  it('isLuhnValidCcn agrees with the textbook Luhn check on every card-length digit run', () => {
    fc.assert(fc.property(digitString(12, 19), (digits) => {
      expect(isLuhnValidCcn(digits)).toBe(referenceLuhn(digits));
    }));
  });

  it('isLuhnValidCcn reads grouped numbers as the kind does, and refuses what the kind refuses', () => {
    expect(isLuhnValidCcn('4111 1111 1111 1111')).toBe(true);
    expect(isLuhnValidCcn('4111-1111-1111-1111')).toBe(true);
    expect(isLuhnValidCcn('4111 1111 1111 1112')).toBe(false);
    expect(isValueOfKind('ccn', '4111 1111 1111 1112')).toBe(true);
    expect(isLuhnValidCcn('4111 1111-1111 1111')).toBe(false);
    expect(isLuhnValidCcn('41111111')).toBe(false);
    expect(isLuhnValidCcn('4111 1111 1111 111x')).toBe(false);
  });

  it('isIssuableSsn takes only ssns outside the ranges the SSA never issues', () => {
    fc.assert(fc.property(digitString(9, 9), fc.constantFrom('', '-', ' '), (d, sep) => {
      const value = `${d.slice(0, 3)}${sep}${d.slice(3, 5)}${sep}${d.slice(5)}`;
      const area = Number(d.slice(0, 3));
      const issuable = area !== 0 && area !== 666 && area < 900 && d.slice(3, 5) !== '00' && d.slice(5) !== '0000';
      expect(isIssuableSsn(value)).toBe(issuable);
      expect(isValueOfKind('ssn', value)).toBe(true);
    }));
    expect(isIssuableSsn('123-45-678')).toBe(false);
    expect(isIssuableSsn('123-456789')).toBe(false);
  });

  it('isValueOfKind uses the kind\'s own parser', () => {
    expect(isValueOfKind('email', 'a@example.com')).toBe(true);
    expect(isValueOfKind('email', 'a@example')).toBe(false);
    expect(isValueOfKind('date', '2024-02-30')).toBe(false);
    expect(isValueOfKind('ipv4', '10.0.0.256')).toBe(false);
    expect(isValueOfKind('uuid', 'f47ac10b-58cc-4372-a567-0e02b2c3d479')).toBe(true);
  });
});
