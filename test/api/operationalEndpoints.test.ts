import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../src/engine/types.js';
import { apiConfig, login, makeAccount, protect, startHarness, type Harness, type Session } from './support/apiHarness.js';

let h: Harness;
let s: Session;

beforeAll(async () => {
  const alice = await makeAccount('alice@example.com');
  h = await startHarness({ accounts: [alice] });
  s = await login(h.url, alice);
});
afterAll(async () => { await h.close(); });

describe('GET /healthz', () => {
  it('answers ok without credentials', async () => {
    const res = await fetch(`${h.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /metrics', () => {
  it('counts requests by route and status, values by kind, method and operation, and latency', async () => {
    await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: ['123-45-6789', '078-05-1120'], options: { method: 'fpe' } });
    await protect(h.url, s, 'ssn', { id: 1, operation: 'protect', data: ['hello'] });
    await fetch(`${h.url}/nowhere/at/all?secret=1`);
    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE pgveil_http_requests_total counter');
    expect(text).toContain('pgveil_http_requests_total{route="/api/ssn",method="POST",status="200"} 1');
    expect(text).toContain('pgveil_http_requests_total{route="/api/ssn",method="POST",status="422"} 1');
    expect(text).toContain('pgveil_http_requests_total{route="/auth/login",method="POST",status="201"} 1');
    // Unmatched URLs share one label: no unbounded series from client input.
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain('nowhere');
    expect(text).toContain('pgveil_protection_values_total{kind="ssn",method="fpe",operation="protect"} 2');
    expect(text).toContain('# TYPE pgveil_http_request_duration_seconds histogram');
    expect(text).toMatch(/pgveil_http_request_duration_seconds_bucket\{route="\/api\/ssn",le="\+Inf"\} 2/);
    expect(text).toMatch(/pgveil_http_request_duration_seconds_count\{route="\/api\/ssn"\} 2/);
  });
});

describe('GET /openapi.json', () => {
  it('describes every endpoint', async () => {
    const res = await fetch(`${h.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/auth/login', ...KINDS.map((k) => `/api/${k}`), '/healthz', '/metrics', '/openapi.json'].sort(),
    );
    for (const kind of KINDS) {
      const op = doc.paths[`/api/${kind}`]?.['post'] as { responses: Record<string, unknown>; security: unknown[] };
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '413', '415', '422']));
      expect(op.security).toHaveLength(1);
    }
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ProtectionRequest', 'ProtectionResponse', 'LoginRequest', 'LoginResponse', 'Error']));
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'jwtToken', 'svcToken']);
  });
});

describe('GET /metrics with api.metricsToken', () => {
  it('answers 401 without the bearer token or with a wrong one, 200 with it', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const guarded = await startHarness({ accounts: [], config: { ...apiConfig(), metricsToken: token } });
    try {
      const missing = await fetch(`${guarded.url}/metrics`);
      expect(missing.status).toBe(401);
      const body = await missing.text();
      expect(body).toContain('api.metricsToken');
      expect(body).not.toContain(token);
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const ok = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('pgveil_http_requests_total');
      // /healthz stays open for load balancers.
      expect((await fetch(`${guarded.url}/healthz`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
