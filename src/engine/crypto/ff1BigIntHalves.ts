import type { FeistelHalves } from './ff1FeistelHalves.js';
import { bigIntToNumerals, numeralsToBigInt, numeralViews } from './numerals.js';

/**
 * Path (c), the fallback for large radix^v: halves as BigInt. Byte strings go through hex,
 * which V8 converts natively, rather than a loop of BigInt shifts.
 */
export class BigIntHalves implements FeistelHalves {
  private left: bigint[];
  private right: bigint[];
  private readonly modulusU: bigint;
  private readonly modulusV: bigint;

  constructor(
    values: readonly Uint16Array[],
    private readonly radix: number,
    private readonly u: number,
    private readonly v: number,
    private readonly decrypt: boolean,
  ) {
    const n = u + v;
    const first = values.map((x) => numeralsToBigInt(x, 0, u, radix));
    const second = values.map((x) => numeralsToBigInt(x, u, n, radix));
    this.left = decrypt ? second : first;
    this.right = decrypt ? first : second;
    this.modulusU = BigInt(radix) ** BigInt(u);
    this.modulusV = BigInt(radix) ** BigInt(v);
  }

  xorNumB(out: Uint8Array, offset: number, stride: number, b: number): void {
    const right = this.right;
    const scratch = Buffer.allocUnsafe(b);
    for (let j = 0, o = offset; j < right.length; j++, o += stride) {
      scratch.write((right[j] as bigint).toString(16).padStart(2 * b, '0'), 0, b, 'hex');
      for (let p = 0; p < b; p++) out[o + p] = (out[o + p] as number) ^ (scratch[p] as number);
    }
  }

  mixRound(s: Uint8Array, stride: number, d: number, m: number, subtract: boolean): void {
    const bytes = Buffer.from(s.buffer, s.byteOffset, s.byteLength);
    const modulus = m === this.u ? this.modulusU : this.modulusV;
    const left = this.left;
    for (let j = 0, o = 0; j < left.length; j++, o += stride) {
      const y = BigInt(`0x${bytes.toString('hex', o, o + d)}`);
      const a = left[j] as bigint;
      let c = (subtract ? a - y : a + y) % modulus;
      if (c < 0n) c += modulus;
      left[j] = c;
    }
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
      bigIntToNumerals(first[j] as bigint, radix, buffer, j * n, u);
      bigIntToNumerals(second[j] as bigint, radix, buffer, j * n + u, v);
    }
    return views;
  }
}
