import { createCipheriv } from 'node:crypto';

export const AES_BLOCK_BYTES = 16;

type EcbCipher = ReturnType<typeof createCipheriv>;

/**
 * AES (node:crypto, so AES-NI and constant time) applied to independent 16-byte blocks. ECB keeps
 * no state between blocks or calls, so one long-lived cipher serves every call: FF1 encrypts all
 * the blocks of a Feistel round of a whole batch in one `update`. The key size (16, 24 or 32
 * bytes) picks AES-128, -192 or -256. The key is not kept by this object.
 */
export class AesEcb {
  private readonly cipher: EcbCipher;

  constructor(key: Uint8Array) {
    const bits = key.length * 8;
    if (bits !== 128 && bits !== 192 && bits !== 256) {
      throw new RangeError(`an AES key is 16, 24 or 32 bytes; got ${key.length}`);
    }
    this.cipher = createCipheriv(`aes-${bits}-ecb`, key, null);
    this.cipher.setAutoPadding(false);
  }

  /** Encrypts every 16-byte block of `blocks` (whose length must be a multiple of 16). */
  encryptBlocks(blocks: Uint8Array): Buffer {
    if (blocks.length % AES_BLOCK_BYTES !== 0) {
      throw new RangeError('AES-ECB input must be whole 16-byte blocks');
    }
    return this.cipher.update(blocks);
  }

  toJSON(): string {
    return '[AesEcb]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'AesEcb {}';
  }
}
