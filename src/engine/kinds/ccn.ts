/**
 * Payment card numbers: 12–19 digits, optionally in groups separated by single spaces or single
 * hyphens (one kind of separator per number): "4111 1111 1111 1111", "4111-1111-1111-1111",
 * "4111111111111111", "3782 822463 10005". The Luhn check is not required (test numbers exist).
 *
 * fpe encrypts every digit but the last; the last is then set so that the output's Luhn state
 * equals the input's: check = luhn(body) + delta, delta = (input check − luhn(input body)) mod 10.
 * A valid card stays valid, an invalid one stays invalid by the same delta, and decrypt finds the
 * delta again from its input, so every number round-trips.
 *
 * This is the benchmark path: charCodeAt loops into one preallocated Uint16Array, no regex and
 * no per-value string building but the output itself, one cipher call per request.
 */
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { offHeapUint16Array } from '../crypto/offHeapSlab.js';
import { MASK_CHAR, redactLayout } from '../methods/redact.js';
import type { ByteFields, FpeDirection, KindHandler } from './kind.js';
import { NumeralGroups } from './numeralGroups.js';
import { cryptTemplateFieldsInPlace, templateOf } from './templateFieldsInPlace.js';
import { LayoutTweaks, NumeralScratch, cryptOneNumerals, digitRunLayout, maskAllButLastDigits } from './digitTemplate.js';

const MIN_DIGITS = 12;
const MAX_DIGITS = 19;
const MAX_LENGTH = 2 * MAX_DIGITS - 1;
const SPACE = 32;
const HYPHEN = 45;
const CODE_0 = 48;

/** Luhn doubling of a digit: 2d, minus 9 when that has two digits. */
const LUHN_DOUBLE = new Uint8Array([0, 2, 4, 6, 8, 1, 3, 5, 7, 9]);

