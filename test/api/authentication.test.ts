import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwordHash.js';
import {
  apiConfig, authHeaders, login, makeAccount, postJson, protect, startHarness,
  type Harness, type Session, type TestAccount,
} from './support/apiHarness.js';

let h: Harness;
let alice: TestAccount;
let bob: TestAccount;
let carol: TestAccount;

const body = { id: 1, operation: 'protect', data: ['123-45-6789'] };
const DAY = 24 * 60 * 60 * 1000;

beforeAll(async () => {
  alice = await makeAccount('alice@example.com', ['analyst']);
  bob = await makeAccount('bob@example.com', ['admin']);
  carol = await makeAccount('carol@example.com', ['analyst'], false);
  h = await startHarness({ accounts: [alice, bob, carol], config: apiConfig({}, { maxFailuresPerAccount: 3, maxFailuresPerClient: 10, windowSeconds: 60 }) });
});
afterAll(async () => { await h.close(); });
beforeEach(() => {
  // Each test starts in a fresh rate-limit window with the original accounts.
  h.clock.advance(61_000);
  h.store.replaceAll([alice.config, bob.config, carol.config]);
});

function loginRequest(email: string, password: string) {
  return postJson(h.url, '/auth/login', { email, password }, { 'content-type': 'application/json' });
}

describe('POST /auth/login', () => {
  it('answers 201 with statusCode, message, jwt_token and svc_token', async () => {
    const r = await loginRequest(alice.email, alice.password);
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['jwt_token', 'message', 'statusCode', 'svc_token']);
    expect(r.body).toMatchObject({ statusCode: 201, message: expect.any(String), jwt_token: expect.any(String), svc_token: expect.any(String) });
    // Both tokens live 24 hours.
    const payload = JSON.parse(Buffer.from((r.body['jwt_token'] as string).split('.')[1] ?? '', 'base64url').toString()) as { iat: number; exp: number; sub: string };
    expect(payload.exp - payload.iat).toBe(24 * 60 * 60);
    expect(payload.sub).toBe(alice.email);
  });

  it('matches the email case-insensitively', async () => {
    expect((await loginRequest('ALICE@Example.com', alice.password)).status).toBe(201);
  });

  it.each([
    ['a wrong password', () => [alice.email, 'wrong-password']],
    ['an unknown email', () => ['nobody@example.com', 'whatever']],
    ['a disabled account', () => [carol.email, carol.password]],
  ])('answers 401 for %s, with the same message', async (_name, creds) => {
    const [email, password] = creds() as [string, string];
    const r = await loginRequest(email, password);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized', message: 'invalid email or password' });
  });

  it.each([
    ['no password', { email: 'a@b.c' }],
    ['no email', { password: 'x' }],
    ['a numeric password', { email: 'a@b.c', password: 123 }],
  ])('answers 400 for %s', async (_name, b) => {
    const r = await postJson(h.url, '/auth/login', b, { 'content-type': 'application/json' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('rate-limits repeated failures of one account with 429 and Retry-After, even with the right password', async () => {
    for (let i = 0; i < 3; i++) expect((await loginRequest(bob.email, 'nope')).status).toBe(401);
    const limited = await loginRequest(bob.email, bob.password);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other accounts are not affected.
    expect((await loginRequest(alice.email, alice.password)).status).toBe(201);
    // After the window, the right password works again.
    h.clock.advance(61_000);
    expect((await loginRequest(bob.email, bob.password)).status).toBe(201);
  });

  it('rate-limits one client trying many accounts', async () => {
    for (let i = 0; i < 10; i++) expect((await loginRequest(`user${i}@example.com`, 'nope')).status).toBe(401);
    expect((await loginRequest('another@example.com', 'nope')).status).toBe(429);
  });
});

describe('credentials of the protection endpoints', () => {
  let a: Session;
  let b: Session;
  beforeEach(async () => {
    a = await login(h.url, alice);
    b = await login(h.url, bob);
  });

  it('accepts the three headers of one login', async () => {
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(200);
  });

  it.each(['x-api-key', 'authorization', 'svc-token'])('answers 401 without %s', async (name) => {
    const headers = authHeaders(a);
    delete headers[name];
    const r = await postJson(h.url, '/api/ssn', body, headers);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });

  it.each([
    ['a wrong API key', () => ({ ...a, apiKey: 'pgv_wrong' })],
    ['the API key of another account', () => ({ ...a, apiKey: bob.apiKey })],
    ['the svc_token of another login of the same account', () => ({ ...a, svc_token: b.svc_token })],
    ['the jwt_token of another account', () => ({ ...a, jwt_token: b.jwt_token })],
    ['a tampered jwt_token', () => ({ ...a, jwt_token: `${a.jwt_token.slice(0, -2)}AA` })],
    ['a tampered svc_token', () => ({ ...a, svc_token: `${a.svc_token.slice(0, -2)}AA` })],
    ['a jwt_token signed with alg none', () => ({ ...a, jwt_token: noneToken(a.jwt_token) })],
    ['garbage', () => ({ ...a, jwt_token: 'x.y.z', svc_token: 'nope' })],
  ])('answers 401 for %s', async (_name, session) => {
    const r = await protect(h.url, session(), 'ssn', body);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });

  it('pairs the svc_token of one login with its own jwt_token only', async () => {
    const a2 = await login(h.url, alice);
    expect((await protect(h.url, { ...a2, svc_token: a.svc_token }, 'ssn', body)).status).toBe(401);
    expect((await protect(h.url, a2, 'ssn', body)).status).toBe(200);
  });

  it('expires the tokens after 24 hours (injected clock)', async () => {
    h.clock.advance(DAY - 1000);
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(200);
    h.clock.advance(1000);
    const r = await protect(h.url, a, 'ssn', body);
    expect(r.status).toBe(401);
    expect(r.body['message']).toContain('expired');
    // A new login gives fresh tokens.
    expect((await protect(h.url, await login(h.url, alice), 'ssn', body)).status).toBe(200);
  });

  it('stops the tokens of a disabled account at once, and of a removed one', async () => {
    h.store.replaceAll([{ ...alice.config, enabled: false }, bob.config]);
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(401);
    h.store.replaceAll([bob.config]);
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(401);
    expect((await protect(h.url, b, 'ssn', body)).status).toBe(200);
    h.store.replaceAll([alice.config, bob.config]);
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(200);
  });

  it('ends the sessions of an account whose password changed', async () => {
    h.store.replaceAll([{ ...alice.config, passwordHash: await hashPassword('a new password', 4) }, bob.config]);
    expect((await protect(h.url, a, 'ssn', body)).status).toBe(401);
  });

  it('checks credentials before reading the body (401 beats 415 and 413)', async () => {
    const r = await postJson(h.url, '/api/ssn', 'x'.repeat(1000), { 'content-type': 'text/plain' });
    expect(r.status).toBe(401);
  });
});

function noneToken(jwt: string): string {
  const [, payload] = jwt.split('.');
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: '1' })).toString('base64url');
  return `${header}.${payload ?? ''}.`;
}
