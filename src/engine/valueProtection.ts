import type { FpeCipher } from './crypto/fpeCipher.js';
import { ProtectionError, isElementFailure, type ElementFailure } from './errors.js';
import { fpeOneValue, type ByteFields, type KindHandler } from './kinds/kind.js';
import { OTHER_SCOPE, type HeldTokenising, type Tokeniser } from './tokens/tokeniser.js';
import type { Kind, Method, ResolvedOptions } from './types.js';
import { isLongerThan, maxTokenBytes } from './valueLimits.js';

/**
 * Protection of one value at a time under options resolved once: what a caller that protects
 * values one by one (the proxy) keeps per column, so that a value costs its own work and none of
 * a request's (option checks, arrays, slicing, promises). Every output and every refusal is the
 * one protect / unprotect give for that value as a batch of one.
 */

/** Why unprotect gave a value back unchanged: where a batch lists its index in `discrepancy`. */
export interface UnprotectDiscrepancy {
  readonly discrepancy: 'invalid_token' | 'invalid_scope';
}
export const INVALID_TOKEN: UnprotectDiscrepancy = Object.freeze({ discrepancy: 'invalid_token' });
export const INVALID_SCOPE: UnprotectDiscrepancy = Object.freeze({ discrepancy: 'invalid_scope' });

/** One (kind, method, scope, noise, lang), checked and resolved once, applied to one value per call. */
export interface ValueProtection {
  readonly kind: Kind;
  readonly method: Method;
  /**
   * True when one value costs bounded work (no small-domain permutation table to build, which
   * fpe of some kinds may need): a caller may run it inline on the event loop. The batch calls
   * spread the other cases over turns.
   */
  readonly immediate: boolean;
  /**
   * `protect(kind, [value], options).result[0]`, synchronously. Throws the ProtectionError that
   * call rejects with (same code and message, indexes [0]).
   */
  protect(value: string): string;
  /**
   * `unprotect(kind, [value], options)`, synchronously: the plaintext, or INVALID_TOKEN /
   * INVALID_SCOPE where that call gives the value back unchanged and lists it in `discrepancy`.
   * Throws what that call throws (not_reversible for mask and redact).
   */
  unprotect(value: string): string | UnprotectDiscrepancy;
  /**
   * Present for fpe of a kind that can work in place (ssn, ccn, date): unprotect of values that
   * lie as UTF-8 bytes in other buffers (a result set's fields), rewritten where they lie.
   * handled[i] = 1 where value i now holds exactly the bytes `unprotect` gives for its text; 0
   * where it was left untouched (another spelling, no value of the kind), for `unprotect` to
   * decide (whatever `handled` held before). Bounded work per value, no permutation table: fit to
   * run inline.
   */
  readonly unprotectInPlace?: UnprotectInPlace;
}

/** ValueProtection.unprotectInPlace: rewrites what it can of `fields`, flagging each in `handled`. */
export type UnprotectInPlace = (fields: ByteFields, handled: Uint8Array) => void;

/** What a ValueProtection works with: the engine's parts for one kind and set of options. */
export interface ValueProtectionParts {
  readonly kind: Kind;
  readonly handler: KindHandler;
  readonly options: ResolvedOptions;
  /** The kind's cipher for the scope (fpe only; asked for once). */
  readonly fpeCipher: () => FpeCipher;
  readonly tokeniser: Tokeniser;
  readonly maxValueBytes: number;
}

/** One value costs bounded work: all but fpe of a kind without a one-value path (which may build permutation tables). */
export function isImmediate(method: Method, handler: KindHandler): boolean {
  return method !== 'fpe' || handler.fpeOne !== undefined;
}

function notAString(): ProtectionError {
  return new ProtectionError('not_a_string', 'every element of data must be a string', [0]);
}

/** The error protect throws for an element `fpe` could not transform (see throwOnFailures). */
export function fpeFailureError(failure: ElementFailure, kind: Kind): ProtectionError {
  if (failure.failure === 'invalid_value') return new ProtectionError('invalid_value', `values are not of kind ${kind}`, [0]);
  return new ProtectionError('domain_too_small', 'values too short to encrypt format-preserving (fewer than 100 possible values); use tokenise', [0]);
}

class OneValueProtection implements ValueProtection {
  readonly kind: Kind;
  readonly method: Method;
  readonly immediate: boolean;
  private readonly handler: KindHandler;
  private readonly options: ResolvedOptions;
  private readonly tokeniser: Tokeniser;
  private readonly maxValueBytes: number;
  private readonly maxTokenBytes: number;
  private readonly cipher: FpeCipher | undefined;
  /** tokenise: the keys and tweak prefix of this (kind, scope, noise), once the first value asks. */
  private heldTokenising: HeldTokenising | undefined;
  readonly unprotectInPlace?: UnprotectInPlace;

