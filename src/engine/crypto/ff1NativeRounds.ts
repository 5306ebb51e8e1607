import type { Tweak, Tweaks } from './fpeCipher.js';
import { NATIVE_FF1_MAX_MODULUS, type NativeFf1, type NativeFf1Context } from './nativeFf1.js';
import { numeralViews } from './numerals.js';

/**
 * FF1 rounds of one key and radix in the native addon: a whole group (one length) per call, for
 * lengths whose halves fit the addon's 64-bit integers (inRange). The caller has checked the
 * numerals and lengths; the addon checks them again and throws rather than misbehave.
 */
export class NativeFf1Rounds {
  private readonly context: NativeFf1Context;
  /** inRange by length (lengths are few per radix). */
  private readonly rangeByLength: boolean[] = [];

  constructor(private readonly addon: NativeFf1, key: Uint8Array, private readonly radix: number) {
    this.context = addon.createContext(key);
  }

  /** radix^(n - n/2) < 2^53: the addon's range. */
  inRange(n: number): boolean {
    let known = this.rangeByLength[n];
    if (known === undefined) {
      let modulus = 1;
      for (let p = 0; p < n - (n >> 1) && modulus < NATIVE_FF1_MAX_MODULUS; p++) modulus *= this.radix;
      known = modulus < NATIVE_FF1_MAX_MODULUS;
      if (n < 1024) this.rangeByLength[n] = known;
    }
    return known;
  }

  /** One value into `out` (inRange(x.length); out is not x). */
  cryptInto(x: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): void {
    this.addon.crypt(this.context, this.radix, x.length, x, out, tweak, undefined, decrypt);
  }

  /** All values share length n (inRange(n)). */
  cryptGroup(values: readonly Uint16Array[], tweak: Tweaks, sharedTweak: Tweak | undefined, decrypt: boolean): Uint16Array[] {
    const count = values.length;
    const n = (values[0] as Uint16Array).length;
    if (count === 1) {
      const out = new Uint16Array(n);
      this.addon.crypt(this.context, this.radix, n, values[0] as Uint16Array, out, sharedTweak ?? (tweak[0] as Tweak), undefined, decrypt);
      return [out];
    }
    const input = new Uint16Array(count * n);
    for (let j = 0; j < count; j++) input.set(values[j] as Uint16Array, j * n);
    const { buffer, views } = numeralViews(count, n);
    if (sharedTweak) {
      this.addon.crypt(this.context, this.radix, n, input, buffer, sharedTweak, undefined, decrypt);
    } else {
      const { bytes, ends } = packTweaks(tweak as readonly Tweak[]);
      this.addon.crypt(this.context, this.radix, n, input, buffer, bytes, ends, decrypt);
    }
    return views;
  }

  toJSON(): string {
    return `[NativeFf1Rounds radix ${this.radix}]`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `NativeFf1Rounds { radix: ${this.radix} }`;
  }
}

/** Per-value tweaks as one byte string and the end offset of each. */
function packTweaks(tweaks: readonly Tweak[]): { bytes: Uint8Array; ends: Uint32Array } {
  const ends = new Uint32Array(tweaks.length);
  let total = 0;
  for (let j = 0; j < tweaks.length; j++) {
    total += (tweaks[j] as Tweak).length;
    ends[j] = total;
  }
  const bytes = new Uint8Array(total);
  for (let j = 0, at = 0; j < tweaks.length; j++) {
    const t = tweaks[j] as Tweak;
    bytes.set(t, at);
    at += t.length;
  }
  return { bytes, ends };
}
