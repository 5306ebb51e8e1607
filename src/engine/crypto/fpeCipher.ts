/**
 * The format-preserving cipher that kinds use for `fpe`: one per (fpe, kind, scope, key version)
 * subkey. Kinds describe their values as numeral strings or as integers in a domain; this
 * interface hides FF1, batching, cycle walking and the small-domain permutation.
 *
 * Domain sizes (radix^length, or N):
 * - N >= 1 000 000: NIST SP 800-38G FF1 over AES-256, rounds batched across the whole call.
 * - MIN_DOMAIN <= N < 1 000 000: a keyed permutation of the whole domain (cached table).
 * - N < MIN_DOMAIN: too small to mean anything; the element comes back as `null`.
 */
export const MIN_DOMAIN = 100;
export const FF1_MIN_DOMAIN = 1_000_000;

export type Tweak = Uint8Array;
/** One tweak for the whole call, or one per value (same length as `values`). */
export type Tweaks = Tweak | readonly Tweak[];

export interface NumeralConstraint {
  /** The first numeral must not be 0 (numbers whose digit count must survive, e.g. numeric types). */
  leadingNonZero?: boolean;
}

export interface FpeCipher {
  /**
   * Encrypts numeral strings (each numeral in [0, radix)). Values may differ in length; each keeps
   * its length. Returns `null` for a value whose domain is below MIN_DOMAIN.
   */
  encryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint): (Uint16Array | null)[];
  decryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint): (Uint16Array | null)[];

  /**
   * Optional: one value of encryptNumerals / decryptNumerals, written into `out` (x.length
   * numerals, not x itself), for callers that protect one value at a time: the same numerals,
   * without the batch's arrays. False where the batch gives `null`.
   */
  cryptNumeralsInto?(radix: number, x: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array, constraint?: NumeralConstraint): boolean;

  /**
   * Optional: `count` values of n numerals laid end to end in `values` (count = values.length / n),
   * one tweak for all, into `out` (another array of the same length): the numerals
   * encryptNumerals / decryptNumerals give each, without an array per value. False, `out`
   * untouched, where those values do not go through FF1 (radix^n < FF1_MIN_DOMAIN): the caller
   * takes the batch path then. After a throw `out` may hold some results: the caller wipes it.
   */
  cryptNumeralRun?(radix: number, n: number, values: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): boolean;

  /**
   * Optional: encryptInteger / decryptInteger of integers held as numbers, into `out` (same
   * length): the same integers, without BigInt. False, `out` untouched, where the domain is
   * below FF1_MIN_DOMAIN or above 2^31: the caller takes the bigint path then. After a throw
   * `out` may hold some results: the caller wipes it.
   */
  cryptIntegerRun?(domain: number, values: Int32Array, tweak: Tweak, decrypt: boolean, out: Int32Array): boolean;

  /**
   * Optional: encryptNumerals / decryptNumerals in radix 10, under `tweak`, of the digits of the
   * text fields bytes[starts[i], starts[i] + lengths[i]) that spell `template` byte for byte (0
   * a digit place, any other byte itself) and have handled[i] = 0, written back where they lie;
   * with `luhn`, the last digit is left out and then set so the field's Luhn state is kept (ccn).
   * handled[i] becomes 1 for each field rewritten. The fields come in order and do not overlap
   * (a RangeError otherwise, before anything is written). False, nothing done, where this cipher
   * has no such path (no native build): the caller does it digit by digit. The template has 6 to
   * 30 digit places (besides the check digit).
   */
  cryptDigitsInPlace?(
    template: Uint8Array, luhn: boolean, tweak: Tweak, decrypt: boolean, bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, handled: Uint8Array,
  ): boolean;

  /** Encrypts integers in [0, domain). All values share the domain. `null` when domain < MIN_DOMAIN. */
  encryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks): (bigint | null)[];
  decryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks): (bigint | null)[];
}
