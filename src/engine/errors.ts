/**
 * Why a request or an element could not be processed. Front doors map these to HTTP statuses
 * or SQLSTATEs; the message never contains the offending value.
 */
export type ProtectionErrorCode =
  | 'unknown_kind'
  | 'unknown_method'
  | 'unknown_lang'
  | 'unknown_operation'
  | 'lang_not_supported'   // lang on a kind that has none
  | 'invalid_noise'        // negative, non-integer or not a number
  | 'noise_not_supported'  // noise with a method that has no randomness (fpe, mask, ...)
  | 'invalid_scope'        // scope option that is not a non-empty string
  | 'invalid_data'         // data is not an array
  | 'not_a_string'         // an element that is not a string
  | 'invalid_value'        // an element that is not of its kind
  | 'domain_too_small'     // an element whose fpe domain is too small to mean anything
  | 'not_reversible'       // unprotect with mask or redact
  | 'value_too_long';      // an element longer than the engine's bound (maxValueBytes)

export class ProtectionError extends Error {
  override readonly name = 'ProtectionError';
  readonly code: ProtectionErrorCode;
  /** Zero-based indexes of the elements concerned, for per-element problems. */
  readonly indexes: number[] | undefined;

  constructor(code: ProtectionErrorCode, message: string, indexes?: number[]) {
    super(message);
    this.code = code;
    this.indexes = indexes;
  }
}

/** What a kind returns for one element it could not transform. */
export interface ElementFailure {
  readonly failure: 'invalid_value' | 'domain_too_small';
}
export const INVALID_VALUE: ElementFailure = Object.freeze({ failure: 'invalid_value' });
export const DOMAIN_TOO_SMALL: ElementFailure = Object.freeze({ failure: 'domain_too_small' });

export function isElementFailure(x: unknown): x is ElementFailure {
  return typeof x === 'object' && x !== null && 'failure' in x;
}
