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

  /** One-way, keeps the kind-specific part documented in the README (last four, year, ...). */
  mask(value: string, lang: Lang): string;
  /** One-way, keeps only the layout (separators, format characters). */
  redact(value: string, lang: Lang): string;
}
