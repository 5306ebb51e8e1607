import { Keyring } from '../keys/index.js';
import { createFpeCipher } from './crypto/createFpeCipher.js';
import type { FpeCipher } from './crypto/fpeCipher.js';
import type { EngineConfig, EngineWithValueProtection } from './engineTypes.js';
import { ProtectionError, isElementFailure, type ElementFailure } from './errors.js';
import type { KindHandler } from './kinds/kind.js';
import { KIND_HANDLERS } from './kinds/registry.js';
import { Tokeniser } from './tokens/tokeniser.js';
import { resolveOptions } from './options.js';
import { indexesInSlices, mapInSlices } from './slicedBatch.js';
import { inSlices } from './slicedWork.js';
import { DEFAULT_MAX_VALUE_BYTES, isLongerThan, maxTokenBytes } from './valueLimits.js';
import { createValueProtection, isImmediate, type ValueProtection } from './valueProtection.js';
import { HeldProtections } from './heldProtections.js';
import {
  KINDS, isKind, type Kind, type ProtectionResponse, type ProtectOptions, type ResolvedOptions,
} from './types.js';

function requireKind(kind: string): Kind {
  if (!isKind(kind)) throw new ProtectionError('unknown_kind', `unknown kind; valid kinds: ${KINDS.join(', ')}`);
  return kind;
}

/** Every element must be a string; otherwise the request fails naming them all. */
function requireStrings(data: readonly unknown[]): readonly string[] {
  if (!Array.isArray(data)) throw new ProtectionError('invalid_data', 'data must be an array of strings');
  const bad: number[] = [];
  for (let i = 0; i < data.length; i++) if (typeof data[i] !== 'string') bad.push(i);
  if (bad.length) throw new ProtectionError('not_a_string', 'every element of data must be a string', bad);
  return data as readonly string[];
}

/** Protect is all or nothing: one element it cannot protect fails the request, naming them. */
function throwOnFailures(outputs: readonly (string | ElementFailure)[], kind: Kind): string[] {
  const invalid: number[] = [];
  const tooSmall: number[] = [];
  outputs.forEach((out, i) => {
    if (isElementFailure(out)) (out.failure === 'invalid_value' ? invalid : tooSmall).push(i);
  });
  if (invalid.length) throw new ProtectionError('invalid_value', `values are not of kind ${kind}`, invalid);
  if (tooSmall.length) {
    throw new ProtectionError('domain_too_small', 'values too short to encrypt format-preserving (fewer than 100 possible values); use tokenise', tooSmall);
  }
  return outputs as string[];
}

/** Every value is of the kind, checked in slices (4 KiB of text takes tens of µs); else the request fails naming them all. */
async function requireValid(handler: KindHandler, values: readonly string[], opts: ResolvedOptions): Promise<void> {
  const invalid = await indexesInSlices(values, (v) => !handler.isValid(v, opts.lang));
  if (invalid.length) throw new ProtectionError('invalid_value', `values are not of kind ${handler.kind}`, invalid);
}

/** The indexes of the values longer than `maxBytes` UTF-8 bytes, measured in slices. */
function indexesLongerThan(values: readonly string[], maxBytes: number): number[] | Promise<number[]> {
  return indexesInSlices(values, (v) => isLongerThan(v, maxBytes));
}

/** Echoes what the seed echoes: method always, scope and noise when the caller supplied them. */
function protectResponse(result: string[], opts: ResolvedOptions, given: ProtectOptions | undefined): ProtectionResponse {
  const response: ProtectionResponse = { operation: 'protect', result, method: opts.method };
  if (given?.scope !== undefined) response.scope = opts.scope;
  if (given?.noise !== undefined) response.noise = String(opts.noise);
  return response;
}

class ProtectionEngine implements EngineWithValueProtection {
  private readonly keyring: Keyring;
  private readonly tokeniser: Tokeniser;
  /** By kind, then scope: two lookups, no key string built per call. */
  private readonly fpeCiphers = new Map<Kind, Map<string, FpeCipher>>();
  private readonly maxValueBytes: number;
  /** One-value protections by the caller's options object. */
  private readonly held = new HeldProtections();

