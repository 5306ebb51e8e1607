import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';

/**
 * The optional native crypto addon (native/crypto: FF1's rounds over OpenSSL's AES, and SHA-256 /
 * HMAC-SHA-256 over OpenSSL's digests), loaded once. Each part is then chosen by its own module
 * (nativeFf1.ts, nativeSha256.ts) after its own known-answer check, so a part this build lacks or
 * gets wrong stays in TypeScript while the other is used.
 */

/** Why the addon is or is not in use, for tests and diagnostics. */
export type NativeStatus = 'loaded' | 'disabled' | 'not built' | 'missing from this build' | 'failed its known-answer check';

/** Where `npm run build:native` puts the addon (tests load it in child processes too). */
export const ADDON_PATH = fileURLToPath(new URL('../../../native/crypto/build/Release/pgveil_crypto.node', import.meta.url));

function load(): { exports: Readonly<Record<string, unknown>> | undefined; status: NativeStatus } {
  // PGVEIL_NATIVE=0: TypeScript only, e.g. to compare the two or on a machine without a compiler.
  if (process.env.PGVEIL_NATIVE === '0') return { exports: undefined, status: 'disabled' };
  try {
    return { exports: createRequire(import.meta.url)(ADDON_PATH) as Record<string, unknown>, status: 'loaded' };
  } catch {
    return { exports: undefined, status: 'not built' };
  }
}

export const nativeAddon = load();

const log = debuglog('pgveil');

/**
 * One part of the addon (`what`: FF1, the token digests), chosen: the exports as `T` when the
 * build has every function in `names` and they pass `passesKnownAnswer`, else undefined and why.
 * A part left to TypeScript says so in one line under NODE_DEBUG=pgveil, nothing else.
 */
export function nativePart<T>(what: string, names: readonly string[], passesKnownAnswer: (part: T) => boolean): { part: T | undefined; status: NativeStatus } {
  const exports = nativeAddon.exports;
  if (exports === undefined) {
    log(nativeAddon.status === 'disabled'
      ? `native ${what} off (PGVEIL_NATIVE=0): it runs in TypeScript`
      : `native crypto addon not built (npm ci builds it where a C compiler is present): ${what} runs in TypeScript`);
    return { part: undefined, status: nativeAddon.status };
  }
  if (!names.every((name) => typeof exports[name] === 'function')) {
    log(`native ${what} missing from this build: it runs in TypeScript`);
    return { part: undefined, status: 'missing from this build' };
  }
  const part = exports as unknown as T;
  if (!passesKnownAnswer(part)) {
    log(`native ${what} gives a wrong answer for its known-answer samples: it runs in TypeScript`);
    return { part: undefined, status: 'failed its known-answer check' };
  }
  return { part, status: 'loaded' };
}
