import { describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/auth/accountStore.js';
import { generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { hashPassword } from '../../src/auth/passwordHash.js';
import type { AccountConfig } from '../../src/config/configTypes.js';

async function account(email: string, logN: number): Promise<AccountConfig> {
  return { email, passwordHash: await hashPassword('pw', logN), apiKeyHash: hashApiKey(generateApiKey()), roles: [], enabled: true };
}

describe('AccountStore', () => {
  it('knows the highest scrypt cost of its accounts, for checking unknown emails at that cost', async () => {
    const store = new AccountStore();
    expect(store.highestScryptLogN).toBeUndefined();
    store.replaceAll([await account('a@example.com', 4), await account('b@example.com', 6), await account('c@example.com', 5)]);
    expect(store.highestScryptLogN).toBe(6);
    store.replaceAll([await account('a@example.com', 4)]);
    expect(store.highestScryptLogN).toBe(4);
  });

  it('tells its listeners after every replacement', async () => {
    const store = new AccountStore();
    let calls = 0;
    store.onReplace(() => { calls++; });
    store.replaceAll([await account('a@example.com', 4)]);
    store.replaceAll([]);
    expect(calls).toBe(2);
  });
});
