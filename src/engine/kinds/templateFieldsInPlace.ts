import type { FpeCipher, Tweak } from '../crypto/fpeCipher.js';
import type { ByteFields, FpeDirection } from './kind.js';

/** Fewer fields of one buffer in a row go the kind's own way: a native call per few fields costs more than it saves. */
const MIN_FIELDS_PER_CALL = 8;
/** The digit places (besides a check digit) the cipher's in-place path takes. */
const MIN_DIGITS = 6;
const MAX_DIGITS = 30;

/**
 * fpe radix 10 of the fields that spell `template` (0 a digit place, any other byte itself)
 * where they lie, through the cipher's cryptDigitsInPlace: one call per stretch of fields in one
 * buffer, in order and apart (a result set's rows sit several to a frame). handled[i] = 1 for
 * each field rewritten; every other field (all of them, where the cipher has no such path) is
 * left to the caller's digit-by-digit path. `luhn`: the last digit is a Luhn check digit, kept
 * in its state (ccn).
 */
export function cryptTemplateFieldsInPlace(
  fields: ByteFields, cipher: FpeCipher, template: Uint8Array, luhn: boolean, tweak: Tweak, direction: FpeDirection, handled: Uint8Array,
): void {
  if (cipher.cryptDigitsInPlace === undefined) return;
  let places = 0;
  for (let p = 0; p < template.length; p++) if (template[p] === 0) places++;
  const digits = luhn ? places - 1 : places;
  if (digits < MIN_DIGITS || digits > MAX_DIGITS) return;
  const { count, buffers, starts, lengths } = fields;
  const decrypt = direction === 'decrypt';
  for (let from = 0; from < count;) {
    const buffer = buffers[from] as Uint8Array;
    // A stretch: fields of one buffer, each after the one before (a frame's rows are).
    let to = from + 1;
    while (to < count && buffers[to] === buffer && (starts[to] as number) >= (starts[to - 1] as number) + (lengths[to - 1] as number)) to++;
    if (to - from >= MIN_FIELDS_PER_CALL
      && !cipher.cryptDigitsInPlace(template, luhn, tweak, decrypt, buffer, starts.subarray(from, to), lengths.subarray(from, to), handled.subarray(from, to))) {
      return;
    }
    from = to;
  }
}

/** The template a spelling's bytes make: digits become digit places (0), every other byte stays. */
export function templateOf(bytes: Uint8Array, start: number, length: number): Uint8Array {
  const template = new Uint8Array(length);
  for (let p = 0; p < length; p++) {
    const code = bytes[start + p] as number;
    template[p] = code >= 48 && code <= 57 ? 0 : code;
  }
  return template;
}
