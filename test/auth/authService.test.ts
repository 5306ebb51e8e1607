import { beforeEach, describe, expect, it } from 'vitest';
import type { AccountAuthenticator } from '../../src/auth/accountAuthenticator.js';
import { createAccountAuthenticator } from '../../src/auth/authService.js';
import { AccountStore } from '../../src/auth/accountStore.js';
import { generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { AuthError } from '../../src/auth/authErrors.js';
import { AuthService } from '../../src/auth/authService.js';
import { hashPassword } from '../../src/auth/passwordHash.js';
import type { AccountConfig } from '../../src/config/configTypes.js';
import { Keyring } from '../../src/keys/keyring.js';

const keyring = new Keyring([{ version: 1, key: Buffer.alloc(32, 9) }]);
const rate = { maxFailuresPerAccount: 2, maxFailuresPerClient: 4, windowSeconds: 60 };
let now = 0;
let alice: AccountConfig;
const apiKey = generateApiKey();

beforeEach(async () => {
  now = Date.UTC(2026, 0, 1);
  alice = { email: 'alice@example.com', passwordHash: await hashPassword('alice-pw', 4), apiKeyHash: hashApiKey(apiKey), roles: ['analyst'], enabled: true };
});

function service(accounts: AccountConfig[] | AccountStore = [alice]): AuthService {
  return new AuthService({ accounts, keyring, clock: () => now, loginRateLimit: rate });
}

describe('AuthService.login and authenticateRequest', () => {
  it('logs in and authenticates the three headers', async () => {
    const auth = service();
    const { jwtToken, svcToken, account } = await auth.login('Alice@Example.com', 'alice-pw');
    expect(account).toEqual({ email: 'alice@example.com', roles: ['analyst'] });
    await expect(auth.authenticateRequest({ apiKey, authorization: `Bearer ${jwtToken}`, svcToken })).resolves.toEqual(account);
    await expect(auth.authenticateRequest({ apiKey, authorization: jwtToken, svcToken })).resolves.toEqual(account);
  });

  it('takes the roles from the configuration, not from the token', async () => {
    const store = new AccountStore([alice]);
    const auth = service(store);
    const { jwtToken, svcToken } = await auth.login(alice.email, 'alice-pw');
    store.replaceAll([{ ...alice, roles: ['admin'] }]);
    await expect(auth.authenticateRequest({ apiKey, authorization: jwtToken, svcToken })).resolves.toEqual({ email: alice.email, roles: ['admin'] });
  });

  it('rate-limits with 429 and lets the account in again after the window', async () => {
    const auth = service();
    await expect(auth.login(alice.email, 'x')).rejects.toMatchObject({ statusCode: 401 });
    await expect(auth.login(alice.email, 'y')).rejects.toMatchObject({ statusCode: 401 });
    const limited = await auth.login(alice.email, 'alice-pw').catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(AuthError);
    expect((limited as AuthError).statusCode).toBe(429);
    expect((limited as AuthError).retryAfterSeconds).toBe(60);
    now += 60_000;
    await expect(auth.login(alice.email, 'alice-pw')).resolves.toBeDefined();
  });
});

describe('AccountAuthenticator (the proxy view)', () => {
  let auth: AccountAuthenticator;
  let store: AccountStore;
  beforeEach(() => {
    store = new AccountStore([alice]);
    auth = createAccountAuthenticator({ accounts: store, keyring, clock: () => now, loginRateLimit: rate });
  });

  it('accepts an unexpired svc_token of the account', async () => {
    const { svcToken } = await (auth as AuthService).login(alice.email, 'alice-pw');
    await expect(auth.authenticateDbUser('alice@example.com', svcToken)).resolves.toEqual({ email: alice.email, roles: ['analyst'] });
    await expect(auth.authenticateDbUser('bob@example.com', svcToken)).resolves.toBeNull();
    now += 24 * 3600 * 1000;
    await expect(auth.authenticateDbUser('alice@example.com', svcToken)).resolves.toBeNull();
  });

  it('accepts the account password, under the login rate limit', async () => {
    await expect(auth.authenticateDbUser('ALICE@example.com', 'alice-pw')).resolves.toEqual({ email: alice.email, roles: ['analyst'] });
    await expect(auth.authenticateDbUser(alice.email, 'wrong', '10.0.0.1')).resolves.toBeNull();
    await expect(auth.authenticateDbUser(alice.email, 'wrong', '10.0.0.1')).resolves.toBeNull();
    // Throttled from that address: said as such, not as a wrong password…
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw', '10.0.0.1')).rejects.toMatchObject({ failure: 'rate_limited' });
    // …while the owner, from another address, still gets in.
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw', '10.0.0.2')).resolves.toEqual({ email: alice.email, roles: ['analyst'] });
  });

  it('refuses disabled and removed accounts, token or password', async () => {
    const { svcToken } = await (auth as AuthService).login(alice.email, 'alice-pw');
    store.replaceAll([{ ...alice, enabled: false }]);
    await expect(auth.authenticateDbUser(alice.email, svcToken, '10.0.0.1')).resolves.toBeNull();
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw', '10.0.0.2')).resolves.toBeNull();
    store.replaceAll([]);
    await expect(auth.authenticateDbUser(alice.email, svcToken, '10.0.0.3')).resolves.toBeNull();
  });

  it('says a login no longer holds once its account is disabled, removed, or given other roles or another password', async () => {
    const { svcToken } = await (auth as AuthService).login(alice.email, 'alice-pw');
    const changed = [
      { ...alice, enabled: false }, { ...alice, roles: ['support'] }, { ...alice, roles: ['analyst', 'app'] },
      { ...alice, passwordHash: await hashPassword('new-pw', 4) },
    ];
    for (const next of [...changed, undefined]) {
      store.replaceAll([alice]);
      const logins = [await auth.authenticateDbUser(alice.email, svcToken), await auth.authenticateDbUser(alice.email, 'alice-pw')];
      let told = 0;
      const stop = auth.onAccountsChanged(() => { told++; });
      // A reload that changes nothing of it (another object, the same entry) keeps it.
      store.replaceAll([{ ...alice, roles: [...alice.roles] }]);
      for (const login of logins) expect(login !== null && auth.stillAuthorises(login)).toBe(true);
      store.replaceAll(next === undefined ? [] : [next]);
      for (const login of logins) expect(login !== null && auth.stillAuthorises(login)).toBe(false);
      stop();
      store.replaceAll([alice]);
      expect(told).toBe(2);
    }
    // An account this service never granted holds nothing.
    expect(auth.stillAuthorises({ email: alice.email, roles: ['analyst'] })).toBe(false);
  });

  it('counts a forged token as a failed attempt', async () => {
    const forged = `svc1.1.${'A'.repeat(22)}.${Math.floor(now / 1000) + 3600}.${'B'.repeat(43)}`;
    await expect(auth.authenticateDbUser(alice.email, forged)).resolves.toBeNull();
    await expect(auth.authenticateDbUser(alice.email, forged)).resolves.toBeNull();
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).rejects.toMatchObject({ failure: 'rate_limited' });
  });
});
