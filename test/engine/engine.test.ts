import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, KINDS, LANG_KINDS, ProtectionError } from '../../src/index.js';
import { ARBITRARY, REALISTIC } from '../support/samples.js';

const engine = createEngine({ masterKey: Buffer.alloc(32, 3) });

async function errorOf(promise: Promise<unknown>): Promise<ProtectionError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ProtectionError);
  return error as ProtectionError;
}

describe('engine contract', () => {
  it('answers with the seed body: method on protect, scope and noise only when supplied', async () => {
    expect(await engine.protect('ssn', [])).toEqual({ operation: 'protect', result: [], method: 'tokenise' });
    const r = await engine.protect('ssn', ['123-45-6789'], { method: 'fpe', scope: 's1' });
    expect(Object.keys(r).sort()).toEqual(['method', 'operation', 'result', 'scope']);
    expect(r.scope).toBe('s1');
    const n = await engine.protect('ssn', ['123-45-6789'], { noise: 3 });
    expect(n.noise).toBe('3');
    const u = await engine.unprotect('ssn', n.result);
    expect(u).toEqual({ operation: 'unprotect', result: ['123-45-6789'] });
  });

  it('passthrough returns values unchanged both ways', async () => {
    for (const kind of KINDS) {
      const values = [...REALISTIC[kind]];
      expect((await engine.protect(kind, values, { method: 'passthrough' })).result).toEqual(values);
      expect((await engine.unprotect(kind, values, { method: 'passthrough' })).result).toEqual(values);
    }
  });

  it.each(KINDS)('%s: fpe round-trips realistic values, same length and layout', async (kind) => {
    const values = [...REALISTIC[kind]];
    const { result } = await engine.protect(kind, values, { method: 'fpe' });
    result.forEach((out, i) => {
      expect(out).not.toBe(values[i]);
      // ipv4 keeps four octets, not their digit counts (the seed: group lengths may differ).
      if (kind === 'ipv4') expect(out).toMatch(/^(\d{1,3})(\.\d{1,3}){3}$/);
      else expect([...out].length).toBe([...values[i]!].length);
    });
    expect((await engine.unprotect(kind, result, { method: 'fpe' })).result).toEqual(values);
  });

  it.each(KINDS)('%s: fpe round-trips random values (property)', async (kind) => {
    await fc.assert(
      fc.asyncProperty(fc.array(ARBITRARY[kind], { minLength: 1, maxLength: 30 }), async (values) => {
        const { result } = await engine.protect(kind, values, { method: 'fpe', scope: 'prop' });
        expect((await engine.unprotect(kind, result, { method: 'fpe', scope: 'prop' })).result).toEqual(values);
      }),
      { numRuns: 30 },
    );
  });

  it('mask and redact are one-way and kind-aware', async () => {
    expect((await engine.protect('ccn', ['4111 1111 1111 1111'], { method: 'mask' })).result).toEqual(['**** **** **** 1111']);
    expect((await engine.protect('email', ['jane.doe@example.co.uk'], { method: 'mask' })).result).toEqual(['j*******@example.co.uk']);
    expect((await engine.protect('ssn', ['123-45-6789'], { method: 'redact' })).result).toEqual(['***-**-****']);
    const e = await errorOf(engine.unprotect('ccn', ['**** **** **** 1111'], { method: 'mask' }));
    expect(e.code).toBe('not_reversible');
    expect((await errorOf(engine.unprotect('ccn', ['x'], { method: 'redact' }))).code).toBe('not_reversible');
  });

  it('rejects bad requests with a code', async () => {
    expect((await errorOf(engine.protect('passport', ['x']))).code).toBe('unknown_kind');
    expect((await errorOf(engine.protect('ssn', ['x'], { method: 'ff3' }))).code).toBe('unknown_method');
    expect((await errorOf(engine.protect('name', ['x'], { lang: 'xx' }))).code).toBe('unknown_lang');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { lang: 'en' }))).code).toBe('lang_not_supported');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { noise: -1 }))).code).toBe('invalid_noise');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { noise: 1.5 }))).code).toBe('invalid_noise');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { noise: 'two' }))).code).toBe('invalid_noise');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { method: 'fpe', noise: 1 }))).code).toBe('noise_not_supported');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { scope: '' }))).code).toBe('invalid_scope');
    // The bound is 256 UTF-8 bytes, not characters: 86 × '€' is 258 bytes.
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { scope: 'a'.repeat(257) }))).code).toBe('invalid_scope');
    expect((await errorOf(engine.protect('ssn', ['123-45-6789'], { scope: '€'.repeat(86) }))).code).toBe('invalid_scope');
    expect((await engine.protect('ssn', ['123-45-6789'], { scope: '€'.repeat(85) })).result).toHaveLength(1);
    const notStrings = await errorOf(engine.protect('ssn', ['123-45-6789', 5, null, '078-05-1120', {}] as unknown[]));
    expect(notStrings.code).toBe('not_a_string');
    expect(notStrings.indexes).toEqual([1, 2, 4]);
    const invalid = await errorOf(engine.protect('ssn', ['123-45-6789', 'hello'], { method: 'fpe' }));
    expect(invalid).toMatchObject({ code: 'invalid_value', indexes: [1] });
    expect(invalid.message).not.toContain('hello');
  });

  it('accepts lang on the four text kinds only', async () => {
    for (const kind of KINDS) {
      const call = engine.protect(kind, [REALISTIC[kind][0]!], { lang: 'de' });
      if (LANG_KINDS.has(kind)) await expect(call).resolves.toBeDefined();
      else await expect(call).rejects.toMatchObject({ code: 'lang_not_supported' });
    }
  });

  it('refuses fpe for a domain too small to mean anything, and permutes small ones', async () => {
    expect((await errorOf(engine.protect('numeric', ['7'], { method: 'fpe' }))).code).toBe('domain_too_small');
    const small = ['123', '987', '555'];
    const { result } = await engine.protect('numeric', small, { method: 'fpe' });
    result.forEach((r) => expect(r).toMatch(/^[1-9]\d\d$/));
    expect((await engine.unprotect('numeric', result, { method: 'fpe' })).result).toEqual(small);
    const names = ['Li', 'Wu'];
    const enc = await engine.protect('name', names, { method: 'fpe' });
    expect((await engine.unprotect('name', enc.result, { method: 'fpe' })).result).toEqual(names);
  });

  it('fpe unprotect reports values not of the kind as invalid_token and leaves them', async () => {
    const { result } = await engine.protect('ssn', ['123-45-6789'], { method: 'fpe' });
    const back = await engine.unprotect('ssn', [result[0]!, 'hello'], { method: 'fpe' });
    expect(back.result).toEqual(['123-45-6789', 'hello']);
    expect(back.discrepancy).toEqual({ invalid_token: [1] });
  });
});
