import { digitsToBytes, takeDigits } from './byteArithmetic.js';

/**
 * Packs a value into the bytes a token encrypts, compactly for the common shapes so tokens stay
 * short. The first byte says how: its high bits the encoding, its low 2 bits how many zero bytes
 * were appended to reach MIN_PACKED_BYTES (FF1 over bytes needs 256^n >= 10^6, so n >= 3).
 */
export const MIN_PACKED_BYTES = 3;

const ENC_UTF8 = 0;
const ENC_SYMBOLS = 1;   // digits and the separators of phone, ssn, date, ccn, ipv4, latlng, numeric
const ENC_UUID_LOWER = 2;
const ENC_UUID_UPPER = 3;

const SYMBOLS = '0123456789 -./+(),:';
const SYMBOL_RADIX = SYMBOLS.length;
const SYMBOL_BASE = BigInt(SYMBOL_RADIX);
/** Symbol digit by char code (all ASCII), -1 elsewhere. */
const SYMBOL_DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < SYMBOL_RADIX; i++) SYMBOL_DIGIT[SYMBOLS.charCodeAt(i)] = i;
const SYMBOL_CODES = [...SYMBOLS].map((c) => c.charCodeAt(0));
/** Longer symbol bodies (never packed, only forged or corrupt) are read with BigInt. */
const MAX_NUMBER_BODY_BYTES = 64;
const UUID_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_UPPER = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;

/** The header, body[start..) and the padding (offsets: a subarray() of a small fresh array costs a malloc). */
function withHeader(encoding: number, body: Uint8Array, start = 0): Uint8Array {
  const length = body.length - start;
  const pad = Math.max(0, MIN_PACKED_BYTES - 1 - length);
  const out = new Uint8Array(1 + length + pad);
  out[0] = (encoding << 2) | pad;
  for (let i = 0; i < length; i++) out[1 + i] = body[start + i] as number;
  return out;
}

/**
 * The value as a base-19 number behind a leading 1 (so "007" and "7" pack differently), in
 * as few big-endian bytes as hold it, behind the header; null for a character outside SYMBOLS.
 * Callers keep values to 64 characters.
 */
function packSymbols(value: string): Uint8Array | null {
  const digits = new Array<number>(value.length + 1);
  digits[0] = 1;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const digit = code < 128 ? (SYMBOL_DIGIT[code] as number) : -1;
    if (digit < 0) return null;
    digits[i + 1] = digit;
  }
  // 19^(n+1) < 2^(4.25(n+1)): enough bytes; the leading zero bytes are cut.
  const bytes = digitsToBytes(digits, SYMBOL_RADIX, Math.ceil((digits.length * 4.25) / 8)) as Uint8Array;
  let first = 0;
  while (bytes[first] === 0) first++;
  return withHeader(ENC_SYMBOLS, bytes, first);
}

/** The inverse of packSymbols over packed[start, end): the digits after a leading 1; null without one. */
function unpackSymbols(packed: Uint8Array, start: number, end: number): string | null {
  if (end === start) return null;
  if (end - start > MAX_NUMBER_BODY_BYTES) return unpackSymbolsBig(packed.subarray(start, end));
  const n = new Uint8Array(end - start);
  for (let i = start; i < end; i++) n[i - start] = packed[i] as number;
  const digits = takeDigits(n, SYMBOL_RADIX);
  const top = digits.length - 1;
  if (top < 0 || digits[top] !== 1) return null;
  const codes = new Array<number>(top);
  for (let i = 0; i < top; i++) codes[i] = SYMBOL_CODES[digits[top - 1 - i] as number] as number;
  return String.fromCharCode.apply(null, codes);
}

function unpackSymbolsBig(body: Uint8Array): string | null {
  let n = BigInt('0x' + Buffer.from(body).toString('hex'));
  const chars: string[] = [];
  while (n > 1n) {
    chars.push(SYMBOLS[Number(n % SYMBOL_BASE)] as string);
    n /= SYMBOL_BASE;
  }
  return n === 1n ? chars.reverse().join('') : null;
}

export function packValue(value: string): Uint8Array {
  if (value.length <= 64) {
    if (UUID_LOWER.test(value)) return withHeader(ENC_UUID_LOWER, Buffer.from(value.replaceAll('-', ''), 'hex'));
    if (UUID_UPPER.test(value)) return withHeader(ENC_UUID_UPPER, Buffer.from(value.replaceAll('-', ''), 'hex'));
    const symbols = packSymbols(value);
    if (symbols) return symbols;
  }
  return withHeader(ENC_UTF8, Buffer.from(value, 'utf8'));
}

function formatUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ignoreBOM: a value's leading U+FEFF is part of it (by default it is dropped on the way back).
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text up to this many bytes is read without TextDecoder when it is all ASCII. */
const SHORT_TEXT_BYTES = 64;

/**
 * bytes[start, end) as UTF-8, null when it is not valid UTF-8. Short ASCII text (most values) is
 * read as its character codes: TextDecoder and the subarray it needs cost more than the text.
 */
function utf8Text(bytes: Uint8Array, start: number, end: number): string | null {
  if (end - start <= SHORT_TEXT_BYTES) {
    let ascii = true;
    for (let i = start; i < end && ascii; i++) ascii = (bytes[i] as number) < 0x80;
    if (ascii) {
      const codes = new Array<number>(end - start);
      for (let i = start; i < end; i++) codes[i - start] = bytes[i] as number;
      return String.fromCharCode.apply(null, codes);
    }
  }
  try { return UTF8.decode(bytes.subarray(start, end)); } catch { return null; }
}

/** The inverse of packValue; null when the bytes are not a packing (a forged or corrupt token). */
export function unpackValue(packed: Uint8Array): string | null {
  return unpackValueIn(packed, 0, packed.length);
}

/** unpackValue of bytes[start, end), read where they lie. */
export function unpackValueIn(bytes: Uint8Array, start: number, end: number): string | null {
  if (end - start < MIN_PACKED_BYTES) return null;
  const header = bytes[start] as number;
  const pad = header & 3;
  const encoding = header >> 2;
  if (pad > end - start - 1) return null;
  for (let i = end - pad; i < end; i++) if (bytes[i] !== 0) return null;
  const valueEnd = end - pad;
  switch (encoding) {
    case ENC_UTF8:
      return utf8Text(bytes, start + 1, valueEnd);
    case ENC_SYMBOLS:
      return unpackSymbols(bytes, start + 1, valueEnd);
    case ENC_UUID_LOWER:
    case ENC_UUID_UPPER: {
      if (valueEnd - start - 1 !== 16) return null;
      const hex = Buffer.from(bytes.buffer, bytes.byteOffset + start + 1, 16).toString('hex');
      return formatUuid(encoding === ENC_UUID_UPPER ? hex.toUpperCase() : hex);
    }
    default:
      return null;
  }
}
