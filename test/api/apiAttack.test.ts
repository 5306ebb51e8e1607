/**
 * Attacks on the protection API by holders of valid but limited credentials (and by anonymous
 * clients): every test asserts the safe outcome, so a bypass shows as a failure. Covers
 * authorisation (kind, scope, method, operation), crafted JSON, token forgery and replay, login
 * throttling, error and audit hygiene, and requests that would stall the event loop for others.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiAuthoriser } from '../../src/api/authorisation.js';
import { jsonShapeProblem, MAX_JSON_DEPTH } from '../../src/api/jsonBody.js';
import { startApiServer, type RunningApi } from '../../src/api/server.js';
import type { AuditEvent, AuditLog } from '../../src/audit/index.js';
import { AccountStore } from '../../src/auth/accountStore.js';
import { AuthService } from '../../src/auth/authService.js';
import { verifyPassword } from '../../src/auth/passwordHash.js';
import { createEngine } from '../../src/engine/engine.js';
import { Keyring } from '../../src/keys/keyring.js';
import { parsePolicies } from '../../src/policy/index.js';
import {
  apiConfig, authHeaders, login, makeAccount, postJson, startHarness,
  type Harness, type JsonResponse, type Session, type TestAccount,
} from './support/apiHarness.js';

const PAUSE_LIMIT_MS = Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250);

const POLICIES = `
columns:
  public.customers.email: { kind: email, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
`;

const EMAIL = 'jane.doe@example.com';
const SSN = '123-45-6789';
const NUMBER = '123456789';

let h: Harness;
const accounts: Record<string, TestAccount> = {};
const sessions: Record<string, Session> = {};
const audit: AuditEvent[] = [];
const logLines: string[] = [];
/** Every value, token and secret the tests handle: none may reach the audit log or the logs. */
const secrets = new Set<string>();

beforeAll(async () => {
  for (const role of ['app', 'support', 'analyst', 'ingest', 'partner', 'admin']) {
    accounts[role] = await makeAccount(`${role}@example.com`, [role]);
  }
  const config = {
    ...apiConfig(),
    grants: [
      { roles: ['ingest'], kinds: ['email'], scopes: ['customers'], operations: ['protect' as const] },
      { roles: ['partner'], kinds: ['email', 'ssn'], scopes: ['partners'], operations: ['protect' as const, 'unprotect' as const] },
      { roles: ['admin'], kinds: '*' as const, scopes: '*' as const, operations: ['protect' as const, 'unprotect' as const] },
    ],
  };
  const policies = parsePolicies(POLICIES, 'policies.yaml');
  const auditLog: AuditLog = { record: (event) => { audit.push(event); } };
  h = await startHarness({
    accounts: Object.values(accounts), config, logLines,
    authoriser: createApiAuthoriser(config.grants, () => policies), audit: auditLog,
  });
  for (const role of Object.keys(accounts)) sessions[role] = await login(h.url, accounts[role] as TestAccount);
  for (const a of Object.values(accounts)) { secrets.add(a.password); secrets.add(a.apiKey); }
  for (const s of Object.values(sessions)) { secrets.add(s.jwt_token); secrets.add(s.svc_token); }
  for (const v of [EMAIL, SSN, NUMBER]) secrets.add(v);
});

afterAll(async () => {
  await h?.close();
});

function body(role: string, kind: string, request: Record<string, unknown>): Promise<JsonResponse> {
  return postJson(h.url, `/api/${kind}`, { id: 1, ...request }, authHeaders(sessions[role] as Session));
}

async function raw(role: string | null, path: string, text: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; type: string }> {
  const base = role === null ? { 'content-type': 'application/json' } : authHeaders(sessions[role] as Session);
  const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...base, ...headers }, body: text });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
}

/** A token (or fpe value) minted by the admin, who may do anything. */
async function mint(kind: string, value: string, options: Record<string, unknown>): Promise<string> {
  const r = await body('admin', kind, { operation: 'protect', data: [value], options });
  expect(r.status).toBe(200);
  const token = (r.body['result'] as string[])[0] as string;
  secrets.add(token);
  return token;
}

