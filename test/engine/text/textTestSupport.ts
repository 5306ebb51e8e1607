/**
 * Shared helpers for the text kind tests: the real fpe cipher under a fixed test key, a wrapper
 * that records calls, and per-code-point views of a text.
 */
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import type { FpeCipher } from '../../../src/engine/crypto/fpeCipher.js';
import { isElementFailure, type ElementFailure } from '../../../src/engine/errors.js';
import type { KindHandler } from '../../../src/engine/kinds/kind.js';
import { classIdOf } from '../../../src/engine/scripts/charClassTable.js';
import type { Lang } from '../../../src/engine/types.js';

const TEST_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');

export function textTestCipher(): FpeCipher {
  return createFpeCipher(TEST_KEY);
}

export { recordingCipher as recording, type CipherCall as IntegerCall } from '../../support/recordingCipher.js';

export function codePoints(text: string): number[] {
  return Array.from(text, (ch) => ch.codePointAt(0) as number);
}

export function classIds(text: string): number[] {
  return codePoints(text).map(classIdOf);
}

export function expectString(result: string | ElementFailure | undefined): string {
  if (typeof result !== 'string') {
    throw new Error(`expected a string, got ${isElementFailure(result) ? result.failure : String(result)}`);
  }
  return result;
}

/** fpe encrypt then decrypt of one value; both must succeed. */
export function fpeRoundTrip(kind: KindHandler, value: string, cipher: FpeCipher, lang: Lang = 'en'): { encrypted: string; decrypted: string } {
  const encrypted = expectString(kind.fpe([value], 'encrypt', cipher, lang)[0]);
  const decrypted = expectString(kind.fpe([encrypted], 'decrypt', cipher, lang)[0]);
  return { encrypted, decrypted };
}
