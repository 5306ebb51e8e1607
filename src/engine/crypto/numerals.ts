/**
 * Numeral strings (Uint16Array, most significant numeral first) to and from integers: safe
 * JS numbers when they fit, BigInt otherwise (in chunks of as many numerals as a number holds).
 */
import { offHeapUint16Array } from './offHeapSlab.js';

/** The value of x[start..end) in base radix; the caller guarantees radix^(end-start) <= 2^52. */
export function numeralsToNumber(x: Uint16Array, start: number, end: number, radix: number): number {
  let value = 0;
  for (let p = start; p < end; p++) value = value * radix + (x[p] as number);
  return value;
}

/** Writes `value` (< radix^length <= 2^52) as `length` numerals at out[start..). */
export function numberToNumerals(value: number, radix: number, out: Uint16Array, start: number, length: number): void {
  let rest = value;
  if (radix === 2 && rest <= 0x7fffffff) {
    // Bits: the integer domains (dates, offsets) run in radix 2.
    for (let p = start + length - 1; p >= start; p--) {
      out[p] = rest & 1;
      rest >>>= 1;
    }
    return;
  }
  if (rest <= 0x7fffffff) {
    // Below 2^31, (rest + 0.5) / radix stays >= 2^-17 away from an integer, far more than the
    // multiply's rounding: floor of the product by the reciprocal is exact, and faster than `/`.
    const inverse = 1 / radix;
    for (let p = start + length - 1; p >= start; p--) {
      const quotient = Math.floor((rest + 0.5) * inverse);
      out[p] = rest - quotient * radix;
      rest = quotient;
    }
    return;
  }
  for (let p = start + length - 1; p >= start; p--) {
    const quotient = Math.floor(rest / radix);
    out[p] = rest - quotient * radix;
    rest = quotient;
  }
}

interface RadixChunking {
  /** Numerals per chunk: radix^digits <= 2^52, so number division stays exact. */
  readonly digits: number;
  /** powers[i] = radix^i as bigint, for i in 0..digits. */
  readonly powers: readonly bigint[];
}

const chunkings = new Map<number, RadixChunking>();

function chunkingFor(radix: number): RadixChunking {
  let chunking = chunkings.get(radix);
  if (!chunking) {
    const powers: bigint[] = [1n];
    let digits = 0;
    for (let size = radix; size <= 2 ** 52; size *= radix) {
      digits++;
      powers.push(BigInt(size));
    }
    chunking = { digits, powers };
    chunkings.set(radix, chunking);
  }
  return chunking;
}

export function numeralsToBigInt(x: Uint16Array, start: number, end: number, radix: number): bigint {
  const { digits, powers } = chunkingFor(radix);
  let value = 0n;
  for (let p = start; p < end; p += digits) {
    const stop = Math.min(end, p + digits);
    value = value * (powers[stop - p] as bigint) + BigInt(numeralsToNumber(x, p, stop, radix));
  }
  return value;
}

/** Writes `value` (0 <= value < radix^length) as `length` numerals at out[start..). */
export function bigIntToNumerals(value: bigint, radix: number, out: Uint16Array, start: number, length: number): void {
  if (radix <= 36) {
    // toString does the base conversion natively; digits 0-9 then a-z.
    const text = value.toString(radix);
    const zeros = length - text.length;
    out.fill(0, start, start + zeros);
    for (let p = 0; p < text.length; p++) {
      const code = text.charCodeAt(p);
      out[start + zeros + p] = code <= 57 ? code - 48 : code - 87;
    }
    return;
  }
  const { digits, powers } = chunkingFor(radix);
  const divisor = powers[digits] as bigint;
  let rest = value;
  for (let end = start + length; end > start; end -= digits) {
    const count = Math.min(digits, end - start);
    const low = rest === 0n ? 0 : Number(rest % divisor);
    rest /= divisor;
    numberToNumerals(low, radix, out, end - count, count);
  }
}

/** One Uint16Array for the whole group's output (off V8's heap), handed out as per-value views. */
export function numeralViews(count: number, length: number): { buffer: Uint16Array; views: Uint16Array[] } {
  if (count === 1) {
    const only = offHeapUint16Array(length);
    return { buffer: only, views: [only] };
  }
  const buffer = offHeapUint16Array(count * length);
  const views = new Array<Uint16Array>(count);
  // The constructor is cheaper than subarray() in V8.
  const { buffer: memory, byteOffset } = buffer;
  for (let j = 0; j < count; j++) views[j] = new Uint16Array(memory, byteOffset + j * length * 2, length);
  return { buffer, views };
}
