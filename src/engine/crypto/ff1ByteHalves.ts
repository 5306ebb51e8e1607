import type { FeistelHalves } from './ff1FeistelHalves.js';
import { numeralViews } from './numerals.js';

/**
 * Path (b), radix 256: a numeral is a byte, so NUM_256 is the bytes themselves (big-endian),
 * b = v, y mod 256^m is the last m bytes of S[0..d), and the modular addition is byte-wise with
 * a carry that falls off the top. No BigInt. Each half lives at j*v in a k*v byte buffer.
 */
export class ByteHalves implements FeistelHalves {
  private left: Uint8Array;
  private right: Uint8Array;
  private leftLength: number;
  private rightLength: number;

  constructor(values: readonly Uint16Array[], private readonly u: number, private readonly v: number, private readonly decrypt: boolean) {
    const count = values.length;
    const first = new Uint8Array(count * v);
    const second = new Uint8Array(count * v);
    for (let j = 0; j < count; j++) {
      const x = values[j] as Uint16Array;
      const o = j * v;
      for (let p = 0; p < u; p++) first[o + p] = x[p] as number;
      for (let p = 0; p < v; p++) second[o + p] = x[u + p] as number;
    }
    this.left = decrypt ? second : first;
    this.right = decrypt ? first : second;
    this.leftLength = decrypt ? v : u;
    this.rightLength = decrypt ? u : v;
  }

  xorNumB(out: Uint8Array, offset: number, stride: number, b: number): void {
    const { right, rightLength, v } = this;
    // NUM(B) is B's bytes, right-aligned in b bytes: the leading zeros leave `out` unchanged.
    const zeros = b - rightLength;
    for (let o = offset + zeros, src = 0; src < right.length; o += stride, src += v) {
      for (let p = 0; p < rightLength; p++) out[o + p] = (out[o + p] as number) ^ (right[src + p] as number);
    }
  }

  mixRound(s: Uint8Array, stride: number, d: number, m: number, subtract: boolean): void {
    const { left, v } = this;
    if (m !== this.leftLength) throw new Error('FF1 byte halves out of step');
    for (let j = 0, a = 0, yEnd = d; a < left.length; j++, a += v, yEnd += stride) {
      const y = yEnd - m;
      let carry = 0;
      for (let p = m - 1; p >= 0; p--) {
        let t = subtract
          ? (left[a + p] as number) - (s[y + p] as number) - carry
          : (left[a + p] as number) + (s[y + p] as number) + carry;
        if (subtract) {
          carry = t < 0 ? 1 : 0;
          t += carry << 8;
        } else {
          carry = t >> 8;
        }
        left[a + p] = t;
      }
    }
    this.left = this.right;
    this.right = left;
    this.leftLength = this.rightLength;
    this.rightLength = m;
  }

  numerals(): Uint16Array[] {
    const { u, v } = this;
    const first = this.decrypt ? this.right : this.left;
    const second = this.decrypt ? this.left : this.right;
    const n = u + v;
    const count = first.length / v;
    const { buffer, views } = numeralViews(count, n);
    for (let j = 0; j < count; j++) {
      for (let p = 0; p < u; p++) buffer[j * n + p] = first[j * v + p] as number;
      for (let p = 0; p < v; p++) buffer[j * n + u + p] = second[j * v + p] as number;
    }
    return views;
  }
}
