/**
 * Token bytes written in a script's token alphabet, for the text kinds' tokenise output: the
 * bytes as one base-N number (N the alphabet size), in space-separated groups of five symbols.
 * A 0x01 byte is put in front before converting, so leading zero bytes survive the trip through
 * a number; decoding checks it is there.
 */
import { digitsToBytes, takeDigits } from './byteArithmetic.js';
import { codePointsToString } from '../scripts/codePoints.js';
import { fromBaseDigits, toBaseDigits } from '../scripts/mixedRadix.js';
import type { ScriptId } from '../scripts/scriptIds.js';
import { tokenAlphabet, tokenAlphabetOf, type TokenAlphabet } from '../scripts/tokenAlphabets.js';
import { LimbNumber, MAX_LIMB_BYTES, MAX_LIMB_FACTOR } from './limbNumber.js';

export const TOKEN_GROUP_LENGTH = 5;
const GROUP_SEPARATOR = 0x20;
/** Longest token text decoded, in UTF-16 units; anything longer is no token. */
export const MAX_SCRIPT_TOKEN_LENGTH = 1 << 21;
/**
 * Up to this many bytes the conversion runs in byteArithmetic's plain numbers; longer tokens
 * (of long texts) go through BigInt's product tree, which is subquadratic.
 */
const MAX_NUMBER_BYTES = 64;

function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** The digits of 0x01 ‖ bytes in base `base`, most significant first, no leading zero. */
function sentinelDigits(bytes: Uint8Array, base: number): number[] {
  if (bytes.length > MAX_NUMBER_BYTES) return toBaseDigits(BigInt(`0x01${bytesToHex(bytes)}`), base);
  const n = new Uint8Array(bytes.length + 1);
  n[0] = 1;
  n.set(bytes, 1);
  return takeDigits(n, base).reverse();
}

/** The bytes after the 0x01 sentinel of the number the digits (no leading zero) write; null without it. */
function bytesAfterSentinel(digits: number[], base: number): Uint8Array | null {
  // One byte more than the digits can need, against rounding in the logarithm.
  const byteCount = Math.ceil((digits.length * Math.log2(base)) / 8) + 1;
  if (byteCount > MAX_NUMBER_BYTES) {
    let hex = fromBaseDigits(digits, base).toString(16);
    if (hex.length % 2 === 1) hex = `0${hex}`;
    if (!hex.startsWith('01')) return null;
    return new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
  }
  const n = digitsToBytes(digits, base, byteCount) as Uint8Array;
  let first = 0;
  while (first < n.length && n[first] === 0) first++;
  return n[first] === 1 ? n.slice(first + 1) : null;
}

export function encodeTokenInScript(bytes: Uint8Array, script: ScriptId): string {
  const alphabet = tokenAlphabet(script);
  const digits = sentinelDigits(bytes, alphabet.symbols.length);
  const out: number[] = [];
  digits.forEach((digit, i) => {
    if (i > 0 && i % TOKEN_GROUP_LENGTH === 0) out.push(GROUP_SEPARATOR);
    out.push(alphabet.symbols[digit] as number);
  });
  return codePointsToString(out);
}

/**
 * The bytes of a token made by encodeTokenInScript, whatever its script; null when the text is
 * not one: symbols of two scripts, a character outside every token alphabet, groups not of five
 * (the last one of one to five), a leading zero digit, or no 0x01 sentinel.
 */
export function decodeScriptToken(token: string): Uint8Array | null {
  if (token.length === 0 || token.length > MAX_SCRIPT_TOKEN_LENGTH) return null;
  const ascii = decodeAsciiToken(token);
  if (ascii !== undefined) return ascii;
  let alphabet: TokenAlphabet | undefined;
  const digits: number[] = [];
  let groupLength = 0;
  const text = token.normalize('NFC');
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    if (cp > 0xffff) i++; // the second unit of a surrogate pair
    if (cp === GROUP_SEPARATOR) {
      if (groupLength !== TOKEN_GROUP_LENGTH) return null;
      groupLength = 0;
      continue;
    }
    if (groupLength === TOKEN_GROUP_LENGTH) return null;
    alphabet ??= tokenAlphabetOf(cp);
    const digit = alphabet ? alphabet.digitOf(cp) : -1;
    if (digit < 0) return null;
    digits.push(digit);
    groupLength++;
  }
  if (!alphabet || groupLength === 0 || digits[0] === 0) return null;
  return bytesAfterSentinel(digits, alphabet.symbols.length);
}

/** The Latin alphabet's digits by character code (ASCII), its size, and the digits per multiply-add. */
interface AsciiAlphabet {
  readonly digits: Int8Array;
  readonly base: number;
  readonly chunk: number;
  /** base^i for i up to chunk. */
  readonly powers: readonly number[];
}
let asciiAlphabet: AsciiAlphabet | undefined;

function latinDigits(): AsciiAlphabet {
  if (asciiAlphabet === undefined) {
    const { symbols } = tokenAlphabet('latin');
    const digits = new Int8Array(128).fill(-1);
    symbols.forEach((cp, digit) => { digits[cp] = digit; });
    const powers = [1];
    while ((powers[powers.length - 1] as number) * symbols.length < MAX_LIMB_FACTOR) powers.push((powers[powers.length - 1] as number) * symbols.length);
    asciiAlphabet = { digits, base: symbols.length, chunk: powers.length - 1, powers };
  }
  return asciiAlphabet;
}

const limbNumber = new LimbNumber();

/**
 * decodeScriptToken of an all-ASCII text (a Latin token, or no token) short enough for a
 * LimbNumber, by character code: no normalising (ASCII text is NFC), no digits array. Undefined
 * for other text, which the general path decodes.
 */
function decodeAsciiToken(token: string): Uint8Array | null | undefined {
  const length = token.length;
  for (let i = 0; i < length; i++) if (token.charCodeAt(i) >= 0x80) return undefined;
  const { digits, base, chunk, powers } = latinDigits();
  // At most `length` digits, and bytesAfterSentinel's bound on their bytes.
  if (Math.ceil((length * Math.log2(base)) / 8) + 1 > Math.min(MAX_NUMBER_BYTES, MAX_LIMB_BYTES)) return undefined;
  const number = limbNumber;
  number.reset(MAX_LIMB_BYTES);
  let groupLength = 0;
  let digitCount = 0;
  let part = 0;
  let partDigits = 0;
  for (let i = 0; i < length; i++) {
    const code = token.charCodeAt(i);
    if (code === GROUP_SEPARATOR) {
      if (groupLength !== TOKEN_GROUP_LENGTH) return refused(number);
      groupLength = 0;
      continue;
    }
    const digit = digits[code] as number;
    if (groupLength === TOKEN_GROUP_LENGTH || digit < 0 || (digitCount === 0 && digit === 0)) return refused(number);
    groupLength++;
    digitCount++;
    part = part * base + digit;
    // The length bound above keeps the number within the limbs: a false is refused all the same.
    if (++partDigits === chunk) {
      if (!number.multiplyAdd(powers[chunk] as number, part)) return refused(number);
      part = 0;
      partDigits = 0;
    }
  }
  if (groupLength === 0 || (partDigits > 0 && !number.multiplyAdd(powers[partDigits] as number, part))) return refused(number);
  return number.bytesAfterSentinel();
}

function refused(number: LimbNumber): null {
  number.reset(0);
  return null;
}
