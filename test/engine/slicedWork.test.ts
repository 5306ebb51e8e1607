import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { PermutationTableCache, TableBuildDeferred, withTableBuildAllowance } from '../../src/engine/crypto/smallDomain.js';
import { createEngine } from '../../src/engine/engine.js';
import { ProtectionError } from '../../src/engine/errors.js';
import { indexesInSlices, mapInSlices } from '../../src/engine/slicedBatch.js';
import { inSlices } from '../../src/engine/slicedWork.js';

/**
 * The longest pause these tests accept. pgveil aims at 100 ms; the suite runs files in parallel
 * on few cores, so the bound here is looser (without slicing the pauses last seconds).
 */
const PAUSE_LIMIT_MS = Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250);

/** Longest pause of the event loop while `work` runs, sampled by a 1 ms interval. */
async function longestPause<T>(work: () => Promise<T>): Promise<{ result: T; pauseMs: number }> {
  let last = performance.now();
  let pauseMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    pauseMs = Math.max(pauseMs, now - last);
    last = now;
  }, 1);
  try {
    const result = await work();
    return { result, pauseMs: Math.max(pauseMs, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

/** Four-letter TLDs, each its own small format-preserving domain (a permutation table each). */
function uniqueTldEmails(count: number, salt: number): string[] {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: count }, (_, i) => {
    let n = i + salt * count;
    let tld = '';
    for (let k = 0; k < 4; k++) { tld += letters[n % 26]; n = Math.floor(n / 26); }
    return `ab@cd.${tld}`;
  });
}

describe('inSlices', () => {
  it('visits every index once, in order, whatever the values', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.string({ maxLength: 300 }), { maxLength: 600 }), async (values) => {
      const seen: number[] = [];
      await inSlices(values, (start, end) => { for (let i = start; i < end; i++) seen.push(i); });
      expect(seen).toEqual(values.map((_, i) => i));
    }), { numRuns: 50 });
  });

  it('runs a slice again after a turn when it needs a second table, and keeps what it built', async () => {
    const cache = new PermutationTableCache();
    const key = randomBytes(32);
    const attempts: number[] = [];
    const values = ['a', 'b', 'c'];
    await inSlices(values, (start, end) => {
      attempts.push(end - start);
      for (let i = start; i < end; i++) cache.get(key, 1000, Buffer.from(values[i] as string));
    });
    // One slice of three first: it builds 'a', defers at 'b'; then one value per slice.
    expect(attempts[0]).toBe(3);
    expect(cache.stats.tables).toBe(3);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
  });

  it('allows one build per allowance and throws the deferral for the next', () => {
    const cache = new PermutationTableCache();
    const key = randomBytes(32);
    expect(() => withTableBuildAllowance(1, () => {
      cache.get(key, 500, Buffer.from('x'));
      cache.get(key, 500, Buffer.from('x')); // cached: no build
      cache.get(key, 500, Buffer.from('y'));
    })).toThrow(TableBuildDeferred);
    expect(cache.stats.tables).toBe(1);
  });

  it('finishes a one-value batch at once, and gives each of its table builds a turn of its own', async () => {
    expect(inSlices(['a'], () => undefined)).toBeUndefined();
    const cache = new PermutationTableCache();
    const key = randomBytes(32);
    // Counts turns of the event loop: an immediate that queues itself again runs once per turn.
    let turns = 0;
    let ticking = true;
    const tick = (): void => { turns++; if (ticking) setImmediate(tick); };
    setImmediate(tick);
    const buildsAtTurn: number[] = [];
    try {
      await inSlices(['one value needing three tables'], () => {
        for (const tweak of ['a', 'b', 'c']) {
          const before = cache.stats.tables;
          cache.get(key, 1000, Buffer.from(tweak));
          if (cache.stats.tables > before) buildsAtTurn.push(turns);
        }
      });
    } finally {
      ticking = false;
    }
    expect(buildsAtTurn).toHaveLength(3);
    expect(new Set(buildsAtTurn).size).toBe(3);
  });

  it('passes other errors through', async () => {
    await expect(inSlices(['a', 'b'], () => { throw new Error('boom'); })).rejects.toThrow('boom');
  });
});

