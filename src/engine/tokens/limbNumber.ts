/**
 * A non-negative number of at most MAX_LIMB_BYTES bytes, built from the digits of a token text
 * by multiply-adds of a chunk of digits at a time into 24-bit limbs (least significant first),
 * then read out as big-endian bytes: token text to bytes without a digits array or BigInt.
 * Exact: a limb (< 2^24) times a factor below MAX_LIMB_FACTOR (2^28), plus a carry below the
 * factor, stays below 2^53. Calls are synchronous: one number serves every decoder in turn.
 */
const LIMB = 2 ** 24;
const LIMB_INVERSE = 1 / LIMB;
/** Multiply-add factors stay below this. */
export const MAX_LIMB_FACTOR = 2 ** 28;
const MAX_LIMBS = 22;
/** The most bytes a LimbNumber holds (22 limbs of 3 bytes). */
export const MAX_LIMB_BYTES = 3 * MAX_LIMBS;

export class LimbNumber {
  private readonly limbs = new Int32Array(MAX_LIMBS);
  /** limbs[used..) are zero. */
  private used = 0;
  /** How many limbs this number may take. */
  private capacity = 0;

  /** Zero, with room for `byteCount` bytes (at most MAX_LIMB_BYTES). */
  reset(byteCount: number): void {
    this.limbs.fill(0, 0, this.used);
    this.used = 0;
    this.capacity = Math.ceil(byteCount / 3);
  }

  /** this · factor + addend (addend < factor < MAX_LIMB_FACTOR); false when the limbs reset() gave do not hold it. */
  multiplyAdd(factor: number, addend: number): boolean {
    const limbs = this.limbs;
    let carry = addend;
    for (let i = 0; i < this.used; i++) {
      const current = (limbs[i] as number) * factor + carry;
      carry = Math.floor(current * LIMB_INVERSE); // exact: a power of two
      limbs[i] = current - carry * LIMB;
    }
    for (; carry > 0; this.used++) {
      if (this.used === this.capacity) return false;
      const next = Math.floor(carry * LIMB_INVERSE);
      limbs[this.used] = carry - next * LIMB;
      carry = next;
    }
    return true;
  }

  /** The number as `byteCount` big-endian bytes; null when it needs more. The limbs are wiped. */
  toBytes(byteCount: number): Uint8Array | null {
    const out = new Uint8Array(byteCount);
    return this.readInto(out) === 0 ? out : null;
  }

  /** The number's bytes after its leading non-zero byte when that byte is 1 (a sentinel); else null. The limbs are wiped. */
  bytesAfterSentinel(): Uint8Array | null {
    const top = this.used === 0 ? 0 : (this.limbs[this.used - 1] as number);
    const topBytes = top >= 1 << 16 ? 3 : top >= 1 << 8 ? 2 : 1;
    // Every byte but the leading one: what is left beyond them is that byte.
    const out = new Uint8Array(Math.max(0, 3 * (this.used - 1) + topBytes - 1));
    return this.readInto(out) === 1 ? out : null;
  }

  /** Writes the number's low out.length bytes into `out`, big-endian, wipes the limbs and returns the bytes beyond, or'ed. */
  private readInto(out: Uint8Array): number {
    const limbs = this.limbs;
    const byteCount = out.length;
    let beyond = 0;
    for (let i = 0; i < this.used; i++) {
      const limb = limbs[i] as number;
      for (let b = 0; b < 3; b++) {
        const at = byteCount - 1 - (3 * i + b);
        const byte = (limb >>> (8 * b)) & 0xff;
        if (at >= 0) out[at] = byte;
        else beyond |= byte;
      }
    }
    this.reset(0);
    return beyond;
  }
}
