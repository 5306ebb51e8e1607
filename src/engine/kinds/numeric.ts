/**
 * Decimal numbers as text: an optional sign, integer digits, an optional "." and fraction digits
 * ("42", "-12.50", "+0.003", "0042"). Also the digit rules that price shares.
 *
 * Leading zeros: "0042" is accepted. Leading zeros of the integer part are not significant, so fpe
 * keeps them as they are and encrypts the rest with a non-zero first digit: "0042.5" stays
 * "00dd.d" with the first d in 1–9. The value's magnitude (significant digit count) and its
 * zero padding both survive, and decrypt finds the same split again. An integer part of only
 * zeros ("0.50", "00.7") is kept whole; then only the fraction is encrypted.
 */
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';
import { LayoutTweaks, digitRunLayout, digitsOf, maskToFirstSignificantDigit, withDigits } from './digitTemplate.js';

const NUMERIC = /^[-+]?\d+(?:\.\d+)?$/;

function isNumeric(value: string): boolean {
  return NUMERIC.test(value);
}

/** A number reduced to its digits: the integer part is digits[0, intDigits), then the fraction. */
export interface DecimalDigits {
  readonly digits: Uint16Array;
  readonly intDigits: number;
  /** The value's digitRunLayout (or any string that tells its layouts apart). */
  readonly layout: string;
}

/**
 * fpe of numbers whose digit count and sign must survive, for numeric and price: `parse` says
 * which values are of the kind and where their integer part ends; digits are replaced in place.
 */
export function fpeDecimalValues(
  values: readonly string[],
  parse: (value: string) => DecimalDigits | null,
  direction: FpeDirection,
  cipher: FpeCipher,
  tweaks: LayoutTweaks,
): (string | ElementFailure)[] {
  const out = new Array<string | ElementFailure>(values.length).fill(INVALID_VALUE);
  const indexes: number[] = [];
  const items: DecimalDigits[] = [];
  values.forEach((value, i) => {
    const parsed = parse(value);
    if (!parsed) return;
    indexes.push(i);
    items.push(parsed);
  });
  const results = fpeDecimalDigits(items, direction, cipher, tweaks);
  indexes.forEach((index, k) => {
    const digits = results[k];
    out[index] = digits instanceof Uint16Array ? withDigits(values[index] ?? '', digits) : (digits ?? DOMAIN_TOO_SMALL);
  });
  return out;
}

/**
 * The digits of numbers whose digit count and sign must survive. Per value: leading
 * zeros of the integer part stay; the remaining digits are numerals, first one non-zero when the
 * integer part has a significant digit (leadingNonZero), otherwise (integer part all zeros) only
 * fraction digits, any digit. One cipher call per constraint for the whole batch. Returns the
 * new digits, same length, or DOMAIN_TOO_SMALL (also when nothing is left to encrypt, as in "0").
 */
function fpeDecimalDigits(
  items: readonly DecimalDigits[],
  direction: FpeDirection,
  cipher: FpeCipher,
  tweaks: LayoutTweaks,
): (Uint16Array | ElementFailure)[] {
  const out = new Array<Uint16Array | ElementFailure>(items.length).fill(DOMAIN_TOO_SMALL);
  const fixedZeros = new Array<number>(items.length).fill(0);
  const significant = new NumeralBatch(true);
  const fractionOnly = new NumeralBatch(false);
  items.forEach((item, i) => {
    let zeros = 0;
    while (zeros < item.intDigits && item.digits[zeros] === 0) zeros++;
    fixedZeros[i] = zeros;
    if (zeros === item.digits.length) return; // nothing to encrypt: a domain of one value
    // The fixed-zero count goes first so that the tweak string stays unambiguous.
    (zeros < item.intDigits ? significant : fractionOnly).add(i, item.digits.subarray(zeros), tweaks.get(`${zeros}/${item.layout}`));
  });
  for (const batch of [significant, fractionOnly]) {
    batch.run(direction, cipher, (index, numerals) => {
      const digits = new Uint16Array(items[index]?.digits.length ?? 0); // the fixed zeros are 0 already
      digits.set(numerals, fixedZeros[index] ?? 0);
      out[index] = digits;
    });
  }
  return out;
}

/** Numeral strings that share a constraint, sent to the cipher in one call. */
class NumeralBatch {
  private readonly indexes: number[] = [];
  private readonly numerals: Uint16Array[] = [];
  private readonly tweaks: Uint8Array[] = [];

  constructor(private readonly leadingNonZero: boolean) {}

  add(index: number, numerals: Uint16Array, tweak: Uint8Array): void {
    this.indexes.push(index);
    this.numerals.push(numerals);
    this.tweaks.push(tweak);
  }

  /** Calls `done` for each value the cipher transformed; values it found too small are skipped. */
  run(direction: FpeDirection, cipher: FpeCipher, done: (index: number, numerals: Uint16Array) => void): void {
    if (this.indexes.length === 0) return;
    const constraint = { leadingNonZero: this.leadingNonZero };
    const results = direction === 'encrypt'
      ? cipher.encryptNumerals(10, this.numerals, this.tweaks, constraint)
      : cipher.decryptNumerals(10, this.numerals, this.tweaks, constraint);
    this.indexes.forEach((index, k) => {
      const numerals = results[k];
      if (numerals) done(index, numerals);
    });
  }
}

function decimalDigitsOf(value: string): DecimalDigits {
  const dot = value.indexOf('.');
  const intEnd = dot < 0 ? value.length : dot;
  const signed = value.charCodeAt(0) === 45 || value.charCodeAt(0) === 43;
  return { digits: digitsOf(value), intDigits: intEnd - (signed ? 1 : 0), layout: digitRunLayout(value) };
}

const tweaks = new LayoutTweaks();

export const numericKind: KindHandler = {
  kind: 'numeric',
  hasLang: false,

  isValid: isNumeric,

  /** Same sign, same length, same significant digit count (see the file comment). */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    return fpeDecimalValues(values, (v) => (isNumeric(v) ? decimalDigitsOf(v) : null), direction, cipher, tweaks);
  },

  /** Keeps sign, leading zeros and the first significant digit; the rest become 0: "-1234.56" → "-1000.00". */
  mask(value: string): string {
    return maskToFirstSignificantDigit(value);
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
