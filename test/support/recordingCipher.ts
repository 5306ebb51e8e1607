import type { FpeCipher, Tweaks } from '../../src/engine/crypto/fpeCipher.js';

export interface CipherCall {
  readonly direction: 'encrypt' | 'decrypt';
  readonly domain: bigint;
  readonly count: number;
  readonly tweaks: Tweaks;
}

/** Wraps a cipher and records its integer-domain calls, to check that kinds batch. */
export function recordingCipher(inner: FpeCipher): { cipher: FpeCipher; calls: CipherCall[] } {
  const calls: CipherCall[] = [];
  return {
    calls,
    cipher: {
      encryptNumerals: inner.encryptNumerals.bind(inner),
      decryptNumerals: inner.decryptNumerals.bind(inner),
      encryptInteger(domain, values, tweaks) {
        calls.push({ direction: 'encrypt', domain, count: values.length, tweaks });
        return inner.encryptInteger(domain, values, tweaks);
      },
      decryptInteger(domain, values, tweaks) {
        calls.push({ direction: 'decrypt', domain, count: values.length, tweaks });
        return inner.decryptInteger(domain, values, tweaks);
      },
    },
  };
}
