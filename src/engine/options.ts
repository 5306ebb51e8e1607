import { ProtectionError } from './errors.js';
import {
  DEFAULT_LANG, DEFAULT_METHOD, DEFAULT_SCOPE, LANG_KINDS, LANGS, METHODS,
  isLang, isMethod, type Kind, type ProtectOptions, type ResolvedOptions,
} from './types.js';

/** Largest noise accepted; the nonce length saturates well below it (see tokenFormat.ts). */
export const MAX_NOISE = 1_000_000;
export const MAX_SCOPE_BYTES = 256;

/** Parses noise given as an integer or as a numeric string ("2"). */
export function parseNoise(raw: unknown): number {
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(raw)) value = Number(raw);
  else throw new ProtectionError('invalid_noise', 'noise must be a non-negative integer (or a string of one)');
  if (!Number.isInteger(value) || value < 0 || value > MAX_NOISE) {
    throw new ProtectionError('invalid_noise', `noise must be an integer from 0 to ${MAX_NOISE}`);
  }
  return value;
}

/** Validates options and applies the seed's defaults (tokenise, no-scope, 0, en). */
export function resolveOptions(kind: Kind, options: ProtectOptions | undefined): ResolvedOptions {
  const opts = options ?? {};
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw new ProtectionError('invalid_data', 'options must be an object');
  }
  const method = opts.method ?? DEFAULT_METHOD;
  if (!isMethod(method)) {
    throw new ProtectionError('unknown_method', `unknown method; valid methods: ${METHODS.join(', ')}`);
  }
  const scope = opts.scope ?? DEFAULT_SCOPE;
  if (typeof scope !== 'string' || scope.length === 0 || (scope.length * 3 > MAX_SCOPE_BYTES && Buffer.byteLength(scope) > MAX_SCOPE_BYTES)) {
    throw new ProtectionError('invalid_scope', `scope must be a non-empty string of at most ${MAX_SCOPE_BYTES} bytes`);
  }
  const noise = opts.noise === undefined ? 0 : parseNoise(opts.noise);
  if (noise !== 0 && method !== 'tokenise') {
    throw new ProtectionError('noise_not_supported', `noise applies to tokenise only; ${method} is deterministic`);
  }
  let lang: ResolvedOptions['lang'] = DEFAULT_LANG;
  if (opts.lang !== undefined) {
    if (!LANG_KINDS.has(kind)) {
      throw new ProtectionError('lang_not_supported', `lang applies only to ${[...LANG_KINDS].join(', ')}; ${kind} has none`);
    }
    if (!isLang(opts.lang)) {
      throw new ProtectionError('unknown_lang', `unknown lang; valid langs: ${LANGS.join(' ')}`);
    }
    lang = opts.lang;
  }
  return { method, scope, noise, lang };
}