/** The check digit that makes `body[start, end)` followed by it Luhn-valid. */
function luhnCheckDigit(body: Uint16Array, start: number, end: number): number {
  let sum = 0;
  let doubled = true; // the digit next to the check digit is doubled
  for (let j = end - 1; j >= start; j--) {
    const d = body[j] ?? 0;
    sum += doubled ? (LUHN_DOUBLE[d] ?? 0) : d;
    doubled = !doubled;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * Parses `value` into `digits[offset, offset + count)` and returns a number that identifies its
 * layout (digit count, separator character, separator positions), or -1 when it is no ccn.
 */
function parseInto(value: string, digits: Uint16Array, offset: number): number {
  return parseCodesInto(value, 0, value.length, digits, offset);
}

/**
 * parseInto over `source[start, start + length)`: a string's characters or UTF-8 bytes (the
 * kind is ASCII, so a character and a byte past it are alike refused).
 */
function parseCodesInto(source: string | Uint8Array, start: number, length: number, digits: Uint16Array, offset: number): number {
  if (length < MIN_DIGITS || length > MAX_LENGTH) return -1;
  const text = typeof source === 'string' ? source : undefined;
  let count = 0;
  let separator = 0;
  let gaps = 0; // bit g: a separator follows digit g
  let afterDigit = false;
  for (let i = 0; i < length; i++) {
    const code = text !== undefined ? text.charCodeAt(start + i) : ((source as Uint8Array)[start + i] as number);
    const digit = code - CODE_0;
    if (digit >= 0 && digit <= 9) {
      if (count === MAX_DIGITS) return -1;
      digits[offset + count++] = digit;
      afterDigit = true;
    } else if ((code === SPACE || code === HYPHEN) && afterDigit && (separator === 0 || separator === code)) {
      separator = code;
      gaps |= 1 << (count - 1);
      afterDigit = false;
    } else {
      return -1;
    }
  }
  if (!afterDigit || count < MIN_DIGITS) return -1;
  // count < 20, separator kind < 3, gaps < 2^18: distinct layouts get distinct keys below 2^24.
  return count + 20 * (separator === 0 ? 0 : separator === SPACE ? 1 : 2) + 60 * gaps;
}

/** Tweak per layout key; the tweak bytes are the digit-run layout ("4 4 4 4"), short on purpose. */
const tweaksByLayoutKey = new Map<number, Uint8Array>();
const layoutTweaks = new LayoutTweaks();
const TWEAK_CACHE_LIMIT = 1024;

function tweakFor(layoutKey: number, value: string): Uint8Array {
  let tweak = tweaksByLayoutKey.get(layoutKey);
  if (tweak === undefined) {
    if (tweaksByLayoutKey.size >= TWEAK_CACHE_LIMIT) tweaksByLayoutKey.clear();
    tweak = layoutTweaks.get(digitRunLayout(value));
    tweaksByLayoutKey.set(layoutKey, tweak);
  }
  return tweak;
}

/** Reused by isValid: parsing is synchronous, so one buffer serves every call. */
const scratchDigits = new Uint16Array(MAX_DIGITS);

function isCcn(value: string): boolean {
  return parseInto(value, scratchDigits, 0) >= 0;
}

/**
 * Whether `value` is a card number (as isValid) whose last digit is its Luhn check digit. The
 * kind accepts numbers failing Luhn; this tells real card numbers from other long digit runs.
 */
export function isLuhnValidCcn(value: string): boolean {
  const layoutKey = parseInto(value, scratchDigits, 0);
  if (layoutKey < 0) return false;
  const count = layoutKey % 20;
  return luhnCheckDigit(scratchDigits, 0, count - 1) === scratchDigits[count - 1];
}

/** The first card number's digits in fpeInPlace, read only to learn its layout (wiped at once). */
const probe = new Uint16Array(MAX_DIGITS);
/** How many values fpeInPlace reads for a first layout: a batch of other values is not parsed twice. */
const FIRST_LAYOUT_TRIES = 16;

/** fpeOne's digits and card bodies (one per body length), reused: a call is synchronous. */
const oneDigits = new Uint16Array(MAX_DIGITS);
const oneBodies = new NumeralScratch();

/** One reusable array of character codes per output length (formatting is synchronous). */
const codesByLength: number[][] = Array.from({ length: MAX_LENGTH + 1 }, (_, n) => new Array<number>(n).fill(0));

/**
 * `value` with its digits replaced by `body` (all but the last) and `check` (the last). Built
 * from character codes in one String.fromCharCode call: measured twice as fast as concatenation.
 */
function format(value: string, body: Uint16Array, check: number): string {
  const length = value.length;
  const codes = codesByLength[length] ?? new Array<number>(length);
  let k = 0;
  for (let i = 0; i < length - 1; i++) {
    const code = value.charCodeAt(i);
    codes[i] = code === SPACE || code === HYPHEN ? code : CODE_0 + (body[k++] ?? 0);
  }
  codes[length - 1] = CODE_0 + check;
  return String.fromCharCode.apply(null, codes);
}

export const ccnKind: KindHandler = {
  kind: 'ccn',
  hasLang: false,

  isValid: isCcn,

  /** All digits but the last as radix-10 numerals; the last keeps the input's Luhn state. */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    const n = values.length;
    const out = new Array<string | ElementFailure>(n);
    const digits = offHeapUint16Array(n * MAX_DIGITS);
    const { buffer: memory, byteOffset } = digits;
    const checkDelta = new Uint8Array(n);
    const indexes: number[] = [];
    const bodies: Uint16Array[] = [];
    const tweaks: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      const value = values[i] ?? '';
      const offset = i * MAX_DIGITS;
      const layoutKey = parseInto(value, digits, offset);
      if (layoutKey < 0) {
        out[i] = INVALID_VALUE;
        continue;
      }
      const count = layoutKey % 20;
      const bodyEnd = offset + count - 1;
      checkDelta[i] = ((digits[bodyEnd] ?? 0) - luhnCheckDigit(digits, offset, bodyEnd) + 10) % 10;
      indexes.push(i);
      // A view by constructor: subarray() costs more, per value.
      bodies.push(new Uint16Array(memory, byteOffset + offset * 2, count - 1));
      tweaks.push(tweakFor(layoutKey, value));
    }
    if (indexes.length === 0) return out;
    const results = direction === 'encrypt'
      ? cipher.encryptNumerals(10, bodies, tweaks)
      : cipher.decryptNumerals(10, bodies, tweaks);
    for (let k = 0; k < indexes.length; k++) {
      const i = indexes[k] ?? 0;
      const body = results[k];
      if (!body) {
        out[i] = DOMAIN_TOO_SMALL;
        continue;
      }
      const check = (luhnCheckDigit(body, 0, body.length) + (checkDelta[i] ?? 0)) % 10;
      out[i] = format(values[i] ?? '', body, check);
    }
    return out;
  },

  /**
   * fpe over bytes in place: any spelling the kind accepts (they all keep their length). Where
   * the cipher can, the numbers of the first layout found go through it in place; the rest digit
   * by digit here.
   */
  fpeInPlace(fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array): void {
    const { count, buffers, starts, lengths } = fields;
    handled.fill(0, 0, count);
    // The layout of the first card number (among the first few values), where the cipher rewrites digits in place itself.
    for (let i = 0; i < Math.min(count, FIRST_LAYOUT_TRIES) && cipher.cryptDigitsInPlace !== undefined; i++) {
      const bytes = buffers[i] as Uint8Array;
      const start = starts[i] as number;
      const length = lengths[i] as number;
      const layoutKey = parseCodesInto(bytes, start, length, probe, 0);
      if (layoutKey < 0) continue;
      const tweak = tweakFor(layoutKey, String.fromCharCode(...bytes.subarray(start, start + length)));
      cryptTemplateFieldsInPlace(fields, cipher, templateOf(bytes, start, length), true, tweak, direction, handled);
      break;
    }
    probe.fill(0);
    const groups = new NumeralGroups(count, MAX_DIGITS);
    const checkDelta = new Uint8Array(count);
    try {
      for (let i = 0; i < count; i++) {
        if (handled[i] === 1) continue;
        const bytes = buffers[i] as Uint8Array;
        const start = starts[i] as number;
        const length = lengths[i] as number;
        const offset = groups.slot();
        const layoutKey = parseCodesInto(bytes, start, length, groups.numerals, offset);
        if (layoutKey < 0) continue;
        const n = (layoutKey % 20) - 1;
        const bodyEnd = offset + n;
        checkDelta[i] = ((groups.numerals[bodyEnd] ?? 0) - luhnCheckDigit(groups.numerals, offset, bodyEnd) + 10) % 10;
        if (!groups.add(layoutKey, i, n)) {
          groups.open(layoutKey, n, tweakFor(layoutKey, String.fromCharCode(...bytes.subarray(start, start + length))));
          groups.add(layoutKey, i, n);
        }
      }
      groups.crypt(cipher, 10, direction === 'decrypt', (i, body, at, n) => {
        const bytes = buffers[i] as Uint8Array;
        const start = starts[i] as number;
        const end = start + (lengths[i] as number) - 1;
        let k = at;
        for (let p = start; p < end; p++) {
          const code = bytes[p] as number;
          if (code !== SPACE && code !== HYPHEN) bytes[p] = CODE_0 + (body[k++] as number);
        }
        bytes[end] = CODE_0 + ((luhnCheckDigit(body, at, at + n) + (checkDelta[i] as number)) % 10);
        handled[i] = 1;
      });
    } finally {
      groups.wipe();
      checkDelta.fill(0);
    }
  },

  /** fpe of one value: the same steps over reused buffers. */
  fpeOne(value: string, direction: FpeDirection, cipher: FpeCipher): string | ElementFailure {
    const layoutKey = parseInto(value, oneDigits, 0);
    if (layoutKey < 0) return INVALID_VALUE;
    const bodyLength = (layoutKey % 20) - 1;
    const body = oneBodies.get(bodyLength);
    for (let k = 0; k < bodyLength; k++) body[k] = oneDigits[k] as number;
    const checkDelta = ((oneDigits[bodyLength] ?? 0) - luhnCheckDigit(oneDigits, 0, bodyLength) + 10) % 10;
    const result = cryptOneNumerals(cipher, 10, body, tweakFor(layoutKey, value), direction);
    if (!result) return DOMAIN_TOO_SMALL;
    return format(value, result, (luhnCheckDigit(result, 0, bodyLength) + checkDelta) % 10);
  },

  /** Keeps the last four digits and the separators: "4111 1111 1111 1111" → "**** **** **** 1111". */
  mask(value: string): string {
    return maskAllButLastDigits(value, 4, MASK_CHAR);
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
