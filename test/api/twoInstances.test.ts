import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { login, makeAccount, protect, startHarness, TestClock, type Harness, type TestAccount } from './support/apiHarness.js';

/** Stateless tokens: instances started with the same configuration and keys are interchangeable. */
let a: Harness;
let b: Harness;
let other: Harness;
let alice: TestAccount;

beforeAll(async () => {
  const masterKey = randomBytes(32);
  alice = await makeAccount('alice@example.com');
  const clock = new TestClock();
  a = await startHarness({ masterKey, accounts: [alice], clock });
  b = await startHarness({ masterKey, accounts: [alice], clock });
  other = await startHarness({ accounts: [alice], clock }); // same accounts, another master key
});
afterAll(async () => { await Promise.all([a.close(), b.close(), other.close()]); });

it('accepts tokens issued by the other instance, both ways', async () => {
  const fromA = await login(a.url, alice);
  const fromB = await login(b.url, alice);
  const body = { id: 1, operation: 'protect', data: ['123-45-6789'] };
  expect((await protect(b.url, fromA, 'ssn', body)).status).toBe(200);
  expect((await protect(a.url, fromB, 'ssn', body)).status).toBe(200);
});

it('unprotects on one instance what the other protected', async () => {
  const s = await login(a.url, alice);
  const p = await protect(a.url, s, 'ccn', { id: 1, operation: 'protect', data: ['4111 1111 1111 1111'], options: { scope: 'shop' } });
  const u = await protect(b.url, s, 'ccn', { id: 2, operation: 'unprotect', data: p.body['result'], options: { scope: 'shop' } });
  expect(u.body).toEqual({ operation: 'unprotect', result: ['4111 1111 1111 1111'] });
});

it('rejects tokens of an instance with other keys', async () => {
  const s = await login(a.url, alice);
  const r = await protect(other.url, s, 'ssn', { id: 1, operation: 'protect', data: ['123-45-6789'] });
  expect(r.status).toBe(401);
});
