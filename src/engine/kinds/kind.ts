import type { ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import type { Kind, Lang } from '../types.js';

export type FpeDirection = 'encrypt' | 'decrypt';

/**
 * Everything the engine needs to know about one data kind. One file per kind implements it;
 * the engine owns keys, options, tokenise and the response shape.
 */
export interface KindHandler {
  readonly kind: Kind;
  /** True for address, text, name, city. */
  readonly hasLang: boolean;

  /** Whether `value` is of this kind (an ssn "hello" is not). Protect refuses values that are not. */
  isValid(value: string, lang: Lang): boolean;

  /**
   * Format-preserving encryption, batched over the whole request. For each value, the output of
   * the same length and layout, valid for the kind; or a failure: `invalid_value` for a value
   * that is not of the kind, `domain_too_small` when its domain is under MIN_DOMAIN.
   * decrypt(encrypt(x)) === x for every valid x.
   */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher, lang: Lang): (string | ElementFailure)[];

  /**
   * Optional: fpe of one value, for callers that protect one value at a time: exactly
   * `fpe([value], ...)[0]`, without the batch's arrays. Only for kinds whose one value needs at
   * most one small-domain permutation table (the most a batch's first slice may build).
   */
  fpeOne?(value: string, direction: FpeDirection, cipher: FpeCipher, lang: Lang): string | ElementFailure;

  /**
   * Optional: fpe of values that lie as bytes in other buffers (a result set's fields), rewritten
   * in place, for the spellings whose fpe output has the same bytes count and is ASCII (ssn,
   * card numbers, ISO dates). Sets handled[i] = 1 where value i was rewritten, to exactly the
   * UTF-8 bytes of `fpe([its text])[0]`; leaves handled[i] = 0 and the bytes untouched for the
   * rest (another spelling, no value of the kind, a domain below FF1's), which the caller sends
   * through `fpe`. `handled` is written, not read. Never builds a permutation table: its work per
   * value is bounded.
   */
  fpeInPlace?(fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array): void;

  /** One-way, keeps the kind-specific part documented in the README (last four, year, ...). */
  mask(value: string, lang: Lang): string;
  /** One-way, keeps only the layout (separators, format characters). */
  redact(value: string, lang: Lang): string;
}

/** Values in byte buffers: value i is buffers[i][starts[i], starts[i] + lengths[i]); no two overlap. */
export interface ByteFields {
  readonly count: number;
  readonly buffers: readonly Uint8Array[];
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
}

/** `handler.fpe([value], ...)[0]`, through its single-value path where it has one. */
export function fpeOneValue(handler: KindHandler, value: string, direction: FpeDirection, cipher: FpeCipher, lang: Lang): string | ElementFailure {
  if (handler.fpeOne) return handler.fpeOne(value, direction, cipher, lang);
  return handler.fpe([value], direction, cipher, lang)[0] as string | ElementFailure;
}
