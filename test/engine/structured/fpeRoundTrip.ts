/** Shared helpers for the structured-kind tests: run fpe both ways and unwrap the results. */
import type { FpeCipher } from '../../../src/engine/crypto/fpeCipher.js';
import { isElementFailure, type ElementFailure } from '../../../src/engine/errors.js';
import type { KindHandler } from '../../../src/engine/kinds/kind.js';

/** Encrypts values that must all succeed. */
export function encryptAll(kind: KindHandler, values: readonly string[], cipher: FpeCipher): string[] {
  return kind.fpe(values, 'encrypt', cipher, 'en').map((r) => {
    if (isElementFailure(r)) throw new Error(`unexpected ${r.failure}`);
    return r;
  });
}

export function decryptAll(kind: KindHandler, values: readonly string[], cipher: FpeCipher): string[] {
  return kind.fpe(values, 'decrypt', cipher, 'en').map((r) => {
    if (isElementFailure(r)) throw new Error(`unexpected ${r.failure}`);
    return r;
  });
}

/** Encrypts then decrypts; returns both so a test can check the ciphertext too. */
export function roundTrip(kind: KindHandler, values: readonly string[], cipher: FpeCipher): { encrypted: string[]; decrypted: string[] } {
  const encrypted = encryptAll(kind, values, cipher);
  return { encrypted, decrypted: decryptAll(kind, encrypted, cipher) };
}

export function failures(results: readonly (string | ElementFailure)[]): Record<number, string> {
  const out: Record<number, string> = {};
  results.forEach((r, i) => {
    if (isElementFailure(r)) out[i] = r.failure;
  });
  return out;
}