/** A refusal: 4xx, JSON {statusCode, error, message, code}, and none of `hidden` anywhere in it. */
function expectRefusal(r: { status: number; text: string; type?: string }, hidden: readonly string[] = []): Record<string, unknown> {
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.status).toBeLessThan(500);
  if (r.type !== undefined) expect(r.type).toContain('application/json');
  const parsed = JSON.parse(r.text) as Record<string, unknown>;
  expect(parsed).toMatchObject({ statusCode: r.status, error: expect.any(String), message: expect.any(String), code: expect.any(String) });
  for (const value of hidden) expect(r.text).not.toContain(value);
  return parsed;
}

function text(r: JsonResponse): string {
  return JSON.stringify(r.body);
}

describe('authorisation: kind, scope, method and operation', () => {
  it('duplicate keys: the last scope wins for the check and for the engine alike (403)', async () => {
    const token = await mint('email', EMAIL, { scope: 'partners' });
    // Allowed scope first, forbidden last: JSON.parse keeps the last, and both layers see it.
    for (const payload of [
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers","scope":"partners"}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"scope":"customers","scope":"partners"}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers"},"options":{"scope":"partners"}}`,
      `{"id":1,"operation":"protect","operation":"unprotect","data":["${token}"],"options":{"scope":"partners"}}`,
    ]) {
      const r = await raw('app', '/api/email', payload);
      expect(r.status, payload).toBe(403);
      expectRefusal(r, [EMAIL, token]);
    }
  });

  it('an allowed scope in options and another at the top level is a 400, not a choice', async () => {
    const token = await mint('email', EMAIL, { scope: 'partners' });
    const r = await body('app', 'email', { operation: 'unprotect', data: [token], scope: 'partners', options: { scope: 'customers' } });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('conflicting_option');
    expect(text(r)).not.toContain(EMAIL);
  });

  it('scope spellings: unicode escapes of the allowed scope are the same scope; near-misses are other scopes', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    const escaped = await raw('app', '/api/email', `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"cust\\u006fmers"}}`);
    expect(escaped.status).toBe(200);
    for (const scope of ['Customers', 'customers ', ' customers', 'customers\u0000', 'customers\u200b', 'cus\u0074omers\u0301', 'сustomers']) {
      // The app may not use them...
      const r = await body('app', 'email', { operation: 'unprotect', data: [token], options: { scope } });
      expect(r.status, JSON.stringify(scope)).toBe(403);
      // ...and even the admin, who may, gets no plaintext of a customers token under them.
      const admin = await body('admin', 'email', { operation: 'unprotect', data: [token], options: { scope } });
      expect(admin.status, JSON.stringify(scope)).toBe(200);
      expect(admin.body['result']).toEqual([token]);
      expect(admin.body['discrepancy']).toEqual({ invalid_scope: [0] });
    }
  });

  it('method spellings that are not a method are 400s, never a way around the check', async () => {
    const token = await mint('ssn', SSN, { method: 'fpe', scope: 'customers' });
    for (const method of ['FPE', 'fpe ', ' fpe', 'fpe\u0000', 'Tokenise', 'tokenize', '__proto__', 'constructor', 'toString', '']) {
      const r = await body('support', 'ssn', { operation: 'unprotect', data: [token], options: { method, scope: 'customers' } });
      expect(r.status, JSON.stringify(method)).toBe(400);
      expect(r.body['code']).toBe('unknown_method');
      expect(text(r)).not.toContain(SSN);
    }
    for (const method of [['fpe'], { fpe: true }, null, 1]) {
      const r = await body('support', 'ssn', { operation: 'unprotect', data: [token], options: { method, scope: 'customers' } });
      expect(r.status).toBe(400);
      expect(text(r)).not.toContain(SSN);
    }
  });

  it('operation spellings that are not an operation are 400s (a protect-only account stays protect-only)', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    for (const operation of ['Unprotect', 'UNPROTECT', 'unprotect ', 'unprotect\u0000', 'decrypt', 'reveal']) {
      const r = await body('ingest', 'email', { operation, data: [token], options: { scope: 'customers' } });
      expect(r.status, JSON.stringify(operation)).toBe(400);
      expect(text(r)).not.toContain(EMAIL);
    }
    const r = await body('ingest', 'email', { operation: 'unprotect', data: [token], options: { scope: 'customers' } });
    expect(r.status).toBe(403);
  });

  it('mask, redact and passthrough (no right needed) never turn a token or fpe value into plaintext', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    const fpe = await mint('ssn', SSN, { method: 'fpe', scope: 'customers' });
    for (const role of ['support', 'analyst', 'ingest']) {
      for (const [kind, stored, plain] of [['email', token, EMAIL], ['ssn', fpe, SSN]] as const) {
        const through = await body(role, kind, { operation: 'unprotect', data: [stored], options: { method: 'passthrough', scope: 'customers' } });
        expect(through.status).toBe(200);
        expect(through.body['result']).toEqual([stored]);
        for (const method of ['mask', 'redact']) {
          const back = await body(role, kind, { operation: 'unprotect', data: [stored], options: { method, scope: 'customers' } });
          expect(back.status).toBe(400);
          expect(back.body['code']).toBe('not_reversible');
          const forward = await body(role, kind, { operation: 'protect', data: [stored], options: { method, scope: 'customers' } });
          expect(text(forward)).not.toContain(plain);
        }
      }
    }
  });

  it('a right on one kind opens no other kind of the same scope (tokenise and fpe keys are per kind)', async () => {
    // The partner may unprotect ssn in scope partners, not numeric: a numeric token or fpe value of
    // the same digits, sent to /api/ssn, must not come back as the number.
    const numericToken = await mint('numeric', NUMBER, { scope: 'partners' });
    const viaSsn = await body('partner', 'ssn', { operation: 'unprotect', data: [numericToken], options: { scope: 'partners' } });
    expect(viaSsn.status).toBe(200);
    expect(viaSsn.body['result']).toEqual([numericToken]);
    expect(viaSsn.body['discrepancy']).toEqual({ invalid_token: [0] });

    const numericFpe = await mint('numeric', NUMBER, { method: 'fpe', scope: 'partners' });
    const fpeViaSsn = await body('partner', 'ssn', { operation: 'unprotect', data: [numericFpe], options: { method: 'fpe', scope: 'partners' } });
    expect(text(fpeViaSsn)).not.toContain(NUMBER);
    expect(text(fpeViaSsn)).not.toContain('123-45-6789');

    // Email tokens and ssn fpe values of scope partners, each sent to the other kind's endpoint.
    const emailToken = await mint('email', EMAIL, { scope: 'partners' });
    const cross = await body('partner', 'ssn', { operation: 'unprotect', data: [emailToken], options: { scope: 'partners' } });
    expect(text(cross)).not.toContain(EMAIL);
  });

  it('a token of another scope is never opened, alone or mixed in a batch with allowed ones', async () => {
    const allowed = await mint('email', 'allowed@example.com', { scope: 'partners' });
    const other = await mint('email', EMAIL, { scope: 'customers' });
    const otherNoisy = await mint('email', EMAIL, { scope: 'customers', noise: 5 });
    const otherFpe = await mint('ssn', SSN, { method: 'fpe', scope: 'customers' });
    const r = await body('partner', 'email', { operation: 'unprotect', data: [allowed, other, otherNoisy, allowed], options: { scope: 'partners' } });
    expect(r.status).toBe(200);
    expect(r.body['result']).toEqual(['allowed@example.com', other, otherNoisy, 'allowed@example.com']);
    expect(r.body['discrepancy']).toEqual({ invalid_scope: [1, 2] });
    const f = await body('partner', 'ssn', { operation: 'unprotect', data: [otherFpe, otherFpe], options: { method: 'fpe', scope: 'partners' } });
    expect(text(f)).not.toContain(SSN);
  });

  it('tokenise and fpe are separate: a token unprotected with fpe (or the reverse) gives no plaintext', async () => {
    const token = await mint('ssn', SSN, { scope: 'partners' });
    const fpe = await mint('ssn', SSN, { method: 'fpe', scope: 'partners' });
    const a = await body('partner', 'ssn', { operation: 'unprotect', data: [token], options: { method: 'fpe', scope: 'partners' } });
    const b = await body('partner', 'ssn', { operation: 'unprotect', data: [fpe], options: { method: 'tokenise', scope: 'partners' } });
    expect(text(a)).not.toContain(SSN);
    expect(text(b)).not.toContain(SSN);
  });

  it('paths that spell a kind oddly never reach an endpoint without the credentials and rights', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    const payload = JSON.stringify({ id: 1, operation: 'unprotect', data: [token], options: { scope: 'customers' } });
    for (const path of ['/api/EMAIL', '/api/email%00', '/api//email', '/api/./email', '/api/ssn/../email', '/API/email', '/api/email/x', '/api/%65mail', '/api/email?kind=ssn', '/api/email/']) {
      const r = await raw('analyst', path, payload);
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
      expectRefusal(r, [EMAIL, token]);
      // Anonymous: never parsed, never answered with anything but a 4xx JSON.
      const anon = await raw(null, path, payload);
      expectRefusal(anon, [EMAIL, token]);
    }
  });

  it('crafted JSON: prototype keys, arrays and objects where strings go, huge numbers, BOMs', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    const cases = [
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"__proto__":{"scope":"customers"}}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"__proto__":{"scope":"customers"}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"constructor":{"prototype":{"scope":"customers"}}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":["customers"]}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":{"toString":"customers"}}}`,
      `{"id":1,"operation":"unprotect","data":[["${token}"]],"options":{"scope":"customers"}}`,
      `{"id":1,"operation":"unprotect","data":{"0":"${token}","length":1},"options":{"scope":"customers"}}`,
      `{"id":1,"operation":["unprotect"],"data":["${token}"],"options":{"scope":"customers"}}`,
      `{"id":1e400,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers"}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers","noise":1e400}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers","noise":"1e3"}}`,
      `\ufeff{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers"}}`,
      `{"id":1,"operation":"unprotect","data":["${token}"],"options":{"scope":"customers"}}garbage`,
    ];
    for (const payload of cases) {
      const r = await raw('support', '/api/email', payload);
      expectRefusal(r, [EMAIL]);
    }
  });

  it('content-type tricks are 4xx JSON (and never let a body around the checks)', async () => {
    const token = await mint('email', EMAIL, { scope: 'customers' });
    const payload = JSON.stringify({ id: 1, operation: 'unprotect', data: [token], options: { scope: 'customers' } });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json', 'text/json', 'application/jsonx', '', 'application/json; charset=utf-16le', 'multipart/form-data; boundary=x']) {
      const r = await raw('support', '/api/email', payload, { 'content-type': type });
      expectRefusal(r, [EMAIL]);
    }
  });
});

