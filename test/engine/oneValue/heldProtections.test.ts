import { describe, expect, it } from 'vitest';
import { createEngine, type ProtectOptions } from '../../../src/engine/index.js';

describe('one-value calls that reuse an options object', () => {
  const engine = createEngine({ masterKey: Buffer.alloc(32, 9) });
  const card = '4111 1111 1111 1111';

  it('follow the object when the caller changes it in place, and check it again', async () => {
    const options: ProtectOptions = { method: 'fpe', scope: 'a' };
    const fpeA = (await engine.protect('ccn', [card], options)).result[0];
    expect((await engine.protect('ccn', [card], options)).result[0]).toBe(fpeA);
    options.scope = 'b';
    const fpeB = (await engine.protect('ccn', [card], options)).result[0];
    expect(fpeB).toBe((await engine.protect('ccn', [card, card], { method: 'fpe', scope: 'b' })).result[0]);
    expect(fpeB).not.toBe(fpeA);
    options.method = 'mask';
    expect((await engine.protect('ccn', [card], options)).result).toEqual(['**** **** **** 1111']);
    options.method = 'shred';
    await expect(engine.protect('ccn', [card], options)).rejects.toMatchObject({ code: 'unknown_method' });
    options.method = 'fpe';
    options.noise = 1;
    await expect(engine.protect('ccn', [card], options)).rejects.toMatchObject({ code: 'noise_not_supported' });
  });

  it('keep kinds apart under one options object', async () => {
    const options: ProtectOptions = { method: 'mask' };
    expect((await engine.protect('ccn', [card], options)).result).toEqual(['**** **** **** 1111']);
    expect((await engine.protect('ssn', ['123-45-6789'], options)).result).toEqual(['***-**-6789']);
    await expect(engine.protect('ssn', [card], options)).rejects.toMatchObject({ code: 'invalid_value', indexes: [0] });
  });
});