describe('passes over a batch in slices', () => {
  it('find the indexes and map the values as one pass over the whole batch would', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.string({ maxLength: 3000 }), { maxLength: 400 }), async (values) => {
      const test = (v: string): boolean => v.length % 3 === 0;
      expect(await indexesInSlices(values, test)).toEqual(values.flatMap((v, i) => (test(v) ? [i] : [])));
      expect(await mapInSlices(values, (part) => part.map((v) => v.length))).toEqual(values.map((v) => v.length));
    }), { numRuns: 30 });
  });

  it('check, mask and redact a batch of long values with the loop turning, as value by value', async () => {
    const engine = createEngine({ masterKey: randomBytes(32) });
    const values = Array.from({ length: 600 }, (_, i) => `${'Grace Brewster Murray Hopper, '.repeat(136)}${i}`);
    for (const method of ['mask', 'redact']) {
      const { result, pauseMs } = await longestPause(() => engine.protect('text', values, { method }));
      expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
      for (const i of [0, 299, 599]) expect(result.result[i]).toBe((await engine.protect('text', [values[i] as string], { method })).result[0]);
    }
    const invalid = values.map((v, i) => (i % 100 === 0 ? `${v}\u0000` : v));
    const error = await engine.protect('name', invalid, { method: 'mask' }).catch((e: unknown) => e);
    expect((error as ProtectionError).indexes).toEqual([0, 100, 200, 300, 400, 500]);
  });
});

describe('engine bounds and slices', () => {
  const engine = createEngine({ masterKey: randomBytes(32), maxValueBytes: 1000 });

  beforeAll(async () => {
    // The first call builds the script tables once per process: not what these tests measure.
    await engine.protect('email', ['warm@example.com'], { method: 'fpe' });
    await engine.protect('name', ['Warm Up'], { method: 'tokenise' });
  });

  it('refuses to protect a value longer than maxValueBytes, naming its index', async () => {
    const error = await engine.protect('name', ['Ada Lovelace', 'x'.repeat(1001), 'é'.repeat(501)], { method: 'tokenise' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtectionError);
    expect((error as ProtectionError).code).toBe('value_too_long');
    expect((error as ProtectionError).indexes).toEqual([1, 2]);
    expect((error as ProtectionError).message).not.toContain('xxx');
  });

  it('round-trips values at the bound for every free-text kind and method', async () => {
    for (const kind of ['name', 'address', 'text', 'city']) {
      for (const method of ['tokenise', 'fpe']) {
        const value = 'Zoë '.repeat(200).slice(0, 990);
        const protectedValue = (await engine.protect(kind, [value], { method, scope: 's' })).result;
        const back = await engine.unprotect(kind, protectedValue, { method, scope: 's' });
        expect(back.result, `${kind}/${method}`).toEqual([value]);
        expect(back.discrepancy, `${kind}/${method}`).toBeUndefined();
      }
    }
  });

  it('gives input too long to be a token back unchanged as an invalid token, without working on it', async () => {
    const token = (await engine.protect('name', ['Ada Lovelace'], { method: 'tokenise', scope: 's' })).result[0] as string;
    const huge = 'x'.repeat(3 * 1024 * 1024);
    const { result, pauseMs } = await longestPause(() => engine.unprotect('name', [huge, token], { method: 'tokenise', scope: 's' }));
    expect(result.result).toEqual([huge, 'Ada Lovelace']);
    expect(result.discrepancy).toEqual({ invalid_token: [0] });
    expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('keeps the event loop turning while it builds a table per value (emails with unique TLDs)', async () => {
    const emails = uniqueTldEmails(40, 1);
    const { result, pauseMs } = await longestPause(() => engine.protect('email', emails, { method: 'fpe', scope: 'flood' }));
    expect(result.result).toHaveLength(40);
    const back = await engine.unprotect('email', result.result, { method: 'fpe', scope: 'flood' });
    expect(back.result).toEqual(emails);
    expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('keeps the event loop turning through a large batch of long values', async () => {
    const values = Array.from({ length: 400 }, (_, i) => `${'Grace Hopper '.repeat(75)}${i}`);
    const { result, pauseMs } = await longestPause(() => engine.protect('name', values, { method: 'fpe', scope: 's' }));
    expect(result.result).toHaveLength(400);
    expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
  });
});

describe('inSlices with a cache too small for one value\'s tables', () => {
  it('still finishes: after repeated deferrals the slice runs without a table limit', async () => {
    const cache = new PermutationTableCache(2000); // holds one table of 1000 (2000 entries)
    const key = randomBytes(32);
    let attempts = 0;
    await inSlices(['one value needing three tables'], () => {
      attempts++;
      for (const tweak of ['a', 'b', 'c']) cache.get(key, 1000, Buffer.from(tweak));
    });
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThan(40);
  });
});