describe('sessions: forgery and replay', () => {
  function jwtParts(jwt: string): [Record<string, unknown>, Record<string, unknown>, string] {
    const [header, payload, signature] = jwt.split('.');
    return [
      JSON.parse(Buffer.from(header ?? '', 'base64url').toString()) as Record<string, unknown>,
      JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>,
      signature ?? '',
    ];
  }
  function encode(part: Record<string, unknown>): string {
    return Buffer.from(JSON.stringify(part)).toString('base64url');
  }
  function sign(header: Record<string, unknown>, payload: Record<string, unknown>, key: Buffer | string): string {
    const input = `${encode(header)}.${encode(payload)}`;
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
  }

  async function tryAs(session: Session, jwt: string, svc = session.svc_token, apiKey = session.apiKey): Promise<number> {
    const r = await postJson(h.url, '/api/ssn', { id: 1, operation: 'protect', data: [SSN], options: { method: 'fpe', scope: 'customers' } },
      { ...authHeaders(session), authorization: jwt, 'svc-token': svc, 'x-api-key': apiKey });
    expect(JSON.stringify(r.body)).not.toContain(SSN);
    return r.status;
  }

  it('a JWT with another subject, more roles, a later expiry, alg none or another key is refused', async () => {
    const support = sessions['support'] as Session;
    const app = sessions['app'] as Session;
    const [header, payload, signature] = jwtParts(support.jwt_token);
    const variants = [
      `${encode(header)}.${encode({ ...payload, sub: 'app@example.com' })}.${signature}`,
      `${encode(header)}.${encode({ ...payload, roles: ['app', 'admin'] })}.${signature}`,
      `${encode(header)}.${encode({ ...payload, exp: (payload['exp'] as number) + 86_400 })}.${signature}`,
      `${encode({ alg: 'none', typ: 'JWT', kid: '1' })}.${encode({ ...payload, sub: 'app@example.com' })}.`,
      `${encode({ ...header, kid: '2' })}.${encode(payload)}.${signature}`,
      sign(header, { ...payload, sub: 'app@example.com' }, ''),
      sign(header, { ...payload, sub: 'app@example.com' }, support.apiKey),
      sign(header, { ...payload, sub: 'app@example.com' }, support.svc_token),
      sign({ ...header, alg: 'HS512' }, { ...payload, sub: 'app@example.com' }, support.apiKey),
      `${support.jwt_token}.`,
      `Bearer Bearer ${support.jwt_token}`,
      `${support.jwt_token.slice(0, -2)}AA`,
    ];
    for (const jwt of variants) {
      expect(await tryAs(support, jwt)).toBe(401);
      expect(await tryAs(app, jwt, app.svc_token, app.apiKey)).toBe(401);
    }
  });

  it('the three headers must come from one login of one account', async () => {
    const support = sessions['support'] as Session;
    const app = sessions['app'] as Session;
    expect(await tryAs(support, app.jwt_token, app.svc_token, support.apiKey)).toBe(401);
    expect(await tryAs(support, app.jwt_token, support.svc_token, app.apiKey)).toBe(401);
    expect(await tryAs(support, support.jwt_token, app.svc_token, support.apiKey)).toBe(401);
    // An svc_token with its expiry pushed out, or of another key version.
    const [prefix, version, jti, exp, mac] = support.svc_token.split('.');
    expect(await tryAs(support, support.jwt_token, [prefix, version, jti, String(Number(exp) + 86_400), mac].join('.'))).toBe(401);
    expect(await tryAs(support, support.jwt_token, [prefix, '2', jti, exp, mac].join('.'))).toBe(401);
  });

  it('tokens used once (so their signature check is cached) still expire', async () => {
    const app = accounts['app'] as TestAccount;
    const fresh = await login(h.url, app);
    expect(await tryAs(fresh, fresh.jwt_token)).toBe(200);
    h.clock.advance(24 * 3600 * 1000 + 1000);
    try {
      expect(await tryAs(fresh, fresh.jwt_token)).toBe(401);
      expect(await tryAs(fresh, `Bearer ${fresh.jwt_token}`)).toBe(401);
    } finally {
      // Leave the other tests valid sessions.
      for (const role of Object.keys(accounts)) sessions[role] = await login(h.url, accounts[role] as TestAccount);
      for (const s of Object.values(sessions)) { secrets.add(s.jwt_token); secrets.add(s.svc_token); }
    }
  });
});

