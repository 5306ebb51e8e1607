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
 * Prefixes a call's tweaks. Kinds often repeat one tweak object across values; those share
 * one prefixed tweak, which lets FF1 see a shared tweak and skip per-value work.
 */
export function prefixTweaks(prefix: Uint8Array, tweak: Tweaks): Tweaks {
  if (tweak instanceof Uint8Array) return concat(prefix, tweak);
  const seen = new Map<Tweak, Tweak>();
  return tweak.map((t) => {
    let prefixed = seen.get(t);
    if (!prefixed) {
      prefixed = concat(prefix, t);
      seen.set(t, prefixed);
    }
    return prefixed;
  });
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
