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
 * with no array per value.
 *
 * A column's values nearly all share one layout: the first group opened is written where the
 * cipher reads it, its values' numerals end to end in `numerals[0, count * stride)`, and a value
 * of that group costs no copy. A kind writes each value's numerals at `slot()` before it knows
 * the value's layout, then `add`s it: a value of another group is moved to its own place then
 * (`numerals[(count + i) * stride, ...)`) and copied into a run of its group in `crypt`.
 *
 * One instance at a time: its buffers are shared scratch, used from the constructor until
 * wipe(), which the caller runs in a `finally`.
 */
export class NumeralGroups {
  /** The first group's run, then the other groups' values, each at (count + i) * stride. */
  readonly numerals: Uint16Array;
  private readonly byKey = new Map<number, NumeralGroup>();
  private firstKey = -1;
  private firstN = 0;
  private firstTweak: Tweak = new Uint8Array(0);
  private readonly firstMembers: Int32Array;
  private firstCount = 0;

  constructor(private readonly count: number, readonly stride: number) {
    this.numerals = valueNumerals.take(2 * count * stride);
    this.firstMembers = new Int32Array(count);
  }

  /**
   * Where the next value's numerals (at most `stride`) are to be written: the end of the first
   * group's run, which a value of that group then extends in place.
   */
  slot(): number {
    return this.firstCount * this.firstN;
  }

  /**
   * Value i, its n numerals written at slot(), joins the group `key` (which fixes n); false when
   * there is no such group yet (open it, then add: the numerals at slot() stay until then).
   */
  add(key: number, i: number, n: number): boolean {
    if (key === this.firstKey) {
      this.firstMembers[this.firstCount++] = i;
      return true;
    }
    const group = this.byKey.get(key);
    if (group === undefined) return false;
    const from = this.slot();
    const to = (this.count + i) * this.stride;
    const numerals = this.numerals;
    for (let p = 0; p < n; p++) numerals[to + p] = numerals[from + p] as number;
    group.members.push(i);
    return true;
  }

  /** A group of values of n numerals under one tweak; a key opens once. */
  open(key: number, n: number, tweak: Tweak): void {
    if (key === this.firstKey || this.byKey.has(key)) throw new RangeError('a numeral group is opened once');
    if (n > this.stride) throw new RangeError('a numeral group\'s values are at most stride numerals');
    if (this.firstKey < 0) {
      this.firstKey = key;
      this.firstN = n;
      this.firstTweak = tweak;
    } else {
      this.byKey.set(key, { n, tweak, members: [] });
    }
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
    const { numerals, stride, count } = this;
    // The first group's run is where its values were parsed.
    if (this.firstCount > 0) {
      const run = numerals.subarray(0, this.firstCount * this.firstN);
      cryptRun(cipher, radix, decrypt, run, this.firstN, this.firstTweak, this.firstMembers, this.firstCount, write);
    }
    for (const { n, tweak, members } of this.byKey.values()) {
      const run = runNumerals.take(members.length * n);
      try {
        for (let g = 0, at = 0; g < members.length; g++) {
          const from = (count + (members[g] as number)) * stride;
          for (let p = 0; p < n; p++) run[at++] = numerals[from + p] as number;
        }
        cryptRun(cipher, radix, decrypt, run, n, tweak, members, members.length, write);
      } finally {
        run.fill(0);
      }
    }
  }
}

/** One group's run through the cipher, each member's result handed to `write`; skipped where the cipher declines it. */
function cryptRun(
  cipher: FpeCipher, radix: number, decrypt: boolean, run: Uint16Array, n: number, tweak: Tweak, members: ArrayLike<number>, memberCount: number,
  write: (i: number, result: Uint16Array, at: number, n: number) => void,
): void {
  const result = resultNumerals.take(memberCount * n);
  try {
    if (cipher.cryptNumeralRun?.(radix, n, run, tweak, decrypt, result) !== true) return;
    for (let g = 0; g < memberCount; g++) write(members[g] as number, result, g * n, n);
  } finally {
    result.fill(0);
  }
}
