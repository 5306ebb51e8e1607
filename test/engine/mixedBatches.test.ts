import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.js';

/**
 * A batch gives each value what the value gives alone, whatever else is in the batch: values of
 * many lengths (token bodies from a few bytes to past the native byte path's 128) in one call,
 * so outputs of many sizes share the engine's reused and pooled memory.
 */
describe('mixed batches', () => {
  it('tokenise text: one batch equals one value at a time, and reads back', async () => {
    const engine = createEngine({ masterKey: Buffer.alloc(32, 7) });
    const options = { method: 'tokenise' as const, scope: 'mixed' };
    const lengths = [1, 2, 5, 11, 12, 13, 14, 30, 59, 60, 61, 100, 126, 127, 128, 129, 130, 200];
    const values = Array.from({ length: 400 }, (_, j) => `v${j}-`.padEnd(lengths[j % lengths.length] as number, String.fromCharCode(97 + (j % 26))));
    const batch = (await engine.protect('text', values, options)).result;
    for (let j = 0; j < values.length; j += 7) {
      expect(batch[j]).toBe((await engine.protect('text', [values[j] as string], options)).result[0]);
    }
    expect((await engine.unprotect('text', batch, options)).result).toEqual(values);
  });
});
