import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, KINDS } from '../../../src/index.js';
import { ARBITRARY, NOT_OF_KIND, REALISTIC, TOKEN_SHAPE } from '../../support/samples.js';

const masterKey = Buffer.alloc(32, 7);
const engine = createEngine({ masterKey });

describe('tokenise', () => {
  it.each(KINDS)('%s: round-trips realistic values in the kind alphabet', async (kind) => {
    const values = [...REALISTIC[kind]];
    const { result, method } = await engine.protect(kind, values);
    expect(method).toBe('tokenise');
    const shape = TOKEN_SHAPE[kind];
    result.forEach((token, i) => {
      expect(token).not.toBe(values[i]);
      if (shape) expect(token).toMatch(shape);
    });
    const back = await engine.unprotect(kind, result);
    expect(back).toEqual({ operation: 'unprotect', result: values });
  });

  it.each(KINDS)('%s: random values round-trip (property)', async (kind) => {
    await fc.assert(
      fc.asyncProperty(fc.array(ARBITRARY[kind], { minLength: 1, maxLength: 20 }), fc.nat(3), async (values, noise) => {
        const protectedValues = await engine.protect(kind, values, { noise });
        const back = await engine.unprotect(kind, protectedValues.result);
        expect(back.result).toEqual(values);
        expect(back.discrepancy).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });

  it('is deterministic per scope with noise 0, and another scope gives other tokens', async () => {
    const values = ['123-45-6789', '123-45-6789'];
    const a = await engine.protect('ssn', values, { scope: 'billing' });
    const b = await engine.protect('ssn', values, { scope: 'billing' });
    const c = await engine.protect('ssn', values, { scope: 'crm' });
    expect(a.result[0]).toBe(a.result[1]);
    expect(b.result).toEqual(a.result);
    expect(c.result[0]).not.toBe(a.result[0]);
    expect(a.scope).toBe('billing');
  });

  it('the same key gives the same tokens in another engine instance', async () => {
    const other = createEngine({ masterKey: masterKey.toString('base64') });
    const values = ['jane.doe@example.co.uk', 'x9@ab.io'];
    expect((await other.protect('email', values)).result).toEqual((await engine.protect('email', values)).result);
  });

  it('email tokens have a letters-only TLD, and tokens written with a digit in it still read back', async () => {
    const values = Array.from({ length: 300 }, (_, i) => `user${i}.name@host${i % 7}.example.com`);
    const { result } = await engine.protect('email', values);
    const tlds = result.map((token) => token.slice(token.lastIndexOf('.') + 1));
    expect(tlds.every((tld) => /^[a-z]{3,4}$/.test(tld))).toBe(true);
    const fourLetters = result.filter((_, i) => tlds[i]?.length === 4);
    expect(fourLetters.length).toBeGreaterThan(100);
    // The earlier spelling of the same token: the TLD's number in three base-36 characters.
    const base36 = 'abcdefghijklmnopqrstuvwxyz0123456789';
    const earlier = fourLetters.map((token) => {
      const tld = token.slice(token.lastIndexOf('.') + 1);
      let n = [...tld].reduce((acc, c) => acc * 26 + c.charCodeAt(0) - 97, 0);
      let old = '';
      for (let i = 0; i < 3; i++) { old = base36.charAt(n % 36) + old; n = Math.floor(n / 36); }
      expect(old).toMatch(/[0-9]/);
      return `${token.slice(0, token.lastIndexOf('.') + 1)}${old}`;
    });
    const back = await engine.unprotect('email', [...earlier, ...fourLetters]);
    const expected = values.filter((_, i) => tlds[i]?.length === 4);
    expect(back.result).toEqual([...expected, ...expected]);
    // A four-letter TLD that spells three letters is no token: it is returned as it came.
    const threeLetters = result.find((_, i) => tlds[i]?.length === 3) ?? '';
    const tld = threeLetters.slice(threeLetters.lastIndexOf('.') + 1);
    let n = [...tld].reduce((acc, c) => acc * 36 + base36.indexOf(c), 0);
    let spelled = '';
    for (let i = 0; i < 4; i++) { spelled = String.fromCharCode(97 + (n % 26)) + spelled; n = Math.floor(n / 26); }
    const forged = `${threeLetters.slice(0, threeLetters.lastIndexOf('.') + 1)}${spelled}`;
    const refused = await engine.unprotect('email', [forged]);
    expect(refused.result).toEqual([forged]);
  });

  it('noise gives different tokens for repeated inputs, all of which unprotect', async () => {
    const values = Array.from({ length: 50 }, () => '4111 1111 1111 1111');
    const { result, noise } = await engine.protect('ccn', values, { noise: '2' });
    expect(noise).toBe('2');
    expect(new Set(result).size).toBe(values.length);
    const back = await engine.unprotect('ccn', result, { noise: 2 });
    expect(back.result).toEqual(values);
  });

  it('files thousands of wrong-scope tokens under invalid_scope, exactly', async () => {
    for (const kind of ['ssn', 'name', 'email', 'uuid'] as const) {
      const values = fc.sample(ARBITRARY[kind], 1000);
      const { result: tokens } = await engine.protect(kind, values, { scope: 'tenant-a' });
      const back = await engine.unprotect(kind, tokens, { scope: 'tenant-b' });
      expect(back.result).toEqual(tokens);
      expect(back.discrepancy).toEqual({ invalid_scope: tokens.map((_, i) => i) });
      const noisy = await engine.protect(kind, values, { scope: 'tenant-a', noise: 1 });
      const backNoisy = await engine.unprotect(kind, noisy.result, { scope: 'tenant-c' });
      expect(backNoisy.discrepancy).toEqual({ invalid_scope: tokens.map((_, i) => i) });
    }
  });

  it('reports values that are no token under invalid_token, and still unprotects the rest', async () => {
    const { result: [good] } = await engine.protect('ssn', ['123-45-6789']);
    const { result: [otherScope] } = await engine.protect('ssn', ['123-45-6789'], { scope: 'elsewhere' });
    const { result: [otherKind] } = await engine.protect('numeric', ['123456789']);
    const forged = good!.slice(0, -1) + String((Number(good!.slice(-1)) + 1) % 10);
    const data = ['hello', good!, '123-45-6789', otherScope!, forged, otherKind!, ''];
    const back = await engine.unprotect('ssn', data);
    expect(back.result).toEqual(['hello', '123-45-6789', '123-45-6789', otherScope, forged, otherKind, '']);
    expect(back.discrepancy).toEqual({ invalid_token: [0, 2, 4, 5, 6], invalid_scope: [3] });
  });

  it('random strings of the token alphabet are no tokens', async () => {
    const junk = Array.from({ length: 2000 }, () => BigInt('0x' + randomBytes(14).toString('hex')).toString());
    const back = await engine.unprotect('ssn', junk);
    expect(back.discrepancy?.invalid_token).toHaveLength(junk.length);
    expect(back.discrepancy?.invalid_scope).toBeUndefined();
  });

  it('text that parses to fewer bytes than a token has is no token', async () => {
    const short = ['123', '12345', '12345678', '1234567890', '1'.repeat(25), 'ab', 'b'];
    for (const kind of ['ssn', 'email', 'name'] as const) {
      const back = await engine.unprotect(kind, short);
      expect(back.result).toEqual(short);
      expect(back.discrepancy).toEqual({ invalid_token: short.map((_, i) => i) });
    }
  });

  it('tokens made before a key rotation still unprotect; new tokens use the new version', async () => {
    const v1 = createEngine({ masterKey, keyVersion: 1 });
    const v2 = createEngine({ masterKey: Buffer.alloc(32, 9), keyVersion: 2, previousKeys: [{ version: 1, key: masterKey }] });
    const values = ['+1 (555) 010-4477', 'jane.doe@example.co.uk'];
    const old = await v1.protect('phone', values.slice(0, 1));
    const fresh = await v2.protect('phone', values.slice(0, 1));
    expect(fresh.result[0]).not.toBe(old.result[0]);
    expect((await v2.unprotect('phone', [...old.result, ...fresh.result])).result).toEqual([values[0], values[0]]);
    // The old engine does not know version 2: those tokens are no tokens to it.
    expect((await v1.unprotect('phone', fresh.result)).discrepancy).toEqual({ invalid_token: [0] });
  });

  it('refuses values that are not of the kind, naming their indexes, and returns nothing', async () => {
    for (const [kind, bad] of Object.entries(NOT_OF_KIND)) {
      const good = REALISTIC[kind as keyof typeof REALISTIC][0]!;
      await expect(engine.protect(kind, [good, ...bad!])).rejects.toMatchObject({
        name: 'ProtectionError', code: 'invalid_value', indexes: bad!.map((_, i) => i + 1),
      });
    }
  });
});
