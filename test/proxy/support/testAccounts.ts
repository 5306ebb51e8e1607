/**
 * Accounts for proxy tests, checked by the real AccountAuthenticator (auth/): the proxy accepts an
 * account's password or a svc_token from its login. Password hashes use a low scrypt cost so that
 * the many connections of the tests stay fast.
 */
import type { AccountAuthenticator } from '../../../src/auth/accountAuthenticator.js';
import { createAccountAuthenticator } from '../../../src/auth/authService.js';
import { generateApiKey, hashApiKey } from '../../../src/auth/apiKey.js';
import { hashPassword } from '../../../src/auth/passwordHash.js';
import { Keyring } from '../../../src/keys/keyring.js';

export interface TestAccount {
  email: string;
  password: string;
  roles: string[];
}

export const ANALYST: TestAccount = { email: 'analyst@example.com', password: 'analyst-password', roles: ['analyst'] };
export const ADMIN: TestAccount = { email: 'admin@example.com', password: 'admin-password', roles: ['admin'] };

type Service = ReturnType<typeof createAccountAuthenticator>;

let shared: Promise<Service> | null = null;

/** An authenticator over ANALYST and ADMIN; `clock` (milliseconds) lets a test move time on. */
export async function accountService(clock?: () => number): Promise<Service> {
  const accounts = await Promise.all([ANALYST, ADMIN].map(async (account) => ({
    email: account.email,
    passwordHash: await hashPassword(account.password, 4),
    apiKeyHash: hashApiKey(generateApiKey()),
    roles: account.roles,
    enabled: true,
  })));
  return createAccountAuthenticator({
    accounts,
    keyring: new Keyring([{ version: 1, key: Buffer.alloc(32, 7) }]),
    ...(clock ? { clock } : {}),
    // Tests fail logins on purpose; they must not lock the accounts for the tests after them.
    loginRateLimit: { maxFailuresPerAccount: 1_000, maxFailuresPerClient: 1_000, windowSeconds: 60 },
  });
}

function service(): Promise<Service> {
  shared ??= accountService();
  return shared;
}

export async function testAuthenticator(): Promise<AccountAuthenticator> {
  return service();
}

/** A svc_token from `POST /auth/login`'s implementation, for logging in to the proxy with it. */
export async function svcTokenFor(account: TestAccount): Promise<string> {
  return (await (await service()).login(account.email, account.password)).svcToken;
}
