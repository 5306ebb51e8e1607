/**
 * Who may protect and unprotect on the API: the rights the column policies imply (a role that
 * sees a kind/scope in plaintext), plus the configuration's grants; everyone else gets a 403 that
 * names the kind, scope and operation and never a value. Real HTTP, real engine, real accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiAuthoriser } from '../../src/api/authorisation.js';
import { parsePolicies, type PolicySet } from '../../src/policy/index.js';
import { apiConfig, authHeaders, login, makeAccount, startHarness, type Harness, type Session, type TestAccount } from './support/apiHarness.js';

const POLICIES = `
columns:
  public.customers.email: { kind: email, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.phone: { kind: phone, method: passthrough, reveal: { app: plaintext, "*": mask } }
`;

const EMAIL = 'jane.doe@example.com';
let policies: PolicySet = parsePolicies(POLICIES, 'policies.yaml');
let harness: Harness;
const accounts: Record<string, TestAccount> = {};
const sessions: Record<string, Session> = {};

beforeAll(async () => {
  for (const role of ['app', 'support', 'analyst', 'ingest']) accounts[role] = await makeAccount(`${role}@example.com`, [role]);
  const config = {
    ...apiConfig(),
    grants: [{ roles: ['ingest'], kinds: ['email'], scopes: ['customers'], operations: ['protect' as const] }],
  };
  harness = await startHarness({
    accounts: Object.values(accounts),
    config,
    authoriser: createApiAuthoriser(config.grants, () => policies),
  });
  for (const role of Object.keys(accounts)) sessions[role] = await login(harness.url, accounts[role] as TestAccount);
});

afterAll(async () => {
  await harness?.close();
});

async function call(role: string, kind: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(`${harness.url}/api/${kind}`, {
    method: 'POST', headers: authHeaders(sessions[role] as Session), body: JSON.stringify({ id: 1, ...body }),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

describe('rights from the column policies', () => {
  it('a role that sees email/customers in plaintext protects and unprotects it', async () => {
    const token = await call('app', 'email', { operation: 'protect', data: [EMAIL], options: { scope: 'customers' } });
    expect(token.status).toBe(200);
    const [stored] = token.body['result'] as string[];
    const plain = await call('app', 'email', { operation: 'unprotect', data: [stored], options: { scope: 'customers' } });
    expect(plain.status).toBe(200);
    expect(plain.body['result']).toEqual([EMAIL]);
  });

  it('support (masks) and analyst (tokens) cannot unprotect the app\'s tokens: 403, no value in the body', async () => {
    const token = await call('app', 'email', { operation: 'protect', data: [EMAIL], options: { scope: 'customers' } });
    const [stored] = token.body['result'] as string[];
    for (const role of ['support', 'analyst']) {
      const refused = await call(role, 'email', { operation: 'unprotect', data: [stored], options: { scope: 'customers' } });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ statusCode: 403, error: 'Forbidden', code: 'forbidden' });
      expect(refused.body['message']).toContain('unprotect email values in scope "customers"');
      expect(refused.text).not.toContain(stored);
      expect(refused.text).not.toContain(EMAIL);
    }
  });

  it('protect is a right too: an analyst cannot confirm guesses against the tokens it sees', async () => {
    const refused = await call('analyst', 'ssn', { operation: 'protect', data: ['123-45-6789'], options: { method: 'fpe', scope: 'customers' } });
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain('123-45-6789');
  });

  it('rights are per scope and per kind: the app has none in another scope or for a kind it does not see', async () => {
    expect((await call('app', 'email', { operation: 'protect', data: [EMAIL] })).status).toBe(403); // no-scope
    expect((await call('app', 'ccn', { operation: 'protect', data: ['4111 1111 1111 1111'], options: { method: 'fpe', scope: 'customers' } })).status).toBe(403);
    // A plaintext-at-rest column gives no key right: phone is passthrough.
    expect((await call('app', 'phone', { operation: 'protect', data: ['+1 555 010 4477'], options: { scope: 'no-scope' } })).status).toBe(403);
  });

  it('mask, redact and passthrough reveal nothing and need no right', async () => {
    for (const method of ['mask', 'redact', 'passthrough']) {
      const masked = await call('analyst', 'ssn', { operation: 'protect', data: ['123-45-6789'], options: { method, scope: 'customers' } });
      expect(masked.status).toBe(200);
    }
  });

  it('method and scope at the top level are checked like in options', async () => {
    const refused = await call('support', 'ssn', { operation: 'unprotect', data: ['123-45-6789'], method: 'fpe', scope: 'customers' });
    expect(refused.status).toBe(403);
  });

  it('follows policy reloads', async () => {
    const before = policies;
    try {
      policies = parsePolicies(POLICIES.replace('support: mask } }\n  public.customers.ssn', 'support: plaintext } }\n  public.customers.ssn'), 'policies.yaml');
      const token = await call('app', 'email', { operation: 'protect', data: [EMAIL], options: { scope: 'customers' } });
      const [stored] = token.body['result'] as string[];
      const now = await call('support', 'email', { operation: 'unprotect', data: [stored], options: { scope: 'customers' } });
      expect(now.status).toBe(200);
      expect(now.body['result']).toEqual([EMAIL]);
    } finally {
      policies = before;
    }
    expect((await call('support', 'email', { operation: 'unprotect', data: ['x@y.z'], options: { scope: 'customers' } })).status).toBe(403);
  });
});

describe('rights from api.grants', () => {
  it('a protect-only ingestion role protects and cannot unprotect', async () => {
    const token = await call('ingest', 'email', { operation: 'protect', data: [EMAIL], options: { scope: 'customers' } });
    expect(token.status).toBe(200);
    const [stored] = token.body['result'] as string[];
    const refused = await call('ingest', 'email', { operation: 'unprotect', data: [stored], options: { scope: 'customers' } });
    expect(refused.status).toBe(403);
    expect(refused.body['message']).toContain('api.grants');
  });

  it('a grant is for its kinds and scopes only', async () => {
    expect((await call('ingest', 'email', { operation: 'protect', data: [EMAIL], options: { scope: 'other' } })).status).toBe(403);
    expect((await call('ingest', 'ssn', { operation: 'protect', data: ['123-45-6789'], options: { method: 'fpe', scope: 'customers' } })).status).toBe(403);
  });
});
