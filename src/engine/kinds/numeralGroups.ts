import type { FpeCipher, Tweak } from '../crypto/fpeCipher.js';
import { ScratchNumerals } from '../crypto/scratchNumerals.js';

/** The calls are synchronous: one set of buffers serves them all. */
const valueNumerals = new ScratchNumerals();
const runNumerals = new ScratchNumerals();
const resultNumerals = new ScratchNumerals();

/** Values of one numeral count under one tweak: a kind's layout. */
interface NumeralGroup {
  readonly n: number;
  readonly tweak: Tweak;
  readonly members: number[];
}

/**
 * The values of one in-place fpe call, gathered by group (one numeral count and one tweak each:
 * a kind's layout), so that each group is one cipher call over its numerals laid end to end,
 * with no array per value. Each value's numerals are first written at i * stride. One instance
 * at a time: its buffers are shared scratch, used from the constructor until wipe(), which the
 * caller runs in a `finally`.
 */
export class NumeralGroups {
  /** Value i's numerals at [i * stride, i * stride + n). */
  readonly numerals: Uint16Array;
  private readonly byKey = new Map<number, NumeralGroup>();

  constructor(count: number, readonly stride: number) {
    this.numerals = valueNumerals.take(count * stride);
  }

  /** Value i (its numerals already written) joins the group `key`; false when there is no such group yet (open it, then add). */
  add(key: number, i: number): boolean {
    const group = this.byKey.get(key);
    if (group === undefined) return false;
    group.members.push(i);
    return true;
  }

  /** A group of values of n numerals under one tweak; a key opens once. */
  open(key: number, n: number, tweak: Tweak): void {
    if (this.byKey.has(key)) throw new RangeError('a numeral group is opened once');
    this.byKey.set(key, { n, tweak, members: [] });
  }

  /** Zeroes the values' numerals (the scratch they share with the next call). */
  wipe(): void {
    this.numerals.fill(0);
  }

  /**
   * Runs every group through the cipher, then hands each member's result numerals to `write`
   * (value i, its n numerals at result[at, at + n)). A group the cipher leaves to the batch path
   * (a domain below FF1's) is skipped: its members are not written.
   */
  crypt(cipher: FpeCipher, radix: number, decrypt: boolean, write: (i: number, result: Uint16Array, at: number, n: number) => void): void {
    const { numerals, stride } = this;
    for (const { n, tweak, members } of this.byKey.values()) {
      const run = runNumerals.take(members.length * n);
      const result = resultNumerals.take(members.length * n);
      try {
        for (let g = 0, at = 0; g < members.length; g++) {
          const from = (members[g] as number) * stride;
          for (let p = 0; p < n; p++) run[at++] = numerals[from + p] as number;
        }
        if (cipher.cryptNumeralRun?.(radix, n, run, tweak, decrypt, result) !== true) continue;
        for (let g = 0; g < members.length; g++) write(members[g] as number, result, g * n, n);
      } finally {
        run.fill(0);
        result.fill(0);
      }
    }
  }
}
