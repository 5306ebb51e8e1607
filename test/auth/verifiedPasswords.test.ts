import { beforeEach, describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/auth/accountStore.js';
import { generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { AuthService } from '../../src/auth/authService.js';
import { hashPassword, verifyPassword } from '../../src/auth/passwordHash.js';
import { VERIFIED_PASSWORD_LIFETIME_MS, VerifiedPasswords } from '../../src/auth/verifiedPasswords.js';
import type { AccountConfig } from '../../src/config/configTypes.js';
import { Keyring } from '../../src/keys/keyring.js';

const keyring = new Keyring([{ version: 1, key: Buffer.alloc(32, 9) }]);
const rate = { maxFailuresPerAccount: 10, maxFailuresPerClient: 50, windowSeconds: 60 };
let now = 0;
let alice: AccountConfig;
/** How many times scrypt ran. */
let scryptRuns = 0;
const countingVerify = async (password: string, phc: string): Promise<boolean> => {
  scryptRuns++;
  return verifyPassword(password, phc);
};

async function account(email: string, password: string, enabled = true): Promise<AccountConfig> {
  return { email, passwordHash: await hashPassword(password, 4), apiKeyHash: hashApiKey(generateApiKey()), roles: ['analyst'], enabled };
}

function service(store: AccountStore, verifiedPasswords?: { lifetimeMs?: number; maxEntries?: number }): AuthService {
  return new AuthService({ accounts: store, keyring, clock: () => now, loginRateLimit: rate, verifyPassword: countingVerify, verifiedPasswords });
}

beforeEach(async () => {
  now = Date.UTC(2026, 0, 1);
  scryptRuns = 0;
  alice = await account('alice@example.com', 'alice-pw');
});

describe('successful password checks are reused', () => {
  it('runs scrypt once for repeated logins, API and proxy alike', async () => {
    const auth = service(new AccountStore([alice]));
    await expect(auth.login(alice.email, 'alice-pw')).resolves.toBeDefined();
    expect(scryptRuns).toBe(1);
    await expect(auth.login('ALICE@example.com', 'alice-pw')).resolves.toBeDefined();
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw', '10.0.0.1')).resolves.toEqual({ email: alice.email, roles: ['analyst'] });
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw', '10.0.0.2')).resolves.not.toBeNull();
    expect(scryptRuns).toBe(1);
  });

  it('shares one scrypt run among concurrent logins (a pool opening)', async () => {
    const auth = service(new AccountStore([alice]));
    const results = await Promise.all(Array.from({ length: 8 }, () => auth.authenticateDbUser(alice.email, 'alice-pw')));
    expect(results.every((r) => r?.email === alice.email)).toBe(true);
    expect(scryptRuns).toBe(1);
  });

  it('never accepts a wrong password from the cache, and never caches a failure', async () => {
    const auth = service(new AccountStore([alice]));
    await auth.login(alice.email, 'alice-pw');
    for (const wrong of ['alice-pw ', 'Alice-pw', '', 'alice-p']) {
      await expect(auth.authenticateDbUser(alice.email, wrong)).resolves.toBeNull();
    }
    await expect(auth.login(alice.email, 'wrong')).rejects.toMatchObject({ statusCode: 401 });
    expect(scryptRuns).toBe(1 + 5);
    // The failures did not push the right password out.
    await expect(auth.login(alice.email, 'alice-pw')).resolves.toBeDefined();
    expect(scryptRuns).toBe(6);
  });

  it('does not let a cached password of one account log in another', async () => {
    const bob = await account('bob@example.com', 'bob-pw');
    const auth = service(new AccountStore([alice, bob]));
    await auth.login(alice.email, 'alice-pw');
    await expect(auth.authenticateDbUser(bob.email, 'alice-pw')).resolves.toBeNull();
  });

  it('checks again once the account gets a new hash, even of the same password', async () => {
    const store = new AccountStore([alice]);
    const auth = service(store);
    await auth.login(alice.email, 'alice-pw');
    store.replaceAll([{ ...alice, passwordHash: await hashPassword('alice-pw', 4) }]);
    await auth.login(alice.email, 'alice-pw');
    expect(scryptRuns).toBe(2);
    store.replaceAll([{ ...alice, passwordHash: await hashPassword('new-pw', 4) }]);
    await expect(auth.login(alice.email, 'alice-pw')).rejects.toMatchObject({ statusCode: 401 });
    await expect(auth.login(alice.email, 'new-pw')).resolves.toBeDefined();
    expect(scryptRuns).toBe(4);
  });

  it('forgets accounts that are disabled or removed, even when they come back unchanged', async () => {
    const store = new AccountStore([alice]);
    const auth = service(store);
    await auth.login(alice.email, 'alice-pw');
    store.replaceAll([{ ...alice, enabled: false }]);
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).resolves.toBeNull();
    store.replaceAll([alice]);
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).resolves.not.toBeNull();
    expect(scryptRuns).toBe(3);

    const bob = await account('bob@example.com', 'bob-pw');
    store.replaceAll([bob]);
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).resolves.toBeNull();
    store.replaceAll([alice, bob]);
    const before = scryptRuns;
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).resolves.not.toBeNull();
    expect(scryptRuns).toBe(before + 1);
  });

  it('keeps entries of accounts a reload leaves as they were', async () => {
    const bob = await account('bob@example.com', 'bob-pw');
    const store = new AccountStore([alice]);
    const auth = service(store);
    await auth.login(alice.email, 'alice-pw');
    store.replaceAll([{ ...alice, roles: ['admin'] }, bob]);
    await expect(auth.authenticateDbUser(alice.email, 'alice-pw')).resolves.toEqual({ email: alice.email, roles: ['admin'] });
    expect(scryptRuns).toBe(1);
  });

  it('checks again after the lifetime', async () => {
    const auth = service(new AccountStore([alice]));
    await auth.login(alice.email, 'alice-pw');
    now += VERIFIED_PASSWORD_LIFETIME_MS - 1;
    await auth.login(alice.email, 'alice-pw');
    expect(scryptRuns).toBe(1);
    now += 1;
    await auth.login(alice.email, 'alice-pw');
    expect(scryptRuns).toBe(2);
  });

  it('takes the lifetime from the options', async () => {
    const auth = service(new AccountStore([alice]), { lifetimeMs: 1000 });
    await auth.login(alice.email, 'alice-pw');
    now += 1000;
    await auth.login(alice.email, 'alice-pw');
    expect(scryptRuns).toBe(2);
  });

  it('still rate-limits an account whose password is cached', async () => {
    const auth = new AuthService({
      accounts: [alice], keyring, clock: () => now, verifyPassword: countingVerify,
      loginRateLimit: { maxFailuresPerAccount: 1, maxFailuresPerClient: 10, windowSeconds: 60 },
    });
    await auth.login(alice.email, 'alice-pw');
    await expect(auth.login(alice.email, 'wrong')).rejects.toMatchObject({ statusCode: 401 });
    await expect(auth.login(alice.email, 'alice-pw')).rejects.toMatchObject({ statusCode: 429 });
  });
});

