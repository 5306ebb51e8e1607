import { Keyring } from '../keys/keyring.js';
import { createFpeCipher } from './crypto/createFpeCipher.js';
import type { FpeCipher } from './crypto/fpeCipher.js';
import type { Engine, EngineConfig } from './engineTypes.js';
import { ProtectionError, isElementFailure, type ElementFailure } from './errors.js';
import type { KindHandler } from './kinds/kind.js';
import { KIND_HANDLERS } from './kinds/registry.js';
import { Tokeniser } from './methods/tokenise.js';
import { resolveOptions } from './options.js';
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

function requireValid(handler: KindHandler, values: readonly string[], opts: ResolvedOptions): void {
  const invalid: number[] = [];
  values.forEach((v, i) => { if (!handler.isValid(v, opts.lang)) invalid.push(i); });
  if (invalid.length) throw new ProtectionError('invalid_value', `values are not of kind ${handler.kind}`, invalid);
}

/** Echoes what the seed echoes: method always, scope and noise when the caller supplied them. */
function protectResponse(result: string[], opts: ResolvedOptions, given: ProtectOptions | undefined): ProtectionResponse {
  const response: ProtectionResponse = { operation: 'protect', result, method: opts.method };
  if (given?.scope !== undefined) response.scope = opts.scope;
  if (given?.noise !== undefined) response.noise = String(opts.noise);
  return response;
}

class ProtectionEngine implements Engine {
  private readonly keyring: Keyring;
  private readonly tokeniser: Tokeniser;
  private readonly fpeCiphers = new Map<string, FpeCipher>();

  constructor(config: EngineConfig) {
    const version = config.keyVersion ?? 1;
    this.keyring = new Keyring([{ version, key: config.masterKey }, ...(config.previousKeys ?? [])], version);
    this.tokeniser = new Tokeniser(this.keyring);
  }

  private fpeCipher(kind: Kind, scope: string): FpeCipher {
    const id = `${kind}\u0000${scope}`;
    let cipher = this.fpeCiphers.get(id);
    if (!cipher) {
      if (this.fpeCiphers.size >= 1024) this.fpeCiphers.clear();
      cipher = createFpeCipher(this.keyring.subkey('fpe', kind, scope));
      this.fpeCiphers.set(id, cipher);
    }
    return cipher;
  }

  async protect(kindName: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> {
    const kind = requireKind(kindName);
    const opts = resolveOptions(kind, options);
    const values = requireStrings(data);
    const handler = KIND_HANDLERS[kind];
    let result: string[];
    switch (opts.method) {
      case 'passthrough':
        result = [...values];
        break;
      case 'mask':
        requireValid(handler, values, opts);
        result = values.map((v) => handler.mask(v, opts.lang));
        break;
      case 'redact':
        requireValid(handler, values, opts);
        result = values.map((v) => handler.redact(v, opts.lang));
        break;
      case 'fpe':
        result = throwOnFailures(handler.fpe(values, 'encrypt', this.fpeCipher(kind, opts.scope), opts.lang), kind);
        break;
      case 'tokenise':
        requireValid(handler, values, opts);
        result = this.tokeniser.protect(kind, values, opts.scope, opts.noise, opts.lang);
        break;
    }
    return protectResponse(result, opts, options);
  }

  async unprotect(kindName: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> {
    const kind = requireKind(kindName);
    const opts = resolveOptions(kind, options);
    const values = requireStrings(data);
    const response: ProtectionResponse = { operation: 'unprotect', result: [] };
    switch (opts.method) {
      case 'mask':
      case 'redact':
        throw new ProtectionError('not_reversible', `${opts.method} is one-way: there is nothing to unprotect`);
      case 'passthrough':
        response.result = [...values];
        return response;
      case 'fpe': {
        const outputs = KIND_HANDLERS[kind].fpe(values, 'decrypt', this.fpeCipher(kind, opts.scope), opts.lang);
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
        const outcome = this.tokeniser.unprotect(kind, values, opts.scope);
        response.result = outcome.result;
        if (outcome.invalidToken.length || outcome.invalidScope.length) {
          response.discrepancy = {};
          if (outcome.invalidToken.length) response.discrepancy.invalid_token = outcome.invalidToken;
          if (outcome.invalidScope.length) response.discrepancy.invalid_scope = outcome.invalidScope;
        }
        return response;
      }
    }
  }
}

/** Creates the protection engine. The same master key gives the same tokens everywhere. */
export function createEngine(config: EngineConfig): Engine {
  return new ProtectionEngine(config);
}
