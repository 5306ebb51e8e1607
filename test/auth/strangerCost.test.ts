/**
 * A login for an unknown email must take as long as one for a real account. Checked always at the
 * highest cost among the accounts, an account hashed at a lower cost answered faster than any
 * unknown email, which told its email apart. Now an unknown email is checked at the cost of one
 * account, chosen by a keyed hash of the email: the same cost each time, the accounts' costs in
 * their proportions, unpredictable without the key.
 */
import { describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/authService.js';
import { hashApiKey, generateApiKey } from '../../src/auth/apiKey.js';
import { hashPassword, parseScryptHash, verifyPassword } from '../../src/auth/passwordHash.js';
import type { AccountConfig } from '../../src/config/configTypes.js';
import { Keyring } from '../../src/keys/index.js';

const rate = { maxFailuresPerAccount: 1_000_000, maxFailuresPerClient: 1_000_000, windowSeconds: 60 };

async function account(email: string, logN: number): Promise<AccountConfig> {
  return { email, passwordHash: await hashPassword('right-password', logN), apiKeyHash: hashApiKey(generateApiKey()), roles: ['app'], enabled: true };
}

/** The service, and the cost of the hash each password check ran against. */
async function service(key: number): Promise<{ auth: AuthService; costs: number[] }> {
  const accounts = [await account('a@example.com', 4), await account('b@example.com', 4), await account('c@example.com', 4), await account('d@example.com', 6)];
  const costs: number[] = [];
  const auth = new AuthService({
    accounts, keyring: new Keyring([{ version: 1, key: Buffer.alloc(32, key) }]), loginRateLimit: rate,
    verifyPassword: (password, hash) => {
      costs.push(parseScryptHash(hash)?.logN ?? -1);
      return verifyPassword(password, hash);
    },
  });
  return { auth, costs };
}

const strangers = Array.from({ length: 200 }, (_, i) => `nobody-${i}@example.com`);

async function costsOf(auth: AuthService, costs: number[], emails: readonly string[]): Promise<number[]> {
  costs.length = 0;
  for (const email of emails) await expect(auth.login(email, 'wrong-password')).rejects.toMatchObject({ failure: 'unauthorized' });
  return [...costs];
}

describe('the cost of checking a login for an unknown email', () => {
  it('is the cost of some account, in the proportions of the accounts\' costs (here three at 2^4, one at 2^6)', async () => {
    const { auth, costs } = await service(9);
    const seen = await costsOf(auth, costs, strangers);
    expect(new Set(seen)).toEqual(new Set([4, 6]));
    const high = seen.filter((cost) => cost === 6).length / seen.length;
    expect(high).toBeGreaterThan(0.12);
    expect(high).toBeLessThan(0.4);
  });

  it('is the same for an email every time, and depends on the key', async () => {
    const { auth, costs } = await service(9);
    const first = await costsOf(auth, costs, strangers);
    expect(await costsOf(auth, costs, strangers)).toEqual(first);
    const other = await service(10);
    expect(await costsOf(other.auth, other.costs, strangers)).not.toEqual(first);
  });

  it('leaves real accounts at their own cost', async () => {
    const { auth, costs } = await service(9);
    expect(await costsOf(auth, costs, ['a@example.com', 'd@example.com'])).toEqual([4, 6]);
  });
});
