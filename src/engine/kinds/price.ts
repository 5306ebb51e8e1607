/**
 * Prices: an optional sign, an optional currency before or after the amount (a currency symbol
 * such as "$" "€" "¥", a symbol with a one- or two-letter prefix such as "US$" "R$", or a
 * three-letter ISO code such as "EUR"), with an optional space (also NBSP, narrow NBSP), and an
 * amount with group and decimal separators: "$1,234.56", "€ 12.345,67", "1 234,50 €",
 * "-$5.00", "CHF 1'234.50", "₹1,23,456.00", "1234.56" (plain amounts, as in numeric columns).
 *
 * Which separator is decimal is read from the layout only, so fpe output parses the same way:
 * - the last "." or "," is decimal when it occurs once and another separator precedes it
 *   ("1,234.56", "12.345,67", "1 234,50");
 * - a lone "." is decimal ("12.5", "1.599"); a lone "," is decimal ("12,50") unless it is
 *   followed by exactly three digits after one to three digits not starting with 0 ("1,234"
 *   is one thousand ..., "0,125" is one eighth);
 * - space, NBSP, narrow NBSP and "'" only ever group.
 * Grouping must be regular: one group character, the last integer group of 3 digits, the
 * others of 2 or 3 (Indian lakh grouping is accepted), the first of 1 to 3 not starting with 0.
 * Each rule looks only at separators, run lengths and whether the amount starts with 0, all of
 * which fpe keeps, so an fpe output is parsed exactly as its input was.
 */
import type { ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';
import { LayoutTweaks, digitRunLayout, digitsOf, isDigitCode, maskToFirstSignificantDigit } from './digitTemplate.js';
import { fpeDecimalValues, type DecimalDigits } from './numeric.js';

const SIGN = '[-+\\u2212]';
const CURRENCY = '(?:\\p{Sc}|[A-Z]{1,2}\\p{Sc}|[A-Z]{3})';
const SPACE = '[ \\u00A0\\u202F]';
const AMOUNT = "\\d+(?:[.,' \\u00A0\\u202F]\\d+)*";
/** Groups: 1 sign, 2 currency before, 3 sign after it, 4 amount, 5 currency after. */
const PRICE = new RegExp(
  `^(${SIGN})?(?:(${CURRENCY})${SPACE}?)?(${SIGN})?(${AMOUNT})(?:${SPACE}?(${CURRENCY}))?$`,
  'u',
);
/** Far more than any price; keeps the regex and the scan cheap on hostile input. */
const MAX_LENGTH = 128;

/**
 * The number of integer digits of an amount such as "12.345,67" (here 5), or -1 when its
 * separators do not make a number (see the file comment for the rules).
 */
function integerDigitCount(amount: string): number {
  const runs: number[] = [];
  const separators: string[] = [];
  let run = 0;
  for (let i = 0; i < amount.length; i++) {
    if (isDigitCode(amount.charCodeAt(i))) {
      run++;
    } else {
      runs.push(run);
      separators.push(amount[i] ?? '');
      run = 0;
    }
  }
  runs.push(run);
  const last = separators[separators.length - 1];
  if (last === undefined) return run;

  let decimal = false;
  if ((last === '.' || last === ',') && separators.indexOf(last) === separators.length - 1) {
    const looksLikeThousands = last === ',' && separators.length === 1 && run === 3 && (runs[0] ?? 0) <= 3
      && amount.charCodeAt(0) !== 48;
    decimal = separators.length > 1 || !looksLikeThousands;
  }
  const groupSeparators = decimal ? separators.slice(0, -1) : separators;
  const integerRuns = decimal ? runs.slice(0, -1) : runs;
  if (groupSeparators.some((s) => s !== groupSeparators[0])) return -1;
  if (groupSeparators.length > 0) {
    if (amount.charCodeAt(0) === 48) return -1; // a grouped integer never starts with 0
    const groups = integerRuns.length;
    for (let g = 0; g < groups; g++) {
      const size = integerRuns[g] ?? 0;
      const ok = g === 0 ? size >= 1 && size <= 3 : g === groups - 1 ? size === 3 : size === 2 || size === 3;
      if (!ok) return -1;
    }
  }
  return integerRuns.reduce((sum, size) => sum + size, 0);
}

/** The digits of a price and how many belong to the integer part, or null when it is no price. */
function parsePrice(value: string): DecimalDigits | null {
  if (value.length > MAX_LENGTH) return null;
  const match = PRICE.exec(value);
  if (!match) return null;
  const [, signBefore, currencyBefore, signAfter, amount, currencyAfter] = match;
  if (amount === undefined) return null;
  if (signBefore !== undefined && signAfter !== undefined) return null;
  if (currencyBefore !== undefined && currencyAfter !== undefined) return null;
  const intDigits = integerDigitCount(amount);
  if (intDigits < 0) return null;
  return { digits: digitsOf(value), intDigits, layout: digitRunLayout(value) };
}

const tweaks = new LayoutTweaks();

export const priceKind: KindHandler = {
  kind: 'price',
  hasLang: false,

  isValid(value: string): boolean {
    return parsePrice(value) !== null;
  },

  /**
   * Same sign, currency, separators and length; the integer part keeps its digit count (first
   * digit non-zero, leading zeros kept), fraction digits are any digit.
   */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    return fpeDecimalValues(values, parsePrice, direction, cipher, tweaks);
  },

  /** Keeps sign, currency, separators and the first significant digit: "$1,234.56" → "$1,000.00". */
  mask(value: string): string {
    return maskToFirstSignificantDigit(value);
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
