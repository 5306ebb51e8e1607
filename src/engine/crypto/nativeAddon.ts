import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The optional native crypto addon (native/crypto: FF1's rounds over OpenSSL's AES, and SHA-256 /
 * HMAC-SHA-256 over OpenSSL's digests), loaded once. Each part is then chosen by its own module
 * (nativeFf1.ts, nativeSha256.ts) after its own known-answer check, so a part this build lacks or
 * gets wrong stays in TypeScript while the other is used.
 */

/** Why the addon is or is not in use, for tests and diagnostics. */
export type NativeStatus = 'loaded' | 'disabled' | 'not built' | 'missing from this build' | 'failed its known-answer check';

const ADDON_PATH = fileURLToPath(new URL('../../../native/crypto/build/Release/pgveil_crypto.node', import.meta.url));

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
