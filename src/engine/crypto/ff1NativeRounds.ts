import type { Tweak, Tweaks } from './fpeCipher.js';
import { NATIVE_FF1_MAX_MODULUS, nativeByteLimit, type NativeFf1, type NativeFf1Context } from './nativeFf1.js';
import { numeralViews } from './numerals.js';

/*
 * The addon reads the values and tweaks of a group from scratch arrays that live as long as the
 * process: the callers' arrays may be small fresh ones on V8's heap, which N-API would move to the
 * C heap on every call (see offHeapSlab.ts); copying a group's numerals costs less. Calls are
 * synchronous, so one set serves every instance; the input numerals are wiped after each call.
 * Outputs are written straight into off-heap numeral views.
 */
const SCRATCH_NUMERALS = 4096;
const SCRATCH_TWEAK_BYTES = 2048;
const SCRATCH_TWEAKS = 256;
const scratchInput = new Uint16Array(SCRATCH_NUMERALS);
const scratchTweak = new Uint8Array(SCRATCH_TWEAK_BYTES);
const scratchEnds = new Uint32Array(SCRATCH_TWEAKS);

/** A view of scratch[0, length), made once per length (subarray() per call costs more than the copy). */
function prefixViews<T extends Uint8Array | Uint16Array | Uint32Array>(scratch: T): (length: number) => T {
  const views: T[] = [];
  return (length) => (views[length] ??= scratch.subarray(0, length) as T);
}
const inputOf = prefixViews(scratchInput);
const tweakOf = prefixViews(scratchTweak);
const endsOf = prefixViews(scratchEnds);

/**
 * FF1 rounds of one key and radix in the native addon: a whole group (one length) per call, for
 * lengths whose halves fit the addon's 64-bit integers, or bytes up to its length limit
 * (inRange). The caller has checked the numerals and lengths; the addon checks them again and
 * throws rather than misbehave.
 */
export class NativeFf1Rounds {
  private readonly context: NativeFf1Context;
  /** inRange by length (lengths are few per radix). */
  private readonly rangeByLength: boolean[] = [];

  constructor(private readonly addon: NativeFf1, key: Uint8Array, private readonly radix: number) {
    this.context = addon.createContext(key);
  }

  /** radix^(n - n/2) < 2^53, or radix 256 (bytes) up to the addon's byte limit: the addon's range. */
  inRange(n: number): boolean {
    let known = this.rangeByLength[n];
    if (known === undefined) {
      let modulus = 1;
      for (let p = 0; p < n - (n >> 1) && modulus < NATIVE_FF1_MAX_MODULUS; p++) modulus *= this.radix;
      known = modulus < NATIVE_FF1_MAX_MODULUS || (this.radix === 256 && n <= nativeByteLimit(this.addon));
      if (n < 1024) this.rangeByLength[n] = known;
    }
    return known;
  }

  /** The addon's context of this key, for another native call that runs these rounds. */
  get handle(): NativeFf1Context {
    return this.context;
  }

  /** One value into `out` (inRange(x.length); out is not x). */
  cryptInto(x: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): void {
    // The callers keep x, out and the tweak for many calls: they move to the C heap once.
    this.addon.crypt(this.context, this.radix, x.length, x, out, tweak, undefined, decrypt);
  }

  /** Values of n numerals end to end in `input`, one tweak, into `out` (inRange(n); checked by the caller). */
  cryptRun(n: number, input: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): void {
    // The caller's run arrays are long-lived or off V8's heap (offHeapSlab.ts): no copy needed.
    this.addon.crypt(this.context, this.radix, n, input, out, sharedTweakBytes(tweak), undefined, decrypt);
  }

  /**
   * Radix 2: values of n bits held in integers, one tweak, into `out`; false (nothing done) when
   * this build has no such path or n is outside 20..32.
   */
  cryptBitsRun(n: number, input: Uint32Array, tweak: Tweak, decrypt: boolean, out: Uint32Array): boolean {
    const cryptBits = this.addon.cryptBits;
    if (cryptBits === undefined || this.radix !== 2 || n < 20 || n > 32) return false;
    cryptBits(this.context, n, input, out, sharedTweakBytes(tweak), decrypt);
    return true;
  }

  /** Radix 10: the addon's cryptDigitsInPlace; false (nothing done) where this build has none. */
  cryptDigitsInPlace(
    template: Uint8Array, luhn: boolean, tweak: Tweak, decrypt: boolean, bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, handled: Uint8Array,
  ): boolean {
    const cryptDigits = this.addon.cryptDigitsInPlace;
    if (cryptDigits === undefined || this.radix !== 10) return false;
    cryptDigits(this.context, template, luhn, sharedTweakBytes(tweak), decrypt, bytes, starts, lengths, handled);
    return true;
  }

  /** All values share length n (inRange(n)). */
  cryptGroup(values: readonly Uint16Array[], tweak: Tweaks, sharedTweak: Tweak | undefined, decrypt: boolean): Uint16Array[] {
    const count = values.length;
    const n = (values[0] as Uint16Array).length;
    const total = count * n;
    const { buffer, views } = numeralViews(count, n);
    const { bytes, ends } = sharedTweak ? { bytes: sharedTweakBytes(sharedTweak), ends: undefined } : packTweaks(tweak as readonly Tweak[]);
    const input = total <= SCRATCH_NUMERALS ? inputOf(total) : new Uint16Array(total);
    // Loops: set() and fill() cost more than a value's few numerals.
    for (let j = 0, at = 0; j < count; j++) {
      const x = values[j] as Uint16Array;
      for (let p = 0; p < n; p++) input[at++] = x[p] as number;
    }
    try {
      this.addon.crypt(this.context, this.radix, n, input, buffer, bytes, ends, decrypt);
    } finally {
      for (let p = 0; p < total; p++) input[p] = 0;
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

/** One tweak for every value, in scratch when it fits. */
function sharedTweakBytes(tweak: Tweak): Uint8Array {
  const t = tweak.length;
  if (t > SCRATCH_TWEAK_BYTES) return tweak;
  for (let p = 0; p < t; p++) scratchTweak[p] = tweak[p] as number;
  return tweakOf(t);
}

/** Per-value tweaks as one byte string and the end offset of each, in scratch when they fit. */
function packTweaks(tweaks: readonly Tweak[]): { bytes: Uint8Array; ends: Uint32Array } {
  let total = 0;
  for (let j = 0; j < tweaks.length; j++) total += (tweaks[j] as Tweak).length;
  const inScratch = tweaks.length <= SCRATCH_TWEAKS && total <= SCRATCH_TWEAK_BYTES;
  const ends = inScratch ? endsOf(tweaks.length) : new Uint32Array(tweaks.length);
  for (let j = 0, end = 0; j < tweaks.length; j++) {
    end += (tweaks[j] as Tweak).length;
    ends[j] = end;
  }
  const bytes = inScratch ? tweakOf(total) : new Uint8Array(total);
  for (let j = 0, at = 0; j < tweaks.length; j++) {
    const t = tweaks[j] as Tweak;
    for (let p = 0; p < t.length; p++) bytes[at++] = t[p] as number;
  }
  return { bytes, ends };
}
