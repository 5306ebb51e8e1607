import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiConfig, authHeaders, login, makeAccount, postJson, protect, startHarness, type Harness, type Session,
} from './support/apiHarness.js';

/** Every failing request: the right status and a {statusCode, error, message} JSON body. */
let h: Harness;
let s: Session;

beforeAll(async () => {
  const alice = await makeAccount('alice@example.com');
  // Small limits so the 413 cases stay small; the defaults are checked in limits below.
  h = await startHarness({ accounts: [alice], config: apiConfig({ maxElements: 50, maxElementBytes: 64, maxBodyBytes: 16 * 1024 }) });
  s = await login(h.url, alice);
});
afterAll(async () => { await h.close(); });

function expectErrorBody(body: Record<string, unknown>, status: number, error: string): void {
  expect(body['statusCode']).toBe(status);
  expect(body['error']).toBe(error);
  expect(typeof body['message']).toBe('string');
  expect((body['message'] as string).length).toBeGreaterThan(0);
}

const ok = { id: 1, operation: 'protect', data: ['123-45-6789'] };

describe('400 Bad Request', () => {
  it.each([
    ['malformed JSON', '{"id": 1, "operation": "protect", "data": [', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    ['a JSON array', '[1,2]', 'invalid_body'],
    ['a JSON string', '"hello"', 'invalid_body'],
    ['prototype poisoning', '{"id":1,"operation":"protect","data":[],"__proto__":{"x":1}}', 'invalid_json'],
  ])('%s', async (_name, text, code) => {
    const r = await postJson(h.url, '/api/ssn', text, authHeaders(s));
    expect(r.status).toBe(400);
    expectErrorBody(r.body, 400, 'Bad Request');
    expect(r.body['code']).toBe(code);
  });

  it.each([
    ['id as a string', { ...ok, id: '1' }],
    ['id missing', { operation: 'protect', data: [] }],
    ['operation missing', { id: 1, data: [] }],
    ['operation as a number', { ...ok, operation: 1 }],
    ['data missing', { id: 1, operation: 'protect' }],
    ['data as a string', { ...ok, data: '123-45-6789' }],
    ['options as an array', { ...ok, options: [] }],
    ['method as a number', { ...ok, options: { method: 1 } }],
    ['scope as a number', { ...ok, scope: 5 }],
    ['noise as a float', { ...ok, options: { noise: 1.5 } }],
    ['noise as a boolean', { ...ok, noise: true }],
    ['an unknown field', { ...ok, metod: 'fpe' }],
    ['an unknown option', { ...ok, options: { methd: 'fpe' } }],
  ])('wrong field types: %s', async (_name, body) => {
    const r = await protect(h.url, s, 'ssn', body);
    expect(r.status).toBe(400);
    expectErrorBody(r.body, 400, 'Bad Request');
    expect(r.body['code']).toBe('invalid_body');
  });

  it.each([
    ['unknown kind', 'passport', ok, 'unknown_kind'],
    ['unknown method', 'ssn', { ...ok, options: { method: 'encrypt' } }, 'unknown_method'],
    ['unknown lang', 'text', { id: 1, operation: 'protect', data: ['hi'], options: { lang: 'xx' } }, 'unknown_lang'],
    ['unknown operation', 'ssn', { ...ok, operation: 'encrypt' }, 'unknown_operation'],
    ['lang on a kind without it', 'ssn', { ...ok, lang: 'en' }, 'lang_not_supported'],
    ['negative noise', 'ssn', { ...ok, noise: -1 }, 'invalid_noise'],
    ['non-numeric noise', 'ssn', { ...ok, noise: 'lots' }, 'invalid_noise'],
    ['noise with fpe', 'ssn', { ...ok, method: 'fpe', noise: 2 }, 'noise_not_supported'],
    ['empty scope', 'ssn', { ...ok, scope: '' }, 'invalid_scope'],
    ['conflicting noise', 'ssn', { ...ok, noise: 1, options: { noise: '2' } }, 'conflicting_option'],
  ])('%s', async (_name, kind, body, code) => {
    const r = await protect(h.url, s, kind, body);
    expect(r.status).toBe(400);
    expectErrorBody(r.body, 400, 'Bad Request');
    expect(r.body['code']).toBe(code);
  });

  it('lists the valid choices for unknown names', async () => {
    const r = await protect(h.url, s, 'ssn', { ...ok, options: { method: 'encrypt' } });
    expect(r.body['message']).toContain('tokenise, fpe, mask, redact, passthrough');
    const k = await protect(h.url, s, 'passport', ok);
    expect(k.body['message']).toContain('address');
  });

  it('names the indexes of non-string elements', async () => {
    const r = await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: ['123-45-6789', 5, null, '078-05-1120', { a: 1 }, ['x']] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'not_a_string', indexes: [1, 2, 4, 5] });
  });
});

