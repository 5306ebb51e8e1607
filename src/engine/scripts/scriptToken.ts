/**
 * Token bytes written in a script's token alphabet, for the text kinds' tokenise output: the
 * bytes as one base-N number (N the alphabet size), in space-separated groups of five symbols.
 * A 0x01 byte is put in front before converting, so leading zero bytes survive the trip through
 * a number; decoding checks it is there.
 */
import { codePointsToString } from './codePoints.js';
import { fromBaseDigits, toBaseDigits } from './mixedRadix.js';
import type { ScriptId } from './scriptIds.js';
import { tokenAlphabet, tokenAlphabetOf, type TokenAlphabet } from './tokenAlphabets.js';


export const TOKEN_GROUP_LENGTH = 5;
const GROUP_SEPARATOR = 0x20;
/** Longest token text decoded, in UTF-16 units; anything longer is no token. */
export const MAX_SCRIPT_TOKEN_LENGTH = 1 << 21;

function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function encodeTokenInScript(bytes: Uint8Array, script: ScriptId): string {
  const alphabet = tokenAlphabet(script);
  const value = BigInt(`0x01${bytesToHex(bytes)}`);
  const digits = toBaseDigits(value, alphabet.symbols.length);
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
  let alphabet: TokenAlphabet | undefined;
  const digits: number[] = [];
  let groupLength = 0;
  for (const ch of token.normalize('NFC')) {
    const cp = ch.codePointAt(0) as number;
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
  let hex = fromBaseDigits(digits, alphabet.symbols.length).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (!hex.startsWith('01')) return null;
  return new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
}
