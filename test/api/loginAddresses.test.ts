/**
 * Login throttling against a client that changes its address: one IPv6 host owns a whole /64
 * (2^64 addresses) and may send each guess from another one. Every test asserts the safe outcome,
 * so a bypass shows as a failure.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/auth/accountStore.js';
import { AuthService } from '../../src/auth/authService.js';
import { throttledClient } from '../../src/auth/throttledClient.js';
import { Keyring } from '../../src/keys/keyring.js';
import { makeAccount, type TestAccount } from './support/apiHarness.js';

function serviceFor(accounts: readonly TestAccount[], checked: string[]): AuthService {
  return new AuthService({
    accounts: new AccountStore(accounts.map((a) => a.config)), keyring: new Keyring([{ version: 1, key: randomBytes(32) }]),
    loginRateLimit: { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 },
    verifyPassword: async (password) => { checked.push(password); return false; },
  });
}

async function guesses(auth: AuthService, email: string, addresses: readonly string[]): Promise<PromiseSettledResult<unknown>[]> {
  const outcomes: PromiseSettledResult<unknown>[] = [];
  // One after the other: every guess is counted before the next, as a patient attacker's are.
  for (const [i, address] of addresses.entries()) {
    outcomes.push(...await Promise.allSettled([auth.login(email, `guess-${i}`, address)]));
  }
  return outcomes;
}

describe('login throttling by client address', () => {
  it('guesses at one account from 40 addresses of one IPv6 /64 get no more password checks than the per-account limit', async () => {
    const alice = await makeAccount('alice@example.com');
    const checked: string[] = [];
    const auth = serviceFor([alice], checked);
    const addresses = Array.from({ length: 40 }, (_, i) => `2001:db8:1:2:${(i + 1).toString(16)}::7`);
    const outcomes = await guesses(auth, alice.email, addresses);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(outcomes.filter((o) => o.status === 'rejected' && (o.reason as { failure?: string }).failure === 'rate_limited').length).toBeGreaterThanOrEqual(35);
  });

  it('guesses at many accounts from one /64 stop at the per-address limit', async () => {
    const checked: string[] = [];
    const auth = serviceFor([await makeAccount('someone@example.com')], checked);
    for (let i = 0; i < 60; i++) {
      await Promise.allSettled([auth.login(`nobody${i}@example.com`, 'guess', `2001:db8:1:2::${(i + 1).toString(16)}`)]);
    }
    expect(checked.length).toBeLessThanOrEqual(20);
  });

  it('an IPv4 client seen through a dual-stack socket is the same client as without it', async () => {
    const alice = await makeAccount('alice@example.com');
    const checked: string[] = [];
    const auth = serviceFor([alice], checked);
    const spellings = ['10.0.0.66', '::ffff:10.0.0.66', '::FFFF:10.0.0.66', '0:0:0:0:0:ffff:a00:42'];
    await guesses(auth, alice.email, Array.from({ length: 12 }, (_, i) => spellings[i % spellings.length] as string));
    expect(checked.length).toBeLessThanOrEqual(5);
  });

  it('the owner logs in from another /64 while the attacker\'s is locked', async () => {
    const alice = await makeAccount('alice@example.com');
    const auth = new AuthService({
      accounts: new AccountStore([alice.config]), keyring: new Keyring([{ version: 1, key: randomBytes(32) }]),
      loginRateLimit: { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 },
    });
    await guesses(auth, alice.email, Array.from({ length: 10 }, (_, i) => `2001:db8:1:2::${i + 1}`));
    await expect(auth.login(alice.email, alice.password, '2001:db8:1:3::1')).resolves.toMatchObject({ account: { email: alice.email } });
  });

  it('client keys: IPv6 by its /64, IPv4 (mapped or not) by its address, anything else as given', () => {
    expect(throttledClient('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe(throttledClient('2001:DB8:1:2::1'));
    expect(throttledClient('2001:db8:1:2::1')).not.toBe(throttledClient('2001:db8:1:3::1'));
    expect(throttledClient('fe80::1%eth0')).toBe(throttledClient('fe80::2'));
    expect(throttledClient('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(throttledClient('::ffff:c000:201')).toBe('192.0.2.1');
    expect(throttledClient('192.0.2.1')).toBe('192.0.2.1');
    expect(throttledClient('::1')).toBe(throttledClient('0:0:0:0::1'));
    expect(throttledClient(undefined)).toBeUndefined();
    expect(throttledClient('not-an-address')).toBe('not-an-address');
  });
});