  constructor(config: EngineConfig) {
    const version = config.keyVersion ?? 1;
    this.maxValueBytes = config.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
    this.keyring = new Keyring([{ version, key: config.masterKey }, ...(config.previousKeys ?? [])], version);
    this.tokeniser = new Tokeniser(this.keyring);
  }

  private fpeCipher(kind: Kind, scope: string): FpeCipher {
    let byScope = this.fpeCiphers.get(kind);
    if (!byScope) {
      byScope = new Map();
      this.fpeCiphers.set(kind, byScope);
    }
    let cipher = byScope.get(scope);
    if (!cipher) {
      // Scopes come from requests: bound the map rather than grow it without end.
      if (byScope.size >= 1024) byScope.clear();
      cipher = createFpeCipher(this.keyring.subkey('fpe', kind, scope));
      byScope.set(scope, cipher);
    }
    return cipher;
  }

  valueProtection(kindName: string, options?: ProtectOptions): ValueProtection {
    const kind = requireKind(kindName);
    return this.protectionOf(kind, resolveOptions(kind, options));
  }

  private protectionOf(kind: Kind, options: ResolvedOptions): ValueProtection {
    return createValueProtection({
      kind, handler: KIND_HANDLERS[kind], options, fpeCipher: () => this.fpeCipher(kind, options.scope),
      tokeniser: this.tokeniser, maxValueBytes: this.maxValueBytes,
    });
  }

  /**
   * The resolved options, and the held protection when a batch of one takes the single-value path:
   * always but for fpe of a kind without one (whose value may need several permutation tables,
   * which slices spread over turns).
   */
  private route(kind: Kind, options: ProtectOptions | undefined, data: readonly unknown[]): { opts: ResolvedOptions; values: readonly string[]; one?: ValueProtection } {
    const held = this.held.get(kind, options);
    const opts = held?.options ?? resolveOptions(kind, options);
    const values = requireStrings(data);
    if (values.length !== 1 || !isImmediate(opts.method, KIND_HANDLERS[kind])) return { opts, values };
    if (held !== undefined) return { opts, values, one: held.protection };
    const one = this.protectionOf(kind, opts);
    this.held.hold(kind, options, opts, one);
    return { opts, values, one };
  }

