import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import type { FpeDirection } from './kind.js';

/**
 * A value seen as ASCII digits placed in a template of fixed characters: "123-45-6789" is the
 * digits 123456789 in the template "ddd-dd-dddd". Digit kinds (ccn, ssn, phone, numeric, price,
 * latlng) encrypt or mask the digits and put them back into the same template.
 */

const CODE_0 = 48;
const CODE_9 = 57;

/** "0"…"9", indexed by numeral, so formatting never calls String.fromCharCode per digit. */
export const DIGIT_CHARS: readonly string[] = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

export function isDigitCode(code: number): boolean {
  return code >= CODE_0 && code <= CODE_9;
}

export function countDigits(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) if (isDigitCode(value.charCodeAt(i))) count++;
  return count;
}

/** The digits of `value` in order, as numerals 0–9. */
export function digitsOf(value: string): Uint16Array {
  const digits = new Uint16Array(countDigits(value));
  let k = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isDigitCode(code)) digits[k++] = code - CODE_0;
  }
  return digits;
}

/**
 * `value` with its digits replaced, in order, by `digits` (numerals 0–9); every other character
 * stays where it is. `digits` must have exactly as many entries as `value` has digits.
 */
export function withDigits(value: string, digits: ArrayLike<number>): string {
  // Pieces joined once, not `+=` per character: a number may have thousands of digits (see maskText).
  const out = new Array<string>(value.length);
  let k = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    out[i] = isDigitCode(code) ? (DIGIT_CHARS[digits[k++] ?? 0] ?? '0') : value[i] as string;
  }
  return out.join('');
}

/**
 * The template of `value` with each run of digits written as its length: "123-45-6789" → "3-2-4",
 * "+1 (555) 010-4477" → "+1 (3) 3-4". Runs are maximal and the fixed characters are not digits,
 * so two values share this string exactly when they differ only in their digits. Short, because
 * it goes into the FF1 tweak, and a longer tweak costs AES blocks in every round.
 */
export function digitRunLayout(value: string): string {
  let out = '';
  let run = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isDigitCode(code)) {
      run++;
    } else {
      if (run > 0) out += String(run);
      run = 0;
      out += value[i];
    }
  }
  if (run > 0) out += String(run);
  return out;
}

/**
 * Tweak bytes by layout string, so a request of same-shaped values encodes each layout once.
 * Bounded: a stream of odd layouts cannot grow it without limit.
 */
export class LayoutTweaks {
  private readonly byLayout = new Map<string, Uint8Array>();
  private static readonly LIMIT = 1024;

  get(layout: string): Uint8Array {
    let tweak = this.byLayout.get(layout);
    if (tweak === undefined) {
      if (this.byLayout.size >= LayoutTweaks.LIMIT) this.byLayout.clear();
      tweak = new Uint8Array(Buffer.from(layout, 'utf8'));
      this.byLayout.set(layout, tweak);
    }
    return tweak;
  }
}

/** A kind's fixed spellings (digitSpellings.ts' DigitSpellings), as fpeAllDigits reads values with them. */
export interface SpellingReader {
  /** The index of the spelling `text` has, its digits written to numerals[at…]; -1 for none. */
  matchTextInto(text: string, numerals: Uint16Array, at: number): number;
  digitCount(spelling: number): number;
  /** digitRunLayout of each spelling. */
  readonly layouts: readonly string[];
  readonly maxDigits: number;
}

/**
 * fpe for kinds whose every digit is a free radix-10 numeral (ssn, phone): one cipher call for
 * the whole batch, each value tweaked by its layout, digits put back in the same template. A kind
 * whose valid values are exactly a few spellings passes them: each value is then read in one pass.
 */
export function fpeAllDigits(
  values: readonly string[],
  direction: FpeDirection,
  cipher: FpeCipher,
  isValid: (value: string) => boolean,
  tweaks: LayoutTweaks,
  spellings?: SpellingReader,
): (string | ElementFailure)[] {
  const out = new Array<string | ElementFailure>(values.length).fill(INVALID_VALUE);
  const indexes: number[] = [];
  const numerals: Uint16Array[] = [];
  const valueTweaks: Uint8Array[] = [];
  const read = spellings === undefined ? undefined : new Uint16Array(spellings.maxDigits);
  values.forEach((value, i) => {
    if (spellings !== undefined && read !== undefined) {
      const spelling = spellings.matchTextInto(value, read, 0);
      if (spelling < 0) return;
      indexes.push(i);
      numerals.push(read.slice(0, spellings.digitCount(spelling)));
      valueTweaks.push(tweaks.get(spellings.layouts[spelling] as string));
      return;
    }
    if (!isValid(value)) return;
    indexes.push(i);
    numerals.push(digitsOf(value));
    valueTweaks.push(tweaks.get(digitRunLayout(value)));
  });
  read?.fill(0);
  if (indexes.length === 0) return out;
  const results = direction === 'encrypt'
    ? cipher.encryptNumerals(10, numerals, valueTweaks)
    : cipher.decryptNumerals(10, numerals, valueTweaks);
  indexes.forEach((index, k) => {
    const digits = results[k];
    out[index] = digits ? withDigitCodes(values[index] ?? '', digits) : DOMAIN_TOO_SMALL;
  });
  return out;
}

