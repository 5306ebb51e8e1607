import { digitsToBytes, takeDigits } from './byteArithmetic.js';

/** Above this many bytes conversion goes through BigInt, faster on long inputs (byteArithmetic.ts). */
const MAX_NUMBER_BYTES = 64;
const ASCII = 128;
/** BigInt's own digits: an alphabet that is a prefix of these encodes through BigInt.prototype.toString. */
const BIGINT_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Up to this many bytes (a token body's 16) a BigInt is built from two 64-bit reads, not from hex text. */
const TWO_WORD_BYTES = 16;
/** The longest text decodeDecimal takes: a 64-byte number's width (BigInt() parsing is quadratic in the length). */
const MAX_DECIMAL_DIGITS = 155;
/** encodeByToString's and decodeDecimal's bytes: they are synchronous, so one buffer serves every call. */
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
    if (this.radix === 10 && this.bigIntDigits) {
      const bytes = this.decodeDecimal(text);
      if (bytes !== undefined) return bytes;
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
   * decode in BigInt's own decimal digits, up to a token body's size: BigInt() reads them in C++
   * and two 64-bit writes a word take the bytes out, twice as fast as the byte arithmetic for a
   * token's 16 to 24 bytes. The digits are checked first (BigInt() also takes signs, spaces and
   * prefixes). Undefined for a longer text, which the general path decodes.
   */
  private decodeDecimal(text: string): Uint8Array | null | undefined {
    const width = text.length;
    if (width > MAX_DECIMAL_DIGITS) return undefined;
    for (let i = 0; i < width; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x30 || code > 0x39) return null;
    }
    const byteCount = this.byteCountOf(width);
    if (byteCount === 0) return null;
    let value = BigInt(text);
    const out = new Uint8Array(byteCount);
    // Bits above the byte count (too large a value) land in the top word's unused bytes or stay in value.
    let above = 0;
    for (let end = byteCount; end > 0; end -= 8) {
      wordView.setBigUint64(0, BigInt.asUintN(64, value));
      value >>= 64n;
      const take = Math.min(8, end);
      for (let i = 0; i < 8 - take; i++) above |= wordScratch[i] as number;
      for (let i = 0; i < take; i++) out[end - take + i] = wordScratch[8 - take + i] as number;
    }
    wordScratch.fill(0);
    return above === 0 && value === 0n ? out : null;
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
