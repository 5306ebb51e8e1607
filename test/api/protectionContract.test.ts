import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS, LANG_KINDS } from '../../src/engine/types.js';
import { login, makeAccount, protect, startHarness, type Harness, type Session } from './support/apiHarness.js';
import { NOT_OF_KIND, SEED_SAMPLES } from './support/seedSamples.js';

/** The seed's whole contract, over real HTTP, on every one of the fourteen endpoints. */
let h: Harness;
let s: Session;

beforeAll(async () => {
  const alice = await makeAccount('alice@example.com');
  h = await startHarness({ accounts: [alice] });
  s = await login(h.url, alice);
});
afterAll(async () => { await h.close(); });

const RESPONSE_FIELDS = new Set(['operation', 'result', 'method', 'scope', 'noise', 'discrepancy']);

function expectOnlyContractFields(body: Record<string, unknown>): void {
  for (const key of Object.keys(body)) expect(RESPONSE_FIELDS.has(key), `unexpected field ${key}`).toBe(true);
  expect(body).not.toHaveProperty('id');
}

describe.each(KINDS)('POST /api/%s', (kind) => {
  const data = [...SEED_SAMPLES[kind]];

  it('protects with tokenise by default and unprotects back, in order', async () => {
    const p = await protect(h.url, s, kind, { id: 1, operation: 'protect', data });
    expect(p.status).toBe(200);
    expectOnlyContractFields(p.body);
    expect(p.body).toMatchObject({ operation: 'protect', method: 'tokenise' });
    expect(p.body).not.toHaveProperty('scope');
    expect(p.body).not.toHaveProperty('noise');
    expect(p.body).not.toHaveProperty('discrepancy');
    const tokens = p.body['result'] as string[];
    expect(tokens).toHaveLength(data.length);
    tokens.forEach((t, i) => expect(t).not.toBe(data[i]));

    const u = await protect(h.url, s, kind, { id: 2, operation: 'unprotect', data: tokens });
    expect(u.status).toBe(200);
    expectOnlyContractFields(u.body);
    expect(u.body).toEqual({ operation: 'unprotect', result: data });
  });

  it('is deterministic within a scope, differs across scopes, and echoes the scope', async () => {
    const a1 = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { scope: 'app-a' } });
    const a2 = await protect(h.url, s, kind, { id: 2, operation: 'protect', data, options: { scope: 'app-a' } });
    const b = await protect(h.url, s, kind, { id: 3, operation: 'protect', data, options: { scope: 'app-b' } });
    expect(a1.body['scope']).toBe('app-a');
    expect(a1.body['result']).toEqual(a2.body['result']);
    expect(b.body['result']).not.toEqual(a1.body['result']);

    // The wrong scope: every element back unchanged, every index in invalid_scope.
    const wrong = await protect(h.url, s, kind, { id: 4, operation: 'unprotect', data: a1.body['result'], options: { scope: 'app-b' } });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({
      operation: 'unprotect',
      result: a1.body['result'],
      discrepancy: { invalid_scope: data.map((_, i) => i) },
    });
  });

  it('reports elements that are no token in invalid_token and still unprotects the rest', async () => {
    const p = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { scope: 'mix' } });
    const tokens = p.body['result'] as string[];
    const u = await protect(h.url, s, kind, { id: 2, operation: 'unprotect', data: ['x', tokens[0], '123', tokens[1]], options: { scope: 'mix' } });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({
      operation: 'unprotect',
      result: ['x', data[0], '123', data[1]],
      discrepancy: { invalid_token: [0, 2] },
    });
  });

  it('fpe keeps length (ipv4: the dotted form) and unprotects with fpe', async () => {
    const p = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { method: 'fpe', scope: 'f' } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ operation: 'protect', method: 'fpe', scope: 'f' });
    const out = p.body['result'] as string[];
    // The seed: ipv4 fpe output is dotted groups whose lengths may differ from the input.
    if (kind === 'ipv4') out.forEach((v) => expect(v).toMatch(/^\d{1,3}(\.\d{1,3}){3}$/));
    else out.forEach((v, i) => expect([...v].length).toBe([...(data[i] ?? '')].length));
    const u = await protect(h.url, s, kind, { id: 2, operation: 'unprotect', data: out, options: { method: 'fpe', scope: 'f' } });
    expect(u.body).toEqual({ operation: 'unprotect', result: data });
  });

  it('accepts method, scope and noise at the top level, noise as integer or string, echoed as a string', async () => {
    const top = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, method: 'tokenise', scope: 'top', noise: 2 });
    expect(top.status).toBe(200);
    expect(top.body).toMatchObject({ method: 'tokenise', scope: 'top', noise: '2' });
    const str = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { scope: 'top', noise: '2' } });
    expect(str.body['noise']).toBe('2');
    const both = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, scope: 'top', noise: '2', options: { scope: 'top', noise: 2 } });
    expect(both.status).toBe(200);
    // Noisy tokens still unprotect to the originals.
    const u = await protect(h.url, s, kind, { id: 2, operation: 'unprotect', data: top.body['result'], scope: 'top' });
    expect(u.body).toEqual({ operation: 'unprotect', result: data });
  });

  it('answers 400 when the top level and options disagree', async () => {
    const r = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, method: 'fpe', options: { method: 'tokenise' } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'conflicting_option' });
  });

  it('answers 200 with an empty result for an empty data', async () => {
    const r = await protect(h.url, s, kind, { id: 1, operation: 'protect', data: [] });
    expect(r.status).toBe(200);
    expect(r.body['result']).toEqual([]);
    const u = await protect(h.url, s, kind, { id: 1, operation: 'unprotect', data: [] });
    expect(u.body).toEqual({ operation: 'unprotect', result: [] });
  });

  it('masks and redacts one way: unprotect with them is a 400', async () => {
    for (const method of ['mask', 'redact'] as const) {
      const p = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { method } });
      expect(p.status).toBe(200);
      expect(p.body['method']).toBe(method);
      expect(p.body['result']).toHaveLength(data.length);
      const u = await protect(h.url, s, kind, { id: 1, operation: 'unprotect', data: p.body['result'], options: { method } });
      expect(u.status).toBe(400);
      expect(u.body['code']).toBe('not_reversible');
    }
  });

  it('passes values through unchanged with passthrough', async () => {
    const p = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { method: 'passthrough' } });
    expect(p.body).toEqual({ operation: 'protect', result: data, method: 'passthrough' });
  });

  if (LANG_KINDS.has(kind)) {
    it('accepts lang', async () => {
      const r = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { lang: 'de' } });
      expect(r.status).toBe(200);
    });
  } else {
    it('answers 400 to lang, which this kind does not have', async () => {
      const r = await protect(h.url, s, kind, { id: 1, operation: 'protect', data, options: { lang: 'en' } });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'lang_not_supported' });
    });
  }

  const bad = NOT_OF_KIND[kind];
  if (bad !== undefined) {
    it('answers 422 naming the elements that are not of the kind', async () => {
      const r = await protect(h.url, s, kind, { id: 1, operation: 'protect', data: [data[0], bad, data[1], bad] });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity', code: 'invalid_value', indexes: [1, 3] });
      expect(JSON.stringify(r.body)).not.toContain(bad);
    });
  }
});

