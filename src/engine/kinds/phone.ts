/**
 * Phone numbers as people write them: an optional leading "+", then groups of digits, a group
 * possibly in parentheses, groups separated by at most one space, hyphen or dot:
 * "+1 (555) 010-4477", "555.010.4477", "+44 20 7946 0958", "(02)9374-4000". 3 to 20 digits.
 */
import type { ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { MASK_CHAR, redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';
import { LayoutTweaks, countDigits, fpeAllDigits, fpeOneAllDigits, isDigitCode, maskAllButLastDigits } from './digitTemplate.js';

const MIN_DIGITS = 3;
const MAX_DIGITS = 20;
const MIN_HIDDEN_DIGITS = 3;
/** 20 digits, a "+", and generous separators; longer strings are refused before scanning. */
const MAX_LENGTH = 64;

const PLUS = 43;
const OPEN = 40;
const CLOSE = 41;

function isSeparator(code: number): boolean {
  return code === 32 || code === 45 || code === 46; // space, hyphen, dot
}

/**
 * Scans the grammar  "+"? group (separator? group)*  where group is  digits | "(" digits ")".
 * Two digit groups with nothing between are one group, so the grammar is unambiguous.
 */
function isPhone(value: string): boolean {
  if (value.length === 0 || value.length > MAX_LENGTH) return false;
  let i = value.charCodeAt(0) === PLUS ? 1 : 0;
  for (;;) {
    // One group.
    const parenthesised = value.charCodeAt(i) === OPEN;
    if (parenthesised) i++;
    const start = i;
    while (i < value.length && isDigitCode(value.charCodeAt(i))) i++;
    if (i === start) return false;
    if (parenthesised) {
      if (value.charCodeAt(i) !== CLOSE) return false;
      i++;
    }
    if (i === value.length) break;
    // An optional separator, then another group must follow.
    if (isSeparator(value.charCodeAt(i))) i++;
    if (i === value.length) return false;
  }
  const digits = countDigits(value);
  return digits >= MIN_DIGITS && digits <= MAX_DIGITS;
}

const tweaks = new LayoutTweaks();

export const phoneKind: KindHandler = {
  kind: 'phone',
  hasLang: false,

  isValid: isPhone,

  /** All digits as radix-10 numerals; "+", parentheses and separators stay in place. */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    return fpeAllDigits(values, direction, cipher, isPhone, tweaks);
  },

  fpeOne(value: string, direction: FpeDirection, cipher: FpeCipher): string | ElementFailure {
    return fpeOneAllDigits(value, direction, cipher, isPhone, tweaks);
  },

  /**
   * Keeps the layout and the last four digits, always hiding at least three, so a short number
   * never comes back whole: "+1 (555) 010-4477" → "+* (***) ***-4477", "12345" → "***45".
   */
  mask(value: string): string {
    return maskAllButLastDigits(value, Math.min(4, countDigits(value) - MIN_HIDDEN_DIGITS), MASK_CHAR);
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