describe('error hygiene: refusals are 4xx JSON naming the rule, never the value', () => {
  it('422, 413, 400 and 403 bodies quote no element', async () => {
    const marker = 'SECRET-4111111111111111';
    const cases: [string, string, Record<string, unknown>][] = [
      ['app', 'ssn', { operation: 'protect', data: [marker], options: { method: 'fpe', scope: 'customers' } }],
      ['app', 'ssn', { operation: 'protect', data: [`${marker}${'9'.repeat(5000)}`], options: { method: 'fpe', scope: 'customers' } }],
      ['app', 'ssn', { operation: 'protect', data: [marker, 5], options: { method: 'fpe', scope: 'customers' } }],
      ['support', 'ssn', { operation: 'unprotect', data: [marker], options: { method: 'fpe', scope: 'customers' } }],
      ['support', 'email', { operation: 'protect', data: [marker], options: { method: 'mask' } }],
      ['support', 'email', { operation: 'unprotect', data: [marker], options: { method: 'mask' } }],
      ['admin', 'ssn', { operation: 'protect', data: [marker], options: { method: 'tokenise', noise: 'x' } }],
      ['admin', 'ssn', { operation: 'protect', data: [marker], options: { method: 'fpe', noise: 2 } }],
      ['admin', 'ssn', { operation: 'protect', data: [marker], options: { lang: 'en' } }],
      ['admin', 'text', { operation: 'protect', data: [marker], options: { lang: 'xx' } }],
      ['admin', 'date', { operation: 'protect', data: ['02/30/2024', marker], options: { method: 'fpe' } }],
      ['admin', 'numeric', { operation: 'protect', data: ['1', marker], options: { method: 'fpe' } }],
    ];
    for (const [role, kind, request] of cases) {
      const r = await body(role, kind, request);
      expectRefusal({ status: r.status, text: text(r) }, [marker, '4111111111111111']);
    }
    const invalidJson = await raw('admin', '/api/ssn', `{"id":1,"operation":"protect","data":["${marker}"`);
    expectRefusal(invalidJson, [marker]);
    const badEscape = await raw('admin', '/api/ssn', `{"id":1,"operation":"protect","data":["${marker}\\x"]}`);
    expectRefusal(badEscape, [marker]);
  });

  it('odd values in every kind and method are answered 200 or 4xx, never 500', async () => {
    const odd = ['\ud800', 'a\udc00b', '\u0000', '\ufeff123-45-6789', '１２３-45-6789', '\u0661\u0662\u0663', 'Jane\ud83d', '', ' ', '-0', '1e5', '\u0301', '²³', '9'.repeat(4000)];
    const kinds = ['address', 'uuid', 'text', 'phone', 'ipv4', 'ssn', 'price', 'date', 'latlng', 'name', 'city', 'email', 'ccn', 'numeric'];
    for (const kind of kinds) {
      for (const method of ['tokenise', 'fpe', 'mask', 'redact', 'passthrough']) {
        for (const operation of ['protect', 'unprotect']) {
          const r = await body('admin', kind, { operation, data: odd, options: { method } });
          expect(r.status, `${kind} ${method} ${operation}`).toBeLessThan(500);
        }
      }
    }
  });
});