describe('seed listings', () => {
  it('fpe keeps the layouts of the seed table', async () => {
    const layouts: [string, string, RegExp][] = [
      ['ssn', '123-45-6789', /^\d{3}-\d{2}-\d{4}$/],
      ['ccn', '4111 1111 1111 1111', /^\d{4} \d{4} \d{4} \d{4}$/],
      ['date', '12/31/2024', /^\d{2}\/\d{2}\/\d{4}$/],
      ['numeric', '1234567', /^\d{7}$/],
      ['latlng', '-33.868820', /^-\d{2}\.\d{6}$/],
      ['price', '$1,234.56', /^\$\d,\d{3}\.\d{2}$/],
      ['ipv4', '192.168.10.4', /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/],
    ];
    for (const [kind, value, layout] of layouts) {
      const r = await protect(h.url, s, kind, { id: 7, operation: 'protect', data: [value], options: { method: 'fpe' } });
      expect(r.body['result'], kind).toEqual([expect.stringMatching(layout)]);
    }
  });

  it('tokenise output of the digit kinds is digits (with spaces for ccn and phone)', async () => {
    for (const kind of ['ssn', 'date', 'numeric', 'ipv4', 'price', 'latlng'] as const) {
      const r = await protect(h.url, s, kind, { id: 7, operation: 'protect', data: [SEED_SAMPLES[kind][0]] });
      expect(r.body['result'], kind).toEqual([expect.stringMatching(/^\d+$/)]);
    }
    for (const kind of ['ccn', 'phone'] as const) {
      const r = await protect(h.url, s, kind, { id: 7, operation: 'protect', data: [SEED_SAMPLES[kind][0]] });
      expect(r.body['result'], kind).toEqual([expect.stringMatching(/^\d+( \d+)*$/)]);
    }
  });

  it('accepts "Bearer " before the jwt_token', async () => {
    const r = await fetch(`${h.url}/api/ssn`, {
      method: 'POST',
      headers: { 'x-api-key': s.apiKey, authorization: `Bearer ${s.jwt_token}`, 'svc-token': s.svc_token, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, operation: 'protect', data: ['123-45-6789'] }),
    });
    expect(r.status).toBe(200);
  });
});
