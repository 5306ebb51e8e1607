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
  /** Digits per chunk so that radix^chunk stays an exact double: conversion works a chunk at a time. */
  private readonly chunk: number;
  private readonly chunkBase: bigint;

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
    this.chunk = Math.floor(52 / Math.ceil(this.bitsPerSymbol));
    this.chunkBase = this.base ** BigInt(this.chunk);
  }

  width(byteCount: number): number {
    // A tiny epsilon keeps exact powers (base 16, 256) from rounding up.
    return Math.ceil((8 * byteCount) / this.bitsPerSymbol - 1e-9);
  }

  encode(bytes: Uint8Array): string {
    const width = this.width(bytes.length);
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
    const symbols = this.radix <= 0xffff && text.length < 0x10000 ? [...text] : [];
    let byteCount = Math.floor((symbols.length * this.bitsPerSymbol) / 8);
    while (byteCount > 0 && this.width(byteCount) > symbols.length) byteCount--;
    if (byteCount === 0 || this.width(byteCount) !== symbols.length) return null;
    let n = 0n;
    let part = 0;
    let partDigits = 0;
    for (const s of symbols) {
      const digit = this.index.get(s);
      if (digit === undefined) return null;
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