/** Numeral buffers by length, reused by single-value calls (they are synchronous). */
export class NumeralScratch {
  private readonly byLength: Uint16Array[] = [];
  private static readonly LONGEST = 64;

  /** A buffer of `length` numerals; the same one on every call with that length (short lengths). */
  get(length: number): Uint16Array {
    if (length > NumeralScratch.LONGEST) return new Uint16Array(length);
    let buffer = this.byLength[length];
    if (buffer === undefined) {
      buffer = new Uint16Array(length);
      this.byLength[length] = buffer;
    }
    return buffer;
  }
}

const oneInput = new NumeralScratch();
const oneOutput = new NumeralScratch();

/**
 * Encrypts or decrypts one value's numerals with `tweak`: the cipher's single-value path where it
 * has one, else its batch of one. The result may be a reused buffer: read it before the next call.
 */
export function cryptOneNumerals(cipher: FpeCipher, radix: number, numerals: Uint16Array, tweak: Uint8Array, direction: FpeDirection): Uint16Array | null {
  if (cipher.cryptNumeralsInto) {
    const out = oneOutput.get(numerals.length);
    return cipher.cryptNumeralsInto(radix, numerals, tweak, direction === 'decrypt', out) ? out : null;
  }
  const results = direction === 'encrypt' ? cipher.encryptNumerals(radix, [numerals], [tweak]) : cipher.decryptNumerals(radix, [numerals], [tweak]);
  return results[0] ?? null;
}

/** fpeAllDigits for one value: the same output, without the batch's arrays. */
export function fpeOneAllDigits(
  value: string,
  direction: FpeDirection,
  cipher: FpeCipher,
  isValid: (value: string) => boolean,
  tweaks: LayoutTweaks,
): string | ElementFailure {
  if (!isValid(value)) return INVALID_VALUE;
  const numerals = oneInput.get(countDigits(value));
  let k = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isDigitCode(code)) numerals[k++] = code - CODE_0;
  }
  const digits = cryptOneNumerals(cipher, 10, numerals, tweaks.get(digitRunLayout(value)), direction);
  return digits ? withDigitCodes(value, digits) : DOMAIN_TOO_SMALL;
}

/** Character-code arrays by length, reused by withDigitCodes (it is synchronous). */
const codesByLength: number[][] = [];
const LONGEST_REUSED_CODES = 128;

/** withDigits, built from character codes in one String.fromCharCode call (cheaper than concatenating). */
export function withDigitCodes(value: string, digits: ArrayLike<number>): string {
  const length = value.length;
  let codes = codesByLength[length];
  if (codes === undefined) {
    codes = new Array<number>(length).fill(0);
    if (length <= LONGEST_REUSED_CODES) codesByLength[length] = codes;
  }
  let k = 0;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    codes[i] = isDigitCode(code) ? CODE_0 + (digits[k++] ?? 0) : code;
  }
  return String.fromCharCode.apply(null, codes);
}

/**
 * Mask for numbers: keeps every non-digit (sign, currency, separators), the leading zeros and
 * the first significant digit; every later digit becomes 0. "$1,234.56" → "$1,000.00",
 * "0.0042" → "0.0040": still a number of the same magnitude, with one significant digit.
 */
export function maskToFirstSignificantDigit(value: string): string {
  // Pieces joined once, not `+=` per character (see withDigits).
  const out = new Array<string>(value.length);
  let seenSignificant = false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (!isDigitCode(code)) {
      out[i] = value[i] as string;
    } else if (seenSignificant) {
      out[i] = '0';
    } else {
      out[i] = value[i] as string;
      seenSignificant = code !== CODE_0;
    }
  }
  return out.join('');
}

/**
 * Mask keeping the last `keep` digits: every earlier digit becomes `maskChar`, every other
 * character stays. "123-45-6789" with keep 4 → "***-**-6789".
 */
export function maskAllButLastDigits(value: string, keep: number, maskChar: string): string {
  let hide = countDigits(value) - keep;
  // Pieces joined once, not `+=` per character (see withDigits).
  const out = new Array<string>(value.length);
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isDigitCode(code) && hide > 0) {
      out[i] = maskChar;
      hide--;
    } else {
      out[i] = value[i] as string;
    }
  }
  return out.join('');
}