describe('audit log and logs', () => {
  it('a refusal with a huge scope is a short 4xx and a short audit line', async () => {
    const scope = 's'.repeat(1024 * 1024);
    const before = audit.length;
    const r = await body('support', 'ssn', { operation: 'unprotect', data: [SSN], options: { method: 'fpe', scope } });
    const refusal = expectRefusal({ status: r.status, text: text(r) }, [SSN]);
    expect(JSON.stringify(refusal).length).toBeLessThan(2048);
    for (const event of audit.slice(before)) expect(JSON.stringify(event).length).toBeLessThan(2048);
  });

  it('a password typed into the email field is not recorded, even when it contains an @', async () => {
    const before = audit.length;
    for (const typed of ['P@ssw0rd!', 'hunter2@work', 'correct@horse-battery']) {
      secrets.add(typed);
      const r = await postJson(h.url, '/auth/login', { email: typed, password: 'x' }, { 'content-type': 'application/json' });
      expectRefusal({ status: r.status, text: JSON.stringify(r.body) }, [typed]);
    }
    const lines = JSON.stringify(audit.slice(before)).toLowerCase();
    for (const typed of ['P@ssw0rd!', 'hunter2@work', 'correct@horse-battery']) expect(lines).not.toContain(typed.toLowerCase());
    // A failed login of a real account still names it.
    await postJson(h.url, '/auth/login', { email: 'analyst@example.com', password: 'wrong-password' }, { 'content-type': 'application/json' });
    expect(audit.at(-1)).toMatchObject({ event: 'login', account: 'analyst@example.com', outcome: 'failed' });
  });

  it('after every attack above, no audit event or log line holds a value, a token, a password or a key', () => {
    const auditText = JSON.stringify(audit);
    const logText = logLines.join('');
    expect(audit.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      expect(auditText, `audit holds ${secret.slice(0, 12)}…`).not.toContain(secret);
      expect(logText, `logs hold ${secret.slice(0, 12)}…`).not.toContain(secret);
    }
  });
});

