/** FF1's tweak as it enters the PRF: which tweak a batch shares, and the bytes of Q it fills. */
import { AES_BLOCK_BYTES } from './aesEcb.js';
import type { Tweak, Tweaks } from './fpeCipher.js';

/** The one tweak all values share, when they do (same object), else undefined. */
export function sharedTweakOf(tweak: Tweaks): Tweak | undefined {
  if (tweak instanceof Uint8Array) return tweak;
  const first = tweak[0];
  for (let j = 1; j < tweak.length; j++) if (tweak[j] !== first) return undefined;
  return first;
}

/**
 * out[o..o+16) = chain[c..c+16) xor Q[from..from+length), where Q's bytes there are the tweak
 * followed by zero padding; bytes after `length` are copied from the chain unchanged.
 */
export function xorTweakBlock(out: Uint8Array, o: number, chain: Uint8Array, c: number, tweak: Tweak, from: number, length: number): void {
  for (let x = 0; x < AES_BLOCK_BYTES; x++) {
    const q = x < length && from + x < tweak.length ? (tweak[from + x] as number) : 0;
    out[o + x] = (chain[c + x] as number) ^ q;
  }
}
