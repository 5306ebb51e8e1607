/**
 * Ciphers for the structured-kind tests (date, ipv4, uuid, email).
 * - structuredTestCipher: the real FF1 cipher under a fixed test key.
 * - shiftCipher: x → x + 1 mod N, to test a kind's ranking (the output is the next value).
 * - recordingCipher: wraps another cipher and records every call.
 */
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import { MIN_DOMAIN, type FpeCipher, type Tweak, type Tweaks } from '../../../src/engine/crypto/fpeCipher.js';

function tweakAt(tweaks: Tweaks, index: number): Tweak {
  if (tweaks instanceof Uint8Array) return tweaks;
  const t = tweaks[index];
  if (!t) throw new Error('missing tweak');
  return t;
}

function integerMap(fn: (x: bigint, domain: bigint, tweak: Tweak) => bigint) {
  return (domain: bigint, values: readonly bigint[], tweaks: Tweaks): (bigint | null)[] =>
    values.map((x, i) => {
      if (domain < BigInt(MIN_DOMAIN)) return null;
      if (x < 0n || x >= domain) throw new RangeError('value outside its domain');
      return fn(x, domain, tweakAt(tweaks, i));
    });
}

function numeralsUnsupported(): never {
  throw new Error('numeral strings are not used by the structured kinds');
}

export function shiftCipher(): FpeCipher {
  return {
    encryptNumerals: numeralsUnsupported,
    decryptNumerals: numeralsUnsupported,
    encryptInteger: integerMap((x, n) => (x + 1n) % n),
    decryptInteger: integerMap((y, n) => (y + n - 1n) % n),
  };
}

export { recordingCipher, type CipherCall } from '../../support/recordingCipher.js';

/** The real cipher under a fixed test key (never a production key). */
export function structuredTestCipher(): FpeCipher {
  return createFpeCipher(Buffer.alloc(32, 0x5c));
}

/** A cipher that declares every domain too small, to test DOMAIN_TOO_SMALL reporting. */
export function tooSmallCipher(): FpeCipher {
  const none = (_domain: bigint, values: readonly bigint[]): (bigint | null)[] => values.map(() => null);
  return {
    encryptNumerals: numeralsUnsupported,
    decryptNumerals: numeralsUnsupported,
    encryptInteger: none,
    decryptInteger: none,
  };
}
