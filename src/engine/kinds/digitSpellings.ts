import type { FpeCipher } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { LayoutTweaks, NumeralScratch, cryptOneNumerals, digitRunLayout, withDigitCodes } from './digitTemplate.js';
import type { ByteFields, FpeDirection } from './kind.js';
import { NumeralGroups } from './numeralGroups.js';
import { cryptTemplateFieldsInPlace } from './templateFieldsInPlace.js';

/** The first spelled value's digits, read only to learn its spelling (wiped at once). */
const probe = new Uint16Array(64);
/** How many values are read for a first spelling: a batch of other values is not read twice. */
const FIRST_SPELLING_TRIES = 16;

const CODE_0 = 48;
const CODE_9 = 57;
/** A template's digit place, in its bytes: no literal character is 0. */
const DIGIT_PLACE = 0;

/**
 * A kind's fixed spellings as templates ('d' a digit, anything else itself: "ddd-dd-dddd"),
 * matched against bytes: for fpe in place of kinds whose valid values are exactly these
 * spellings, with every digit a free numeral (fpeAllDigits' values).
 */
export class DigitSpellings {
  private readonly templates: readonly Uint8Array[];
  private readonly digitCounts: readonly number[];
  /** digitRunLayout of each template: the tweak fpeAllDigits gives its values. */
  readonly layouts: readonly string[];
  readonly maxDigits: number;

  constructor(templates: readonly string[]) {
    // A literal digit would be taken for a free one when the digits are put back.
    if (templates.some((t) => /\d/.test(t))) throw new RangeError('a spelling template spells digits as d only');
    this.templates = templates.map((t) => Uint8Array.from(t, (c) => (c === 'd' ? DIGIT_PLACE : c.charCodeAt(0))));
    this.digitCounts = templates.map((t) => [...t].filter((c) => c === 'd').length);
    this.layouts = templates.map((t) => digitRunLayout(t.replace(/d/g, '0')));
    this.maxDigits = Math.max(...this.digitCounts);
  }

  /**
   * The index of the template `bytes[start, start + length)` spells, or -1; its digits are then
   * at `numerals[at, at + digitCount)` (0–9 each). Up to maxDigits numerals from `at` may be
   * written whatever it returns.
   */
  matchInto(bytes: Uint8Array, start: number, length: number, numerals: Uint16Array, at: number): number {
    return this.matchCodes(bytes, undefined, start, length, numerals, at);
  }

  /** matchInto for a value given as a string (its UTF-16 code units against the template's bytes). */
  matchTextInto(text: string, numerals: Uint16Array, at: number): number {
    return this.matchCodes(undefined, text, 0, text.length, numerals, at);
  }

  /** One loop for both: the codes of `text` when given, else of `bytes`. */
  private matchCodes(bytes: Uint8Array | undefined, text: string | undefined, start: number, length: number, numerals: Uint16Array, at: number): number {
    const templates = this.templates;
    for (let t = 0; t < templates.length; t++) {
      const template = templates[t] as Uint8Array;
      if (template.length !== length) continue;
      let p = 0;
      let k = at;
      for (; p < length; p++) {
        const code = text !== undefined ? text.charCodeAt(start + p) : ((bytes as Uint8Array)[start + p] as number);
        const want = template[p] as number;
        if (want === DIGIT_PLACE) {
          // Written so that a byte past the buffer (undefined) is no digit either.
          if (!(code >= CODE_0 && code <= CODE_9)) break;
          numerals[k++] = code - CODE_0;
        } else if (code !== want) {
          break;
        }
      }
      if (p === length) return t;
    }
    return -1;
  }

  /** Template `t` as bytes: 0 a digit place, any other byte itself. */
  template(t: number): Uint8Array {
    return this.templates[t] as Uint8Array;
  }

  digitCount(template: number): number {
    return this.digitCounts[template] as number;
  }
}

/**
 * fpeAllDigits over values in bytes, in place, for the values that spell one of `spellings` (see
 * KindHandler.fpeInPlace). Where the cipher can, the fields of the first spelling found go
 * through it in place; the rest digit by digit here.
 */
export function fpeAllDigitsInPlace(
  fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array, spellings: DigitSpellings, tweaks: LayoutTweaks,
): void {
  const { count, buffers, starts, lengths } = fields;
  handled.fill(0, 0, count);
  // The spelling of the first value that has one (among the first few), where the cipher rewrites digits in place itself.
  for (let i = 0; i < Math.min(count, FIRST_SPELLING_TRIES) && cipher.cryptDigitsInPlace !== undefined; i++) {
    const first = spellings.matchInto(buffers[i] as Uint8Array, starts[i] as number, lengths[i] as number, probe, 0);
    if (first < 0) continue;
    const layout = spellings.layouts[first] as string;
    cryptTemplateFieldsInPlace(fields, cipher, spellings.template(first), false, tweaks.get(layout), direction, handled);
    break;
  }
  probe.fill(0);
  const groups = new NumeralGroups(count, spellings.maxDigits);
  try {
    for (let i = 0; i < count; i++) {
      if (handled[i] === 1) continue;
      const template = spellings.matchInto(buffers[i] as Uint8Array, starts[i] as number, lengths[i] as number, groups.numerals, groups.slot());
      if (template < 0) continue;
      const n = spellings.digitCount(template);
      if (!groups.add(template, i, n)) {
        groups.open(template, n, tweaks.get(spellings.layouts[template] as string));
        groups.add(template, i, n);
      }
    }
    groups.crypt(cipher, 10, direction === 'decrypt', (i, result, at) => {
      const bytes = buffers[i] as Uint8Array;
      const start = starts[i] as number;
      let k = at;
      for (let p = start; p < start + (lengths[i] as number); p++) {
        const code = bytes[p] as number;
        if (code >= CODE_0 && code <= CODE_9) bytes[p] = CODE_0 + (result[k++] as number);
      }
      handled[i] = 1;
    });
  } finally {
    groups.wipe();
  }
}

const oneNumerals = new NumeralScratch();

/**
 * fpeOneAllDigits for a kind whose valid values are exactly `spellings`: the same output, read in
 * one pass (no pattern, no layout string to build and look up). The digits read are wiped.
 */
export function fpeOneSpelled(
  value: string, direction: FpeDirection, cipher: FpeCipher, spellings: DigitSpellings, tweaks: LayoutTweaks,
): string | ElementFailure {
  const numerals = oneNumerals.get(spellings.maxDigits);
  const template = spellings.matchTextInto(value, numerals, 0);
  if (template < 0) {
    numerals.fill(0); // a near miss may have left some of its digits
    return INVALID_VALUE;
  }
  const n = spellings.digitCount(template);
  const digits = n === numerals.length ? numerals : oneNumerals.get(n);
  let result: Uint16Array | null;
  try {
    if (digits !== numerals) for (let k = 0; k < n; k++) digits[k] = numerals[k] as number;
    result = cryptOneNumerals(cipher, 10, digits, tweaks.get(spellings.layouts[template] as string), direction);
  } finally {
    numerals.fill(0);
    digits.fill(0);
  }
  return result ? withDigitCodes(value, result) : DOMAIN_TOO_SMALL;
}
