/**
 * US social security numbers: "123-45-6789", "123 45 6789" or "123456789". No area/group/serial
 * rules are checked, so test and placeholder numbers are accepted.
 */
import type { ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { MASK_CHAR, redactLayout } from '../methods/redact.js';
import type { ByteFields, FpeDirection, KindHandler } from './kind.js';
import { DigitSpellings, fpeAllDigitsInPlace, fpeOneSpelled } from './digitSpellings.js';
import { LayoutTweaks, fpeAllDigits, maskAllButLastDigits } from './digitTemplate.js';

const SSN = /^(?:\d{3}-\d{2}-\d{4}|\d{3} \d{2} \d{4}|\d{9})$/;
/** The same three spellings, for fpe in place over bytes. */
const SPELLINGS = new DigitSpellings(['ddd-dd-dddd', 'ddd dd dddd', 'ddddddddd']);

function isSsn(value: string): boolean {
  return SSN.test(value);
}

/**
 * Whether `value` is an ssn (as isValid) in the ranges the SSA issues: area not 000, 666 or
 * 900–999, group not 00, serial not 0000. The kind accepts the others (test numbers); this tells
 * issued numbers from other nine-digit values.
 */
export function isIssuableSsn(value: string): boolean {
  if (!isSsn(value)) return false;
  const digits = value.replace(/[ -]/g, '');
  const area = Number(digits.slice(0, 3));
  return area !== 0 && area !== 666 && area < 900 && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
}

const tweaks = new LayoutTweaks();

export const ssnKind: KindHandler = {
  kind: 'ssn',
  hasLang: false,

  isValid: isSsn,

  /** All nine digits as radix-10 numerals; the separators stay. */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    return fpeAllDigits(values, direction, cipher, isSsn, tweaks, SPELLINGS);
  },

  fpeOne(value: string, direction: FpeDirection, cipher: FpeCipher): string | ElementFailure {
    return fpeOneSpelled(value, direction, cipher, SPELLINGS, tweaks);
  },

  fpeInPlace(fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array): void {
    fpeAllDigitsInPlace(fields, direction, cipher, handled, SPELLINGS, tweaks);
  },

  /** Keeps the last four digits and the separators: "123-45-6789" → "***-**-6789". */
  mask(value: string): string {
    return maskAllButLastDigits(value, 4, MASK_CHAR);
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
