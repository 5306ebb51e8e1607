import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { offHeapUint16Array, offHeapUint8Array } from '../../../src/engine/crypto/offHeapSlab.js';
import { FF1_IMPLEMENTATIONS } from './nativeAddon.js';

describe('off-heap slab', () => {
  it('never hands out two arrays over the same memory, across many slabs', () => {
    // Sizes that do not divide the slab, so a slab fills up part way through an array.
    // Both kinds carve the same slab: odd byte lengths between 16-bit arrays too.
    const arrays = Array.from({ length: 600 }, (_, k) => (k % 3 === 0 ? offHeapUint8Array(1 + (k % 251)) : offHeapUint16Array(1 + (k % 128))).fill((k % 250) + 1));
    arrays.forEach((array, k) => expect(array.every((x: number) => x === (k % 250) + 1)).toBe(true));
    for (const array of arrays) expect(array.buffer.byteLength).toBeGreaterThanOrEqual(array.byteOffset + array.byteLength);
  });

  it('gives zeroed arrays of the asked length', () => {
    for (const length of [0, 1, 7, 64, 128, 129, 1000]) {
      for (const array of [offHeapUint16Array(length), offHeapUint8Array(2 * length)]) {
        expect(array.length).toBe(array instanceof Uint8Array ? 2 * length : length);
        expect(array.every((x: number) => x === 0)).toBe(true);
      }
    }
  });
});

describe.each(FF1_IMPLEMENTATIONS)('FF1 (%s) over batches whose outputs span several slabs', (_name, addon) => {
  it('gives every value of a batch of many one-value groups what it gives the value alone', () => {
    const key = randomBytes(32);
    const ff1 = new FF1(key, 256, addon());
    // A distinct tweak length per value: each is a group of one, each output its own slab carving
    // of its own size; 300 outputs of up to 256 bytes fill several slabs.
    const values = Array.from({ length: 300 }, (_, j) => Uint16Array.from(randomBytes(3 + ((j * 37) % 126))));
    const tweaks = values.map((_, j) => randomBytes(j));
    const batch = ff1.encrypt(values, tweaks);
    values.forEach((x, j) => expect(Array.from(batch[j] as Uint16Array)).toEqual(Array.from(ff1.encrypt([x], tweaks[j] as Uint8Array)[0] as Uint16Array)));
    const back = ff1.decrypt(batch, tweaks);
    values.forEach((x, j) => expect(Array.from(back[j] as Uint16Array)).toEqual(Array.from(x)));
  });
});
