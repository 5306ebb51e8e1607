import { describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/auth/accountStore.js';
import { generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { hashPassword } from '../../src/auth/passwordHash.js';
import type { AccountConfig } from '../../src/config/configTypes.js';

async function account(email: string, logN: number): Promise<AccountConfig> {
  return { email, passwordHash: await hashPassword('pw', logN), apiKeyHash: hashApiKey(generateApiKey()), roles: [], enabled: true };
}

describe('AccountStore', () => {
  it('gives an unknown email the cost of one account, in the proportions of the accounts\' costs', async () => {
    const store = new AccountStore();
    expect(store.strangerScryptLogN(0.5)).toBeUndefined();
    store.replaceAll([await account('a@example.com', 4), await account('b@example.com', 6), await account('c@example.com', 5), await account('d@example.com', 4)]);
    expect([0, 0.3, 0.49, 0.5, 0.74, 0.75, 0.999].map((pick) => store.strangerScryptLogN(pick))).toEqual([4, 4, 4, 5, 5, 6, 6]);
    store.replaceAll([await account('a@example.com', 4)]);
    expect(store.strangerScryptLogN(0.99)).toBe(4);
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
