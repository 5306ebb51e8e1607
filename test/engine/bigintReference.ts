/**
 * The BigInt implementations of token base conversion and packing as they were before the
 * plain-number ones replaced them: the reference the property tests compare against, since
 * tokens already stored must keep decoding to the same bytes.
 */
import { SCRIPT_IDS, tokenAlphabet, type ScriptId } from '../../src/engine/scripts/index.js';
import { fromBaseDigits, toBaseDigits } from '../../src/engine/scripts/mixedRadix.js';

const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');

/** FixedWidthBase before: BigInt from hex, divided a chunk at a time. */
export class ReferenceFixedWidthBase {
  private readonly symbols: string[];
  private readonly base: bigint;
  private readonly radix: number;
  private readonly bitsPerSymbol: number;
  private readonly index = new Map<string, number>();
  private readonly chunk: number;
  private readonly chunkBase: bigint;

  constructor(alphabet: string) {
    this.symbols = [...alphabet];
    this.radix = this.symbols.length;
    this.base = BigInt(this.radix);
    this.bitsPerSymbol = Math.log2(this.radix);
    this.symbols.forEach((s, i) => this.index.set(s, i));
    this.chunk = Math.floor(52 / Math.ceil(this.bitsPerSymbol));
    this.chunkBase = this.base ** BigInt(this.chunk);
  }

  width(byteCount: number): number {
    return Math.ceil((8 * byteCount) / this.bitsPerSymbol - 1e-9);
  }

  encode(bytes: Uint8Array): string {
    const width = this.width(bytes.length);
    const out = new Array<string>(width);
    let n = bytes.length ? BigInt('0x' + hexOf(bytes)) : 0n;
    let pos = width;
    while (pos > 0) {
      let part = Number(n % this.chunkBase);
      n /= this.chunkBase;
      for (let i = 0; i < this.chunk && pos > 0; i++) {
        out[--pos] = this.symbols[part % this.radix] as string;
        part = Math.floor(part / this.radix);
      }
    }
    return out.join('');
  }

  decode(text: string): Uint8Array | null {
    const symbols = text.length < 0x10000 ? [...text] : [];
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

const SYMBOLS = '0123456789 -./+(),:';
const SYMBOL_BASE = BigInt(SYMBOLS.length);
const SYMBOL_INDEX = new Map([...SYMBOLS].map((c, i) => [c, BigInt(i)]));

/** packing.ts's packSymbols before: null for a character outside SYMBOLS. */
export function referencePackSymbols(value: string): Uint8Array | null {
  let n = 1n;
  for (const ch of value) {
    const index = SYMBOL_INDEX.get(ch);
    if (index === undefined) return null;
    n = n * SYMBOL_BASE + index;
  }
  let hex = n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  return Buffer.from(hex, 'hex');
}

/** packing.ts's unpackSymbols before. */
export function referenceUnpackSymbols(body: Uint8Array): string | null {
  if (body.length === 0) return null;
  let n = BigInt('0x' + hexOf(body));
  const chars: string[] = [];
  while (n > 1n) {
    chars.push(SYMBOLS[Number(n % SYMBOL_BASE)] as string);
    n /= SYMBOL_BASE;
  }
  return n === 1n ? chars.reverse().join('') : null;
}

/** scriptToken.ts's encodeTokenInScript before. */
export function referenceEncodeTokenInScript(bytes: Uint8Array, script: ScriptId): string {
  const symbols = tokenAlphabet(script).symbols;
  const digits = toBaseDigits(BigInt(`0x01${hexOf(bytes)}`), symbols.length);
  const out: number[] = [];
  digits.forEach((digit, i) => {
    if (i > 0 && i % 5 === 0) out.push(0x20);
    out.push(symbols[digit] as number);
  });
  return String.fromCodePoint(...out);
}

let owners: Map<number, { script: ScriptId; base: number; digit: number }> | undefined;

/** scriptToken.ts's decodeScriptToken before, with its own code point → digit table. */
export function referenceDecodeScriptToken(token: string): Uint8Array | null {
  if (!owners) {
    owners = new Map();
    for (const script of SCRIPT_IDS) {
      const symbols = tokenAlphabet(script).symbols;
      symbols.forEach((cp, digit) => owners?.set(cp, { script, base: symbols.length, digit }));
    }
  }
  if (token.length === 0 || token.length > 1 << 21) return null;
  let script: ScriptId | undefined;
  let base = 0;
  const digits: number[] = [];
  let groupLength = 0;
  for (const ch of token.normalize('NFC')) {
    const cp = ch.codePointAt(0) as number;
    if (cp === 0x20) {
      if (groupLength !== 5) return null;
      groupLength = 0;
      continue;
    }
    if (groupLength === 5) return null;
    const owner = owners.get(cp);
    script ??= owner?.script;
    // One alphabet per token: the first symbol's; a symbol of another one is foreign.
    if (!owner || owner.script !== script) return null;
    base = owner.base;
    digits.push(owner.digit);
    groupLength++;
  }
  if (script === undefined || groupLength === 0 || digits[0] === 0) return null;
  let hex = fromBaseDigits(digits, base).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (!hex.startsWith('01')) return null;
  return new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
}