  constructor(parts: ValueProtectionParts) {
    this.kind = parts.kind;
    this.method = parts.options.method;
    this.immediate = isImmediate(this.method, parts.handler);
    this.handler = parts.handler;
    this.options = parts.options;
    this.tokeniser = parts.tokeniser;
    this.maxValueBytes = parts.maxValueBytes;
    this.maxTokenBytes = maxTokenBytes(parts.maxValueBytes);
    this.cipher = this.method === 'fpe' ? parts.fpeCipher() : undefined;
    const { cipher, handler } = this;
    // Spellings the kinds rewrite in place are a few dozen bytes: never past maxTokenBytes.
    if (cipher !== undefined && handler.fpeInPlace !== undefined) {
      const inPlace = handler.fpeInPlace.bind(handler);
      this.unprotectInPlace = (fields, handled) => {
        requireFieldsInBounds(fields, handled);
        inPlace(fields, 'decrypt', cipher, handled);
      };
    }
  }

  protect(value: string): string {
    if (typeof value !== 'string') throw notAString();
    const { handler, options } = this;
    switch (options.method) {
      case 'passthrough':
        return value;
      case 'mask':
        this.requireValid(value);
        return handler.mask(value, options.lang);
      case 'redact':
        this.requireValid(value);
        return handler.redact(value, options.lang);
      case 'fpe': {
        this.requireShortEnough(value);
        const out = fpeOneValue(handler, value, 'encrypt', this.cipher as FpeCipher, options.lang);
        if (isElementFailure(out)) throw fpeFailureError(out, this.kind);
        return out;
      }
      case 'tokenise':
        this.requireShortEnough(value);
        this.requireValid(value);
        this.heldTokenising ??= this.tokeniser.holdTokenising(this.kind, options.scope, options.noise);
        return this.tokeniser.protectOne(this.heldTokenising, value, options.lang);
    }
  }

  unprotect(value: string): string | UnprotectDiscrepancy {
    if (typeof value !== 'string') throw notAString();
    const { options } = this;
    switch (options.method) {
      case 'mask':
      case 'redact':
        throw new ProtectionError('not_reversible', `${options.method} is one-way: there is nothing to unprotect`);
      case 'passthrough':
        return value;
      case 'fpe': {
        // Longer than any token of a value within bounds: no token of ours, and dear to try.
        if (isLongerThan(value, this.maxTokenBytes)) return INVALID_TOKEN;
        const out = fpeOneValue(this.handler, value, 'decrypt', this.cipher as FpeCipher, options.lang);
        return isElementFailure(out) ? INVALID_TOKEN : out;
      }
      case 'tokenise': {
        if (isLongerThan(value, this.maxTokenBytes)) return INVALID_TOKEN;
        const plaintext = this.tokeniser.unprotectOne(this.kind, value, options.scope);
        if (typeof plaintext === 'string') return plaintext;
        return plaintext === OTHER_SCOPE ? INVALID_SCOPE : INVALID_TOKEN;
      }
    }
  }

  private requireValid(value: string): void {
    if (!this.handler.isValid(value, this.options.lang)) {
      throw new ProtectionError('invalid_value', `values are not of kind ${this.kind}`, [0]);
    }
  }

  private requireShortEnough(value: string): void {
    if (isLongerThan(value, this.maxValueBytes)) {
      throw new ProtectionError('value_too_long', `values longer than ${this.maxValueBytes} bytes`, [0]);
    }
  }
}

/** Every field lies inside its buffer, and there is a handled flag for each: else a RangeError, nothing written. */
function requireFieldsInBounds(fields: ByteFields, handled: Uint8Array): void {
  const { count, buffers, starts, lengths } = fields;
  if (buffers.length < count || starts.length < count || lengths.length < count || handled.length < count) {
    throw new RangeError('unprotectInPlace: fewer buffers, offsets, lengths or flags than fields');
  }
  for (let i = 0; i < count; i++) {
    const start = starts[i] as number;
    const length = lengths[i] as number;
    if (start < 0 || length < 0 || start + length > (buffers[i] as Uint8Array).length) {
      throw new RangeError('unprotectInPlace: a field lies outside its buffer');
    }
  }
}

export function createValueProtection(parts: ValueProtectionParts): ValueProtection {
  return new OneValueProtection(parts);
}
