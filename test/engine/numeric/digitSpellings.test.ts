/** One value through its kind's fixed spellings: the same as the general digit path, whatever each spelling's digit count. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import { INVALID_VALUE } from '../../../src/engine/errors.js';
import { DigitSpellings, fpeOneSpelled } from '../../../src/engine/kinds/digitSpellings.js';
import { fpeOneAllDigits, LayoutTweaks } from '../../../src/engine/kinds/digitTemplate.js';

const cipher = createFpeCipher(Buffer.alloc(32, 0x5a));
// Spellings of 6, 8 and 12 digits: a value of fewer digits than the longest is read into the
// longest spelling's numerals first, then moved to numerals of its own length.
const TEMPLATES = ['dddddd', 'dd-dddd-dd', 'ddd.ddd.ddd.ddd'];
const spellings = new DigitSpellings(TEMPLATES);
const spelled = (value: string): boolean => TEMPLATES.some((t) => t.length === value.length && [...t].every((c, i) => (c === 'd' ? /\d/.test(value[i] as string) : c === value[i])));

const valueOf = fc.constantFrom(...TEMPLATES).chain((template) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: template.length, maxLength: template.length })
    .map((digits) => [...template].map((c, i) => (c === 'd' ? String(digits[i]) : c)).join('')));

describe('fpeOneSpelled', () => {
  it('gives what fpeOneAllDigits gives, for spellings of different digit counts, and decrypts back', () => {
    const tweaks = new LayoutTweaks();
    fc.assert(fc.property(valueOf, (value) => {
      const protectedValue = fpeOneSpelled(value, 'encrypt', cipher, spellings, tweaks);
      expect(protectedValue).toBe(fpeOneAllDigits(value, 'encrypt', cipher, spelled, tweaks));
      expect(typeof protectedValue).toBe('string');
      expect((protectedValue as string).replace(/\d/g, 'd')).toBe(value.replace(/\d/g, 'd'));
      expect(fpeOneSpelled(protectedValue as string, 'decrypt', cipher, spellings, tweaks)).toBe(value);
    }), { numRuns: 300 });
  });

  it('refuses a value of no spelling, and the next value is read afresh', () => {
    const tweaks = new LayoutTweaks();
    expect(fpeOneSpelled('12-3456-7x', 'encrypt', cipher, spellings, tweaks)).toBe(INVALID_VALUE);
    expect(fpeOneSpelled('123456', 'encrypt', cipher, spellings, tweaks)).toBe(fpeOneAllDigits('123456', 'encrypt', cipher, spelled, tweaks));
  });
});
