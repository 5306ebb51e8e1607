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
    if (b === 4) {
      // The usual case (radix^v <= 2^32, e.g. 15-16 digits): one 32-bit big-endian xor.
      // Byte by byte rather than through a DataView: no object per call, which matters for the
      // one-value batches of the proxy.
      for (let j = 0, p = offset; j < right.length; j++, p += stride) {
        const x = right[j] as number;
        out[p] = (out[p] as number) ^ (x >>> 24);
        out[p + 1] = (out[p + 1] as number) ^ ((x >>> 16) & 255);
        out[p + 2] = (out[p + 2] as number) ^ ((x >>> 8) & 255);
        out[p + 3] = (out[p + 3] as number) ^ (x & 255);
      }
      return;
    }
    const lowBytes = b < 4 ? b : 4;
    for (let j = 0, end = offset + b - 1; j < right.length; j++, end += stride) {
      const x = right[j] as number;
      let low = x >>> 0;
      let p = end;
      for (let c = 0; c < lowBytes; c++, p--) {
        out[p] = (out[p] as number) ^ (low & 255);
        low >>>= 8;
      }
      if (b > 4) {
        let high = (x - (x >>> 0)) / TWO_POW_32;
        for (let c = 4; c < b; c++, p--) {
          out[p] = (out[p] as number) ^ (high & 255);
          high >>>= 8;
        }
      }
    }
  }

  mixRound(s: Uint8Array, stride: number, d: number, m: number, subtract: boolean): void {
    const modulus = m === this.u ? this.modulusU : this.modulusV;
    const left = this.left;
    if (d === 8) reduce8Into(left, s, stride, modulus, subtract);
    else reduceInto(left, s, stride, d, modulus, subtract);
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
 * left[j] = (left[j] ± NUM(s[j*stride .. +d))) mod modulus. y is reduced as its bytes arrive:
 * first as many bytes as a number holds exactly (6), then chunks of as many bytes as keep
 * r * 256^chunk + chunkValue below 2^52 (r < modulus <= 2^44 leaves at least one byte).
 */
function reduceInto(left: Float64Array, s: Uint8Array, stride: number, d: number, modulus: number, subtract: boolean): void {
  const inverse = 1 / modulus;
  const headBytes = Math.min(d, 6);
  const chunkBytes = Math.max(1, Math.floor((52 - Math.ceil(Math.log2(modulus + 1))) / 8));
  for (let j = 0, o = 0; j < left.length; j++, o += stride) {
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
    let c = left[j] as number;
    if (subtract) {
      c -= r;
      if (c < 0) c += modulus;
    } else {
      c += r;
      if (c >= modulus) c -= modulus;
    }
    left[j] = c;
  }
}

/**
 * reduceInto for d = 8, which means b <= 4 and so modulus <= 2^32: y = hi * 2^32 + lo is reduced
 * in two steps, (hi * 2^16 + lo / 2^16) mod M (< 2^48), then (r * 2^16 + lo mod 2^16) mod M
 * (< 2^48): exact, with the eight bytes read as two 32-bit words.
 */
function reduce8Into(left: Float64Array, s: Uint8Array, stride: number, modulus: number, subtract: boolean): void {
  const inverse = 1 / modulus;
  for (let j = 0, o = 0; j < left.length; j++, o += stride) {
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
    let c = left[j] as number;
    if (subtract) {
      c -= r;
      if (c < 0) c += modulus;
    } else {
      c += r;
      if (c >= modulus) c -= modulus;
    }
    left[j] = c;
  }
}
