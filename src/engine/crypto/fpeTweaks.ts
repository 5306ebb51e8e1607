import type { Tweak, Tweaks } from './fpeCipher.js';

/**
 * Domain separation for FpeCipher: every user tweak is prefixed by what it is used for, so the
 * numeral and integer modes, the leadingNonZero walk and different domains never share a
 * permutation (two cycle walks over one permutation would leak how their outputs relate).
 */
export const TweakMode = {
  numerals: 1,
  numeralsLeadingNonZero: 2,
  integer: 3,
} as const;
export type NumeralsMode = typeof TweakMode.numerals | typeof TweakMode.numeralsLeadingNonZero;

/**
 * FF1 over numerals: a mode byte is enough, because FF1's block P already binds radix and length.
 */
export function ff1NumeralsPrefix(mode: NumeralsMode): Uint8Array {
  return Uint8Array.of(mode);
}

/** The small-domain permutation of radix^length numeral strings: mode, [radix]_3, [length]_4. */
export function permutationNumeralsPrefix(mode: NumeralsMode, radix: number, length: number): Uint8Array {
  const prefix = Buffer.alloc(8);
  prefix[0] = mode;
  prefix.writeUIntBE(radix, 1, 3);
  prefix.writeUInt32BE(length, 4);
  return prefix;
}

/** Integers in [0, domain): mode, [byte length of domain]_2, domain big-endian. */
export function integerPrefix(domain: bigint): Uint8Array {
  let hex = domain.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  const prefix = Buffer.alloc(3 + bytes.length);
  prefix[0] = TweakMode.integer;
  prefix.writeUInt16BE(bytes.length, 1);
  bytes.copy(prefix, 3);
  return prefix;
}

function concat(prefix: Uint8Array, tweak: Tweak): Uint8Array {
  const out = new Uint8Array(prefix.length + tweak.length);
  out.set(prefix);
  out.set(tweak, prefix.length);
  return out;
}

/**
 * Prefixes a call's tweaks with one fixed prefix. Kinds often repeat one tweak object across
 * values; those share one prefixed tweak, which lets FF1 see a shared tweak and skip per-value
 * work. The prefixed copy of each tweak object is remembered (kinds keep their tweaks, one per
 * layout), so a call of one value allocates nothing. A
 * remembered copy is used only while its bytes still equal prefix || tweak: a caller that
 * changes a tweak in place gets a fresh copy, never a stale one.
 */
export class PrefixedTweaks {
  private readonly copies = new WeakMap<Tweak, Tweak>();

  constructor(private readonly prefix: Uint8Array) {}

  of(tweak: Tweak): Tweak {
    const copy = this.copies.get(tweak);
    if (copy !== undefined && isPrefixedCopy(copy, this.prefix, tweak)) return copy;
    const fresh = concat(this.prefix, tweak);
    this.copies.set(tweak, fresh);
    return fresh;
  }

  all(tweak: Tweaks): Tweaks {
    if (tweak instanceof Uint8Array) return this.of(tweak);
    const out = new Array<Tweak>(tweak.length);
    let last: Tweak | undefined;
    let lastCopy: Tweak | undefined;
    for (let j = 0; j < tweak.length; j++) {
      const t = tweak[j] as Tweak;
      // Runs of one tweak object are the usual batch: one lookup per run.
      if (t !== last) {
        last = t;
        lastCopy = this.of(t);
      }
      out[j] = lastCopy as Tweak;
    }
    return out;
  }
}

function isPrefixedCopy(copy: Tweak, prefix: Uint8Array, tweak: Tweak): boolean {
  const p = prefix.length;
  if (copy.length !== p + tweak.length) return false;
  for (let x = 0; x < p; x++) if (copy[x] !== prefix[x]) return false;
  for (let x = 0; x < tweak.length; x++) if (copy[p + x] !== tweak[x]) return false;
  return true;
}

/** The tweak of value j. */
export function tweakAt(tweak: Tweaks, j: number): Tweak {
  return tweak instanceof Uint8Array ? tweak : (tweak[j] as Tweak);
}

/** The tweaks of the values at `indexes`, keeping a single tweak single. */
export function tweaksAt(tweak: Tweaks, indexes: readonly number[]): Tweaks {
  return tweak instanceof Uint8Array ? tweak : indexes.map((j) => tweak[j] as Tweak);
}

export function checkTweakCount(tweak: Tweaks, count: number): void {
  if (!(tweak instanceof Uint8Array) && tweak.length !== count) {
    throw new RangeError(`got ${tweak.length} tweaks for ${count} values: give one tweak, or one per value`);
  }
}

const ff1NumeralsTweaksByMode = new Map<NumeralsMode, PrefixedTweaks>([
  [TweakMode.numerals, new PrefixedTweaks(ff1NumeralsPrefix(TweakMode.numerals))],
  [TweakMode.numeralsLeadingNonZero, new PrefixedTweaks(ff1NumeralsPrefix(TweakMode.numeralsLeadingNonZero))],
]);

/** The prefixed tweaks of FF1 over numerals in `mode`. */
export function ff1NumeralsTweaks(mode: NumeralsMode): PrefixedTweaks {
  return ff1NumeralsTweaksByMode.get(mode) as PrefixedTweaks;
}

const integerTweaksByDomain = new Map<bigint, PrefixedTweaks>();
const INTEGER_DOMAIN_LIMIT = 1024;

/** The prefixed tweaks of integers in [0, domain) (domains are few: a kind has a handful). */
export function integerTweaks(domain: bigint): PrefixedTweaks {
  let tweaks = integerTweaksByDomain.get(domain);
  if (tweaks === undefined) {
    if (integerTweaksByDomain.size >= INTEGER_DOMAIN_LIMIT) integerTweaksByDomain.clear();
    tweaks = new PrefixedTweaks(integerPrefix(domain));
    integerTweaksByDomain.set(domain, tweaks);
  }
  return tweaks;
}
