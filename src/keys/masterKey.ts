import { randomBytes } from 'node:crypto';

export const MASTER_KEY_BYTES = 32;

export class KeyError extends Error {
  override readonly name = 'KeyError';
}

/**
 * Accepts a master key as 32 raw bytes or as their base64 (standard or url-safe) text.
 * The error never includes the key material.
 */
export function parseMasterKey(key: Buffer | Uint8Array | string): Buffer {
  let bytes: Buffer;
  if (typeof key === 'string') {
    const text = key.trim();
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
      throw new KeyError('master key must be 32 bytes, given as a Buffer or as base64 text');
    }
    bytes = Buffer.from(text, 'base64');
  } else if (key instanceof Uint8Array) {
    bytes = Buffer.from(key);
  } else {
    throw new KeyError('master key must be 32 bytes, given as a Buffer or as base64 text');
  }
  if (bytes.length !== MASTER_KEY_BYTES) {
    throw new KeyError(`master key must be ${MASTER_KEY_BYTES} bytes; got ${bytes.length}`);
  }
  return bytes;
}

/** A fresh random master key, base64. */
export function generateMasterKey(): string {
  return randomBytes(MASTER_KEY_BYTES).toString('base64');
}