  /** Not async: a batch of one is answered with one settled promise, not an async function's. */
  protect(kindName: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> {
    try {
      const kind = requireKind(kindName);
      const { opts, values, one } = this.route(kind, options, data);
      if (one !== undefined) return Promise.resolve(protectResponse([one.protect(values[0] as string)], opts, options));
      return this.protectBatch(kind, opts, values, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async protectBatch(kind: Kind, opts: ResolvedOptions, values: readonly string[], options: ProtectOptions | undefined): Promise<ProtectionResponse> {
    const handler = KIND_HANDLERS[kind];
    if (opts.method === 'passthrough') return protectResponse([...values], opts, options);
    // Masks and redactions are cheap and linear; only the ciphers need the bound.
    const tooLong = opts.method === 'fpe' || opts.method === 'tokenise' ? await indexesLongerThan(values, this.maxValueBytes) : [];
    if (tooLong.length) throw new ProtectionError('value_too_long', `values longer than ${this.maxValueBytes} bytes`, tooLong);
    let result: string[];
    switch (opts.method) {
      case 'mask':
        await requireValid(handler, values, opts);
        result = await mapInSlices(values, (part) => part.map((v) => handler.mask(v, opts.lang)));
        break;
      case 'redact':
        await requireValid(handler, values, opts);
        result = await mapInSlices(values, (part) => part.map((v) => handler.redact(v, opts.lang)));
        break;
      case 'fpe': {
        const cipher = this.fpeCipher(kind, opts.scope);
        result = throwOnFailures(await mapInSlices(values, (part) => handler.fpe(part, 'encrypt', cipher, opts.lang)), kind);
        break;
      }
      case 'tokenise':
        await requireValid(handler, values, opts);
        result = await mapInSlices(values, (part) => this.tokeniser.protect(kind, part, opts.scope, opts.noise, opts.lang));
        break;
    }
    return protectResponse(result, opts, options);
  }

  unprotect(kindName: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> {
    try {
      const kind = requireKind(kindName);
      const { opts, values, one } = this.route(kind, options, data);
      if (one !== undefined) {
        const out = one.unprotect(values[0] as string);
        if (typeof out === 'string') return Promise.resolve({ operation: 'unprotect', result: [out] });
        return Promise.resolve({ operation: 'unprotect', result: [...values], discrepancy: { [out.discrepancy]: [0] } });
      }
      return this.unprotectBatch(kind, opts, values, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async unprotectBatch(kind: Kind, opts: ResolvedOptions, values: readonly string[], options: ProtectOptions | undefined): Promise<ProtectionResponse> {
    if (opts.method === 'fpe' || opts.method === 'tokenise') {
      // Longer than any token of a value within bounds: no token of ours, and dear to try.
      const notTokens = await indexesLongerThan(values, maxTokenBytes(this.maxValueBytes));
      if (notTokens.length) return this.unprotectWithout(kind, values, options, notTokens);
    }
    const response: ProtectionResponse = { operation: 'unprotect', result: [] };
    switch (opts.method) {
      case 'mask':
      case 'redact':
        throw new ProtectionError('not_reversible', `${opts.method} is one-way: there is nothing to unprotect`);
      case 'passthrough':
        response.result = [...values];
        return response;
      case 'fpe': {
        const cipher = this.fpeCipher(kind, opts.scope);
        const outputs = await mapInSlices(values, (part) => KIND_HANDLERS[kind].fpe(part, 'decrypt', cipher, opts.lang));
        const invalid: number[] = [];
        response.result = outputs.map((out, i) => {
          if (!isElementFailure(out)) return out;
          invalid.push(i);
          return values[i] as string;
        });
        if (invalid.length) response.discrepancy = { invalid_token: invalid };
        return response;
      }
      case 'tokenise': {
        const result: string[] = new Array<string>(values.length);
        const invalidToken = new Set<number>();
        const invalidScope = new Set<number>();
        const work = (start: number, end: number): void => {
          const outcome = this.tokeniser.unprotect(kind, start === 0 && end === values.length ? values : values.slice(start, end), opts.scope);
          outcome.result.forEach((value, i) => { result[start + i] = value; });
          for (const i of outcome.invalidToken) invalidToken.add(start + i);
          for (const i of outcome.invalidScope) invalidScope.add(start + i);
        };
        await inSlices(values, work);
        response.result = result;
        if (invalidToken.size || invalidScope.size) {
          response.discrepancy = {};
          if (invalidToken.size) response.discrepancy.invalid_token = [...invalidToken].sort((a, b) => a - b);
          if (invalidScope.size) response.discrepancy.invalid_scope = [...invalidScope].sort((a, b) => a - b);
        }
        return response;
      }
    }
  }

  /** Unprotects all but `skipped`, which come back unchanged as invalid tokens. */
  private async unprotectWithout(kind: Kind, values: readonly string[], options: ProtectOptions | undefined, skipped: readonly number[]): Promise<ProtectionResponse> {
    const skip = new Set(skipped);
    const kept: number[] = [];
    values.forEach((_, i) => { if (!skip.has(i)) kept.push(i); });
    const inner = kept.length ? await this.unprotect(kind, kept.map((i) => values[i] as string), options) : { operation: 'unprotect' as const, result: [] };
    const result = [...values];
    kept.forEach((original, i) => { result[original] = inner.result[i] as string; });
    const invalidToken = new Set(skipped);
    for (const i of inner.discrepancy?.invalid_token ?? []) invalidToken.add(kept[i] as number);
    const response: ProtectionResponse = { operation: 'unprotect', result, discrepancy: { invalid_token: [...invalidToken].sort((a, b) => a - b) } };
    const invalidScope = (inner.discrepancy?.invalid_scope ?? []).map((i) => kept[i] as number);
    if (invalidScope.length && response.discrepancy) response.discrepancy.invalid_scope = invalidScope;
    return response;
  }
}

/** Creates the protection engine. The same master key gives the same tokens everywhere. */
export function createEngine(config: EngineConfig): EngineWithValueProtection {
  return new ProtectionEngine(config);
}
