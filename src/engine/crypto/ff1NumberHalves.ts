import type { FeistelHalves } from './ff1FeistelHalves.js';
import { numberToNumerals, numeralsToNumber, numeralViews } from './numerals.js';

/**
 * Largest radix^v for arithmetic in plain numbers. Reducing y byte by byte keeps every
 * intermediate below 256 * 2^44 = 2^52, where doubles are exact integers.
 */
export const NUMBER_HALVES_MAX_MODULUS = 2 ** 44;

const TWO_POW_32 = 4294967296;

/**
 * Path (a): halves as exact JS numbers (Float64Array), no BigInt and no allocation in the
 * rounds. y mod radix^m is reduced as its bytes arrive, with a multiply by 1/M and a one-step
 * correction instead of `%` (which is a slow fmod on doubles).
 */
export class NumberHalves implements FeistelHalves {
  private left: Float64Array;
  private right: Float64Array;
  private readonly modulusU: number;
  private readonly modulusV: number;

  constructor(
    values: readonly Uint16Array[],
    private readonly radix: number,
    private readonly u: number,
    private readonly v: number,
    private readonly decrypt: boolean,
  ) {
    const count = values.length;
    const n = u + v;
    const first = new Float64Array(count);
    const second = new Float64Array(count);
    for (let j = 0; j < count; j++) {
      const x = values[j] as Uint16Array;
      first[j] = numeralsToNumber(x, 0, u, radix);
      second[j] = numeralsToNumber(x, u, n, radix);
    }
    this.left = decrypt ? second : first;
    this.right = decrypt ? first : second;
    this.modulusU = radix ** u;
    this.modulusV = radix ** v;
  }

  xorNumB(out: Uint8Array, offset: number, stride: number, b: number): void {
    const right = this.right;
    for (let j = 0, p = offset; j < right.length; j++, p += stride) xorNumberBigEndian(out, p, right[j] as number, b);
  }

  mixRound(s: Uint8Array, stride: number, d: number, m: number, subtract: boolean): void {
    const modulus = m === this.u ? this.modulusU : this.modulusV;
    const left = this.left;
    reduceInto(left, s, stride, d, modulus, subtract);
    this.left = this.right;
    this.right = left;
  }

  numerals(): Uint16Array[] {
    const { radix, u, v } = this;
    const first = this.decrypt ? this.right : this.left;
    const second = this.decrypt ? this.left : this.right;
    const n = u + v;
    const { buffer, views } = numeralViews(first.length, n);
    for (let j = 0; j < first.length; j++) {
      numberToNumerals(first[j] as number, radix, buffer, j * n, u);
      numberToNumerals(second[j] as number, radix, buffer, j * n + u, v);
    }
    return views;
  }
}

/**
 * out[p..p+b) ^= [x]^b, big-endian (x < 2^48). Byte by byte rather than through a DataView: no
 * object per call, which matters for the one-value batches of the proxy.
 */
export function xorNumberBigEndian(out: Uint8Array, p: number, x: number, b: number): void {
  if (b === 4) {
    // The usual case (radix^v <= 2^32, e.g. 15-16 digits): one 32-bit word.
    out[p] = (out[p] as number) ^ (x >>> 24);
    out[p + 1] = (out[p + 1] as number) ^ ((x >>> 16) & 255);
    out[p + 2] = (out[p + 2] as number) ^ ((x >>> 8) & 255);
    out[p + 3] = (out[p + 3] as number) ^ (x & 255);
    return;
  }
  const lowBytes = b < 4 ? b : 4;
  let low = x >>> 0;
  let q = p + b - 1;
  for (let c = 0; c < lowBytes; c++, q--) {
    out[q] = (out[q] as number) ^ (low & 255);
    low >>>= 8;
  }
  if (b > 4) {
    let high = (x - (x >>> 0)) / TWO_POW_32;
    for (let c = 4; c < b; c++, q--) {
      out[q] = (out[q] as number) ^ (high & 255);
      high >>>= 8;
    }
  }
}

/** Bytes per step after the first six when reducing modulo `modulus` (see numberModulo). */
export function reductionChunkBytes(modulus: number): number {
  return Math.max(1, Math.floor((52 - Math.ceil(Math.log2(modulus + 1))) / 8));
}

/**
 * NUM(s[o..o+d)) mod modulus, reduced as the bytes arrive: first as many bytes as a number holds
 * exactly (6), then chunks of `chunkBytes` (reductionChunkBytes), which keep r * 256^chunk +
 * chunkValue below 2^52 (r < modulus <= 2^44 leaves at least one byte). `inverse` is 1/modulus.
 */
export function numberModulo(s: Uint8Array, o: number, d: number, modulus: number, inverse: number, chunkBytes: number): number {
  if (d === 8) return number8Modulo(s, o, modulus, inverse);
  const headBytes = Math.min(d, 6);
  let r = 0;
  let p = o;
  for (const end = o + headBytes; p < end; p++) r = r * 256 + (s[p] as number);
  for (const end = o + d; ;) {
    // floor(r / M) may be off by one either way after the float multiply; fix it up.
    r -= Math.floor(r * inverse) * modulus;
    if (r < 0) r += modulus;
    else if (r >= modulus) r -= modulus;
    if (p >= end) break;
    const stop = Math.min(end, p + chunkBytes);
    for (; p < stop; p++) r = r * 256 + (s[p] as number);
  }
  return r;
}

/**
 * numberModulo for d = 8, which means b <= 4 and so modulus <= 2^32: y = hi * 2^32 + lo is
 * reduced in two steps, (hi * 2^16 + lo / 2^16) mod M (< 2^48), then (r * 2^16 + lo mod 2^16)
 * mod M (< 2^48): exact, with the eight bytes read as two 32-bit words.
 */
function number8Modulo(s: Uint8Array, o: number, modulus: number, inverse: number): number {
  const high = (((s[o] as number) << 24) | ((s[o + 1] as number) << 16) | ((s[o + 2] as number) << 8) | (s[o + 3] as number)) >>> 0;
  const low = (((s[o + 4] as number) << 24) | ((s[o + 5] as number) << 16) | ((s[o + 6] as number) << 8) | (s[o + 7] as number)) >>> 0;
  let r = high * 65536 + (low >>> 16);
  r -= Math.floor(r * inverse) * modulus;
  if (r < 0) r += modulus;
  else if (r >= modulus) r -= modulus;
  r = r * 65536 + (low & 0xffff);
  r -= Math.floor(r * inverse) * modulus;
  if (r < 0) r += modulus;
  else if (r >= modulus) r -= modulus;
  return r;
}

/** (a ± y) mod modulus for a, y in [0, modulus). */
export function addModulo(a: number, y: number, modulus: number, subtract: boolean): number {
  if (subtract) {
    const c = a - y;
    return c < 0 ? c + modulus : c;
  }
  const c = a + y;
  return c >= modulus ? c - modulus : c;
}

/** left[j] = (left[j] ± NUM(s[j*stride .. +d))) mod modulus. */
function reduceInto(left: Float64Array, s: Uint8Array, stride: number, d: number, modulus: number, subtract: boolean): void {
  const inverse = 1 / modulus;
  const chunkBytes = reductionChunkBytes(modulus);
  for (let j = 0, o = 0; j < left.length; j++, o += stride) {
    left[j] = addModulo(left[j] as number, numberModulo(s, o, d, modulus, inverse, chunkBytes), modulus, subtract);
  }
}