describe('413 Payload Too Large', () => {
  it('more elements than the limit', async () => {
    const r = await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: new Array(51).fill('123-45-6789') });
    expect(r.status).toBe(413);
    expectErrorBody(r.body, 413, 'Payload Too Large');
    expect(r.body['code']).toBe('too_many_elements');
  });

  it('elements over the per-element limit, by index (UTF-8 bytes)', async () => {
    const long = 'a'.repeat(65);
    const wide = 'é'.repeat(33); // 66 bytes in 33 characters
    const r = await protect(h.url, s, 'text', { id: 1, operation: 'protect', data: ['short', long, 'é'.repeat(32), wide] });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ statusCode: 413, code: 'element_too_large', indexes: [1, 3] });
  });

  it('tokens of elements within the limit unprotect, however longer than it they are', async () => {
    const values = ['é'.repeat(32), 'Zürich 東京 Ñandú Jean-Luc 42'.slice(0, 20), 'a'.repeat(64)];
    const tokens = await protect(h.url, s, 'text', { id: 1, operation: 'protect', method: 'tokenise', data: values });
    expect(tokens.status).toBe(200);
    const data = tokens.body['result'] as string[];
    expect(data.some((token) => Buffer.byteLength(token, 'utf8') > 64)).toBe(true);
    const back = await protect(h.url, s, 'text', { id: 2, operation: 'unprotect', method: 'tokenise', data });
    expect(back.status).toBe(200);
    expect(back.body['result']).toEqual(values);
    const forged = await protect(h.url, s, 'text', { id: 3, operation: 'unprotect', method: 'tokenise', data: ['x'.repeat(4 * 64 + 257)] });
    expect(forged.status).toBe(413);
    expect(forged.body).toMatchObject({ code: 'element_too_large', indexes: [0] });
  });

  it('a body over the size limit', async () => {
    const r = await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: ['x'.repeat(20 * 1024)] });
    expect(r.status).toBe(413);
    expectErrorBody(r.body, 413, 'Payload Too Large');
  });
});

describe('415 Unsupported Media Type', () => {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['form data', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no content type', {}],
  ])('%s', async (_name, contentType) => {
    const headers: Record<string, string> = { ...authHeaders(s) };
    delete headers['content-type'];
    Object.assign(headers, contentType);
    const res = await fetch(`${h.url}/api/ssn`, { method: 'POST', headers, body: JSON.stringify(ok) });
    expect(res.status).toBe(415);
    expectErrorBody((await res.json()) as Record<string, unknown>, 415, 'Unsupported Media Type');
  });

  it('login too', async () => {
    const r = await postJson(h.url, '/auth/login', '{"email":"a@b.c","password":"x"}', { 'content-type': 'text/plain' });
    expect(r.status).toBe(415);
  });

  it('accepts a charset parameter', async () => {
    const r = await postJson(h.url, '/api/ssn', ok, { ...authHeaders(s), 'content-type': 'application/json; charset=utf-8' });
    expect(r.status).toBe(200);
  });
});

describe('404 and the default limits', () => {
  it('unknown paths get a JSON 404', async () => {
    const res = await fetch(`${h.url}/nope`);
    expect(res.status).toBe(404);
    expectErrorBody((await res.json()) as Record<string, unknown>, 404, 'Not Found');
    const get = await fetch(`${h.url}/api/ssn`);
    expect(get.status).toBe(404);
  });

  it('a malformed URL gets a JSON 400', async () => {
    const res = await fetch(`${h.url}/api/%zz`, { method: 'POST', headers: authHeaders(s), body: JSON.stringify(ok) });
    expect(res.status).toBe(400);
    expectErrorBody((await res.json()) as Record<string, unknown>, 400, 'Bad Request');
  });

  it('the defaults are 10 000 elements, 4 KiB per element, 10 MiB per body and 60 s per request', () => {
    expect(apiConfig().limits).toEqual({ maxElements: 10_000, maxElementBytes: 4096, maxBodyBytes: 10 * 1024 * 1024, requestTimeoutSeconds: 60, maxConnections: 1000 });
  });
});

describe('no client input causes a 5xx', () => {
  const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
  const body = fc.record({
    id: fc.oneof(fc.integer(), fc.string()),
    operation: fc.constantFrom('protect', 'unprotect', 'x'),
    data: fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }), value), { maxLength: 6 }),
    options: fc.record({
      method: fc.constantFrom('tokenise', 'fpe', 'mask', 'redact', 'passthrough', 'zzz'),
      scope: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
      noise: fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constantFrom('0', '1', 'x', '1.5')),
      lang: fc.constantFrom('en', 'ja', 'ru', 'qq'),
    }, { requiredKeys: [] }),
  }, { requiredKeys: ['operation', 'data'] });

  it('random bodies on random endpoints', async () => {
    const kinds = ['address', 'uuid', 'text', 'phone', 'ipv4', 'ssn', 'price', 'date', 'latlng', 'name', 'city', 'email', 'ccn', 'numeric', 'other'];
    await fc.assert(fc.asyncProperty(fc.constantFrom(...kinds), body, async (kind, b) => {
      const r = await protect(h.url, s, kind, b);
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
      if (r.status !== 200) expect(typeof r.body['message']).toBe('string');
    }), { numRuns: 300, seed: 7 });
  });

  it('random tokens to unprotect', async () => {
    const kinds = ['address', 'uuid', 'text', 'phone', 'ipv4', 'ssn', 'price', 'date', 'latlng', 'name', 'city', 'email', 'ccn', 'numeric'];
    await fc.assert(fc.asyncProperty(fc.constantFrom(...kinds), fc.constantFrom('tokenise', 'fpe'),
      fc.array(fc.oneof(fc.stringMatching(/^[0-9 ]{0,40}$/), fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 12 })), { maxLength: 5 }),
      async (kind, method, data) => {
        const r = await protect(h.url, s, kind, { id: 1, operation: 'unprotect', data, options: { method } });
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
      }), { numRuns: 300, seed: 11 });
  });
});
