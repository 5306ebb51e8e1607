import { digitsToBytes, takeDigits } from './byteArithmetic.js';
import { LimbNumber, MAX_LIMB_FACTOR } from './limbNumber.js';

/** Above this many bytes conversion goes through BigInt, faster on long inputs (byteArithmetic.ts). */
const MAX_NUMBER_BYTES = 64;
const ASCII = 128;
/** BigInt's own digits: an alphabet that is a prefix of these encodes through BigInt.prototype.toString. */
const BIGINT_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Up to this many bytes (a token body's 16) a BigInt is built from two 64-bit reads, not from hex text. */
const TWO_WORD_BYTES = 16;
/** decodeAscii's number: calls are synchronous, so one serves every call. */
const limbNumber = new LimbNumber();
/** encodeByToString's bytes: it is synchronous, so one buffer serves every call. */
const wordScratch = new Uint8Array(TWO_WORD_BYTES);
const wordView = new DataView(wordScratch.buffer);

/**
 * Bytes ↔ text in an alphabet of at most 256 symbols, with a width fixed by the byte count:
 * width(k) = ceil(8k / log2(N)). No sentinel digit, so tokens do not share a constant first
 * character, and since width grows by at least one per byte the byte count is recovered from it.
 */
export class FixedWidthBase {
  private readonly symbols: string[];
  private readonly base: bigint;
  private readonly radix: number;
  private readonly bitsPerSymbol: number;
  private readonly index = new Map<string, number>();
  /** Digit by char code, and char code by digit, when every symbol is ASCII (all the token alphabets). */
  private readonly asciiIndex: Int16Array | null;
  private readonly asciiCodes: number[] | null;
  /** Digits per chunk for BigInt: radix^chunk stays an exact double. */
  private readonly chunk: number;
  private readonly chunkBase: bigint;
  /** The alphabet is BigInt's own digits for its radix: toString writes the digits in C++. */
  private readonly bigIntDigits: boolean;
  /** decodeAscii: digits per multiply-add, radix^i for i up to it, and the longest text it takes. */
  private readonly limbChunk: number;
  private readonly limbPowers: number[];
  private readonly maxLimbWidth: number;

  constructor(alphabet: string) {
    const symbols = [...alphabet];
    if (symbols.length < 2 || symbols.length > 256 || new Set(symbols).size !== symbols.length) {
      throw new RangeError('alphabet must have 2 to 256 distinct symbols');
    }
    this.symbols = symbols;
    this.radix = symbols.length;
    this.base = BigInt(symbols.length);
    this.bitsPerSymbol = Math.log2(symbols.length);
    symbols.forEach((s, i) => this.index.set(s, i));
    const ascii = symbols.every((s) => s.length === 1 && s.charCodeAt(0) < ASCII);
    const table = new Int16Array(ASCII).fill(-1);
    if (ascii) symbols.forEach((s, i) => { table[s.charCodeAt(0)] = i; });
    this.asciiIndex = ascii ? table : null;
    this.asciiCodes = ascii ? symbols.map((s) => s.charCodeAt(0)) : null;
    this.chunk = Math.floor(52 / Math.ceil(this.bitsPerSymbol));
    this.chunkBase = this.base ** BigInt(this.chunk);
    this.bigIntDigits = alphabet === BIGINT_DIGITS.slice(0, symbols.length);
    this.limbPowers = [1];
    while ((this.limbPowers[this.limbPowers.length - 1] as number) * this.radix < MAX_LIMB_FACTOR) {
      this.limbPowers.push((this.limbPowers[this.limbPowers.length - 1] as number) * this.radix);
    }
    this.limbChunk = this.limbPowers.length - 1;
    this.maxLimbWidth = this.width(MAX_NUMBER_BYTES);
  }

  width(byteCount: number): number {
    // A tiny epsilon keeps exact powers (base 16, 256) from rounding up.
    return Math.ceil((8 * byteCount) / this.bitsPerSymbol - 1e-9);
  }

  encode(bytes: Uint8Array): string {
    const width = this.width(bytes.length);
    const codes = this.asciiCodes;
    if (bytes.length > MAX_NUMBER_BYTES || !codes) return this.encodeBig(bytes, width);
    if (this.bigIntDigits && bytes.length > 0 && bytes.length <= TWO_WORD_BYTES) return this.encodeByToString(bytes, width);
    const n = new Uint8Array(bytes.length);
    n.set(bytes);
    const digits = takeDigits(n, this.radix);
    // The value is below 256^k <= radix^width: zeros fill the width above its digits.
    const out = new Array<number>(width).fill(codes[0] as number, 0, width - digits.length);
    for (let i = 0; i < digits.length; i++) out[width - 1 - i] = codes[digits[i] as number] as number;
    // One call for the whole string: far cheaper than joining one-character strings.
    return String.fromCharCode.apply(null, out);
  }

  /**
   * encode of at most 16 bytes in an alphabet of BigInt's digits: two 64-bit reads, one shift,
   * one toString. Measured 2.5× faster than dividing the bytes in doubles for a token's 16 bytes
   * in decimal (the digits and the string are written in C++).
   */
  private encodeByToString(bytes: Uint8Array, width: number): string {
    wordScratch.fill(0, 0, TWO_WORD_BYTES - bytes.length);
    wordScratch.set(bytes, TWO_WORD_BYTES - bytes.length);
    const value = (wordView.getBigUint64(0) << 64n) | wordView.getBigUint64(8);
    wordScratch.fill(0);
    // The value is below 256^k <= radix^width: zeros fill the width above its digits.
    return value.toString(this.radix).padStart(width, '0');
  }

  private encodeBig(bytes: Uint8Array, width: number): string {
    const out = new Array<string>(width);
    let n = bytes.length ? BigInt('0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')) : 0n;
    let pos = width;
    while (pos > 0) {
      // One BigInt division per chunk, then plain number arithmetic for its digits.
      let part = Number(n % this.chunkBase);
      n /= this.chunkBase;
      for (let i = 0; i < this.chunk && pos > 0; i++) {
        out[--pos] = this.symbols[part % this.radix] as string;
        part = Math.floor(part / this.radix);
      }
    }
    return out.join('');
  }

  /** null when the text has a foreign symbol, a width no byte count gives, or too large a value. */
  decode(text: string): Uint8Array | null {
    if (text.length >= 0x10000) return null;
    const table = this.asciiIndex;
    if (table !== null && text.length <= this.maxLimbWidth) {
      const byteCount = this.byteCountOf(text.length);
      return byteCount === 0 ? null : this.decodeAscii(text, table, byteCount);
    }
    const digits = this.digitsIn(text);
    if (!digits) return null;
    const byteCount = this.byteCountOf(digits.length);
    if (byteCount === 0) return null;
    return byteCount > MAX_NUMBER_BYTES ? this.decodeBig(digits, byteCount) : digitsToBytes(digits, this.radix, byteCount);
  }

  /** The byte count whose width is `width`; 0 when none has it. */
  private byteCountOf(width: number): number {
    let byteCount = Math.floor((width * this.bitsPerSymbol) / 8);
    while (byteCount > 0 && this.width(byteCount) > width) byteCount--;
    return byteCount > 0 && this.width(byteCount) === width ? byteCount : 0;
  }

  /**
   * decode of ASCII text up to MAX_NUMBER_BYTES' width, read by character code straight into a
   * LimbNumber, limbChunk digits per multiply-add: no digits array, no BigInt.
   */
  private decodeAscii(text: string, table: Int16Array, byteCount: number): Uint8Array | null {
    const number = limbNumber;
    number.reset(byteCount);
    const radix = this.radix;
    const width = text.length;
    // The first chunk takes the odd digits, so the rest are whole chunks.
    for (let start = 0, end = width % this.limbChunk || this.limbChunk; start < width; start = end, end += this.limbChunk) {
      let part = 0;
      for (let i = start; i < end; i++) {
        const code = text.charCodeAt(i);
        const digit = code < ASCII ? (table[code] as number) : -1;
        if (digit < 0) {
          number.reset(0);
          return null;
        }
        part = part * radix + digit;
      }
      if (!number.multiplyAdd(this.limbPowers[end - start] as number, part)) {
        number.reset(0);
        return null;
      }
    }
    return number.toBytes(byteCount);
  }

  /** The text's digits, or null for a foreign symbol or text too long to be a token. */
  private digitsIn(text: string): Uint8Array | null {
    if (text.length >= 0x10000) return null;
    const table = this.asciiIndex;
    if (table) {
      const digits = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        const digit = code < ASCII ? (table[code] as number) : -1;
        if (digit < 0) return null;
        digits[i] = digit;
      }
      return digits;
    }
    const symbols = [...text];
    const digits = new Uint8Array(symbols.length);
    for (let i = 0; i < symbols.length; i++) {
      const digit = this.index.get(symbols[i] as string);
      if (digit === undefined) return null;
      digits[i] = digit;
    }
    return digits;
  }

  private decodeBig(digits: Uint8Array, byteCount: number): Uint8Array | null {
    let n = 0n;
    let part = 0;
    let partDigits = 0;
    for (const digit of digits) {
      part = part * this.radix + digit;
      if (++partDigits === this.chunk) {
        n = n * this.chunkBase + BigInt(part);
        part = 0;
        partDigits = 0;
      }
    }
    if (partDigits) n = n * this.base ** BigInt(partDigits) + BigInt(part);
    if (n >> BigInt(8 * byteCount) !== 0n) return null;
    return Buffer.from(n.toString(16).padStart(byteCount * 2, '0'), 'hex');
  }
}