describe('VerifiedPasswords', () => {
  it('holds at most maxEntries accounts, dropping the least recently used', async () => {
    const hashes = await Promise.all(['a', 'b', 'c'].map((p) => hashPassword(p, 4)));
    const [ha, hb, hc] = hashes as [string, string, string];
    const cache = new VerifiedPasswords({ verify: countingVerify, clock: () => now, maxEntries: 2 });
    await cache.verify('a@x', 'a', ha);
    await cache.verify('b@x', 'b', hb);
    await cache.verify('a@x', 'a', ha); // a is now the most recent
    expect(scryptRuns).toBe(2);
    await cache.verify('c@x', 'c', hc); // evicts b
    expect(cache.size).toBe(2);
    await cache.verify('a@x', 'a', ha);
    expect(scryptRuns).toBe(3);
    await cache.verify('b@x', 'b', hb);
    expect(scryptRuns).toBe(4);
  });

  it('does not reuse a success for another hash of the same account', async () => {
    const cache = new VerifiedPasswords({ verify: countingVerify, clock: () => now });
    const first = await hashPassword('pw', 4);
    const second = await hashPassword('pw', 4);
    expect(await cache.verify('a@x', 'pw', first)).toBe(true);
    expect(await cache.verify('a@x', 'pw', second)).toBe(true);
    expect(scryptRuns).toBe(2);
  });

  it('stores nothing for a check that a reload overtook', async () => {
    const hash = await hashPassword('pw', 4);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const slow = async (password: string, phc: string): Promise<boolean> => {
      scryptRuns++;
      await gate;
      return verifyPassword(password, phc);
    };
    const cache = new VerifiedPasswords({ verify: slow, clock: () => now });
    const checking = cache.verify('a@x', 'pw', hash);
    cache.retain(() => undefined);
    release();
    expect(await checking).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('keeps neither the password nor its plain digests', async () => {
    const hash = await hashPassword('a-distinctive-password', 4);
    const cache = new VerifiedPasswords({ verify: countingVerify, clock: () => now });
    await cache.verify('a@x', 'a-distinctive-password', hash);
    const { createHash } = await import('node:crypto');
    const dump = JSON.stringify(cache, (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString('hex') : value instanceof Map ? [...value] : value));
    expect(dump).not.toContain('a-distinctive-password');
    for (const algorithm of ['sha256', 'sha1', 'md5']) {
      expect(dump).not.toContain(createHash(algorithm).update('a-distinctive-password').digest('hex'));
    }
  });
});
