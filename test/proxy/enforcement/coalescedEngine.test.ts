import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/engine.js';
import type { Engine } from '../../../src/engine/engineTypes.js';
import { ProtectionError } from '../../../src/engine/errors.js';
import type { ProtectOptions } from '../../../src/engine/types.js';
import { coalesceEngineCalls } from '../../../src/proxy/enforcement/writePath/coalescedEngine.js';

/** The real engine, counting the calls that reach it. */
function countingEngine(): { engine: Engine; calls: { operation: string; size: number }[] } {
  const real = createEngine({ masterKey: randomBytes(32) });
  const calls: { operation: string; size: number }[] = [];
  return {
    calls,
    engine: {
      protect: (kind, data, options) => {
        calls.push({ operation: 'protect', size: data.length });
        return real.protect(kind, data, options);
      },
      unprotect: (kind, data, options) => {
        calls.push({ operation: 'unprotect', size: data.length });
        return real.unprotect(kind, data, options);
      },
    },
  };
}

const fpe: ProtectOptions = { method: 'fpe', scope: 'people' };
const tokenise: ProtectOptions = { method: 'tokenise', scope: 'people' };

describe('coalesced engine calls', () => {
  it('merges the calls of one loop turn into one engine call and answers each caller alone', async () => {
    const { engine, calls } = countingEngine();
    const coalesced = coalesceEngineCalls(engine);
    const batches = [['123-45-6789'], ['987654321', '111-22-3333'], ['555 66 7777']];
    const merged = await Promise.all(batches.map((values) => coalesced.protect('ssn', values, fpe)));
    expect(calls).toEqual([{ operation: 'protect', size: 4 }]);
    const alone = await Promise.all(batches.map((values) => engine.protect('ssn', values, fpe)));
    expect(merged).toEqual(alone);
  });

  it('keeps different kinds, options and operations apart', async () => {
    const { engine, calls } = countingEngine();
    const coalesced = coalesceEngineCalls(engine);
    await Promise.all([
      coalesced.protect('ssn', ['123-45-6789'], fpe),
      coalesced.protect('ssn', ['123-45-6789'], { ...fpe }),
      coalesced.protect('numeric', ['12345678'], tokenise),
      coalesced.unprotect('ssn', ['123-45-6789'], fpe),
    ]);
    expect(calls).toHaveLength(4);
  });

  it('refuses only the caller whose value is bad, with that caller’s own indexes', async () => {
    const { engine } = countingEngine();
    const coalesced = coalesceEngineCalls(engine);
    const [good, bad, alsoGood] = await Promise.allSettled([
      coalesced.protect('ssn', ['123-45-6789'], fpe),
      coalesced.protect('ssn', ['987654321', 'not an ssn'], fpe),
      coalesced.protect('ssn', ['111-22-3333'], fpe),
    ]);
    expect(good).toMatchObject({ status: 'fulfilled', value: { result: [expect.stringMatching(/^\d{3}-\d{2}-\d{4}$/)] } });
    expect(alsoGood.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    const error = (bad as PromiseRejectedResult).reason as unknown;
    expect(error).toBeInstanceOf(ProtectionError);
    expect((error as ProtectionError).indexes).toEqual([1]);
  });

  it('gives each caller the discrepancies of its own elements, renumbered', async () => {
    const { engine, calls } = countingEngine();
    const coalesced = coalesceEngineCalls(engine);
    const tokens = (await engine.protect('numeric', ['12345678', '87654321'], tokenise)).result;
    const other = (await engine.protect('numeric', ['12345678'], { method: 'tokenise', scope: 'other' })).result;
    calls.length = 0;
    const [first, second] = await Promise.all([
      coalesced.unprotect('numeric', [tokens[0], 'garbage'], tokenise),
      coalesced.unprotect('numeric', [other[0], tokens[1]], tokenise),
    ]);
    expect(calls).toEqual([{ operation: 'unprotect', size: 4 }]);
    expect(first?.result).toEqual(['12345678', 'garbage']);
    expect(first?.discrepancy).toEqual({ invalid_token: [1] });
    expect(second?.result[1]).toBe('87654321');
    expect(second?.discrepancy).toEqual({ invalid_scope: [0] });
  });

  it('answers a lone caller with the engine’s own response and error', async () => {
    const { engine } = countingEngine();
    const coalesced = coalesceEngineCalls(engine);
    await expect(coalesced.protect('ssn', ['nope'], fpe)).rejects.toBeInstanceOf(ProtectionError);
    const failing: Engine = { protect: () => { throw new Error('sync failure'); }, unprotect: engine.unprotect };
    await expect(coalesceEngineCalls(failing).protect('ssn', ['123-45-6789'], fpe)).rejects.toThrow('sync failure');
  });
});