/**
 * The longest the event loop (the server runs in this process) was held while `work` ran, and the
 * slowest /healthz answer meanwhile: a pause between two polls shows in the first.
 */
async function slowestHealthzDuring(url: string, work: () => Promise<{ status: number; text: string }>): Promise<{ result: { status: number; text: string }; slowestMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let done = false;
  const finished = work().finally(() => { done = true; });
  let slowestMs = 0;
  try {
    while (!done) {
      const began = performance.now();
      await (await fetch(`${url}/healthz`)).text();
      slowestMs = Math.max(slowestMs, performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { result: await finished, slowestMs: Math.max(slowestMs, delay.max / 1e6) };
  } finally {
    delay.disable();
  }
}

describe('the scan before JSON parsing', () => {
  it('counts nesting and commas outside strings only, escapes included', () => {
    const request = JSON.stringify({ id: 1, operation: 'protect', data: ['[[[[[[[[[[[[[[[[[[[[', 'a\\"[{[{[{[{[{[{[{[{[{[{', ',,,,,,,,,,,,', '\\', '"'] });
    expect(jsonShapeProblem(request, 10)).toBeUndefined();
    expect(jsonShapeProblem(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, 10)).toBeUndefined();
    expect(jsonShapeProblem(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`, 10)).toBe('too_deep');
    expect(jsonShapeProblem(`{"a":"\\\\"${'['.repeat(MAX_JSON_DEPTH + 1)}`, 10)).toBe('too_deep');
    expect(jsonShapeProblem(`[${'1,'.repeat(11)}1]`, 10)).toBe('too_many_values');
    expect(jsonShapeProblem('{"a":"unterminated [[[[[[[[[[[[[[[[[[[[[[[[', 10)).toBeUndefined();
  });

  it('a request at the limits still goes through', async () => {
    const r = await body('analyst', 'ssn', { operation: 'protect', data: Array.from({ length: 10_000 }, () => SSN), options: { method: 'mask' } });
    expect(r.status).toBe(200);
    const over = await body('analyst', 'ssn', { operation: 'protect', data: Array.from({ length: 10_001 }, () => SSN), options: { method: 'mask' } });
    expect(over.status).toBe(413);
    expect(over.body['code']).toBe('too_many_elements');
  });
});

describe('one request must not stall the others', () => {
  const depth = 4 * 1024 * 1024;
  const nested = (prefix: string, suffix: string): string => `${prefix}${'['.repeat(depth)}${']'.repeat(depth)}${suffix}`;
  const post = (path: string, payload: string, headers: Record<string, string>) => async () => {
    const res = await fetch(`${h.url}${path}`, { method: 'POST', headers, body: payload });
    return { status: res.status, text: await res.text() };
  };

  it('anonymous: an 8 MiB deeply nested login body', async () => {
    const payload = nested('{"email":"x@example.com","password":"p","x":', '}');
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/auth/login', payload, { 'content-type': 'application/json' }));
    expectRefusal(result);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('anonymous: an 8 MiB deeply nested body to a path that does not exist', async () => {
    const payload = nested('{"x":', '}');
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/no/such/path', payload, { 'content-type': 'application/json' }));
    expectRefusal(result);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('anonymous: a 9 MiB login body of one long string', async () => {
    const payload = JSON.stringify({ email: 'x@example.com', password: 'p'.repeat(9 * 1024 * 1024) });
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/auth/login', payload, { 'content-type': 'application/json' }));
    expectRefusal(result);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('an account with no rights at all: an 8 MiB deeply nested data element', async () => {
    const payload = nested('{"id":1,"operation":"protect","options":{"method":"mask"},"data":[', ']}');
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/api/ssn', payload, authHeaders(sessions['analyst'] as Session)));
    expectRefusal(result);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('an account with no rights at all: millions of tiny elements', async () => {
    const payload = `{"id":1,"operation":"protect","options":{"method":"mask"},"data":[${'0,'.repeat(4 * 1024 * 1024)}0]}`;
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/api/ssn', payload, authHeaders(sessions['analyst'] as Session)));
    expectRefusal(result);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('an account with no rights at all: masking 10 000 ssns', async () => {
    const payload = JSON.stringify({ id: 1, operation: 'protect', options: { method: 'mask' }, data: Array.from({ length: 10_000 }, () => SSN) });
    const { result, slowestMs } = await slowestHealthzDuring(h.url, post('/api/ssn', payload, authHeaders(sessions['analyst'] as Session)));
    expect(result.status).toBe(200);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });
});

describe('login throttling', () => {
  /** A server of its own per test (the per-address counts would carry over), with scrypt as slow as in production. */
  async function throttled(accountsHere: readonly TestAccount[], run: (url: string) => Promise<void>): Promise<void> {
    const config = apiConfig({}, { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 });
    // Some 0.2 s per check, so that concurrent guesses overlap as they would.
    const slowVerify = async (password: string, phc: string): Promise<boolean> => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return verifyPassword(password, phc);
    };
    const masterKey = randomBytes(32);
    const auth = new AuthService({
      accounts: new AccountStore(accountsHere.map((a) => a.config)), keyring: new Keyring([{ version: 1, key: masterKey }]),
      loginRateLimit: config.loginRateLimit, verifyPassword: slowVerify,
    });
    const api: RunningApi = await startApiServer({ config, engine: createEngine({ masterKey }), auth });
    try {
      await run(api.url);
    } finally {
      await api.close();
    }
  }

  const attempt = (url: string, email: string, password: string) =>
    postJson(url, '/auth/login', { email, password }, { 'content-type': 'application/json' });

  it('a burst of concurrent guesses gets no more password checks than the limit', async () => {
    const alice = await makeAccount('alice@example.com');
    await throttled([alice], async (url) => {
      const guesses = Array.from({ length: 40 }, (_, i) => (i === 39 ? alice.password : `guess-${i}`));
      const results = await Promise.all(guesses.map((password) => attempt(url, alice.email, password)));
      expect(results.filter((r) => r.status === 401).length).toBeLessThanOrEqual(5);
      // The right password, sent after 39 wrong ones, is refused too: the account is locked for this address.
      expect(results[39]?.status).toBe(429);
      for (const r of results) expectRefusal({ status: r.status, text: JSON.stringify(r.body) }, [alice.password]);
    });
  });

  it('spelling the email differently does not give a burst more guesses', async () => {
    const alice = await makeAccount('alice@example.com');
    await throttled([alice], async (url) => {
      const spellings = ['alice@example.com', 'ALICE@example.com', ' alice@example.com', 'alice@EXAMPLE.com ', 'Alice@Example.Com'];
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(url, spellings[i % spellings.length] as string, `guess-${i}`)));
      expect(results.filter((r) => r.status === 401).length).toBeLessThanOrEqual(5);
    });
  });

  it('concurrent guesses spread over many accounts stop at the per-address limit', async () => {
    // One account of the tests' scrypt cost, so that unknown emails are checked at that cost too.
    await throttled([await makeAccount('someone@example.com')], async (url) => {
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => attempt(url, `nobody${i}@example.com`, 'guess')));
      expect(results.filter((r) => r.status === 401).length).toBeLessThanOrEqual(20);
      expect(results.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(40);
    });
  });

  it('a pool logging in at once with the right password is not locked out', async () => {
    const bob = await makeAccount('bob@example.com');
    await throttled([bob], async (url) => {
      const results = await Promise.all(Array.from({ length: 12 }, () => attempt(url, bob.email, bob.password)));
      expect(results.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 201));
    });
  });

  it('the owner logs in from another address while a burst locks the attacker\'s', async () => {
    const alice = await makeAccount('alice@example.com');
    const masterKey = randomBytes(32);
    const auth = new AuthService({
      accounts: new AccountStore([alice.config]), keyring: new Keyring([{ version: 1, key: masterKey }]),
      loginRateLimit: { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 },
    });
    const burst = Promise.allSettled(Array.from({ length: 30 }, (_, i) => auth.login(alice.email, `guess-${i}`, '10.0.0.66')));
    await expect(auth.login(alice.email, alice.password, '10.0.0.1')).resolves.toMatchObject({ account: { email: alice.email } });
    const outcomes = await burst;
    expect(outcomes.filter((o) => o.status === 'rejected' && (o.reason as { failure?: string }).failure === 'unauthorized').length).toBeLessThanOrEqual(5);
  });
});
