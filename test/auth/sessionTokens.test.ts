import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/auth/authErrors.js';
import { SessionTokens, TOKEN_LIFETIME_SECONDS } from '../../src/auth/sessionTokens.js';
import type { AccountConfig } from '../../src/config/configTypes.js';
import { Keyring } from '../../src/keys/keyring.js';

const key1 = Buffer.alloc(32, 1);
const key2 = Buffer.alloc(32, 2);
const account: AccountConfig = {
  email: 'alice@example.com', passwordHash: '$scrypt$ln=4,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  apiKeyHash: '$sha256$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', roles: ['analyst'], enabled: true,
};

function setup(keys = [{ version: 1, key: key1 }], current?: number) {
  let now = Date.UTC(2026, 0, 1);
  const tokens = new SessionTokens(new Keyring(keys, current), () => now);
  return { tokens, advance: (ms: number) => { now += ms; } };
}

describe('SessionTokens', () => {
  it('issues a JWT and an svc_token of the same login', async () => {
    const { tokens } = setup();
    const issued = await tokens.issue(account);
    const claims = await tokens.verifyJwt(issued.jwtToken);
    expect(claims).toMatchObject({ email: account.email, roles: ['analyst'], keyVersion: 1 });
    expect(claims.expiresAt - claims.issuedAt).toBe(TOKEN_LIFETIME_SECONDS);
    expect(tokens.svcMatchesJwt(issued.svcToken, claims, account)).toBe(true);
    expect(tokens.verifySvc(issued.svcToken, account)).toBe('valid');
  });

  it('expires both after exactly 24 hours', async () => {
    const { tokens, advance } = setup();
    const issued = await tokens.issue(account);
    advance(TOKEN_LIFETIME_SECONDS * 1000 - 1000);
    await expect(tokens.verifyJwt(issued.jwtToken)).resolves.toBeDefined();
    expect(tokens.verifySvc(issued.svcToken, account)).toBe('valid');
    advance(1000);
    await expect(tokens.verifyJwt(issued.jwtToken)).rejects.toThrow(AuthError);
    expect(tokens.verifySvc(issued.svcToken, account)).toBe('expired');
  });

  it('binds the svc_token to the JWT, the account and its password hash', async () => {
    const { tokens } = setup();
    const one = await tokens.issue(account);
    const two = await tokens.issue(account);
    const claims = await tokens.verifyJwt(one.jwtToken);
    expect(tokens.svcMatchesJwt(two.svcToken, claims, account)).toBe(false);
    const bob = { ...account, email: 'bob@example.com' };
    expect(tokens.verifySvc(one.svcToken, bob)).toBe('invalid');
    expect(tokens.verifySvc(one.svcToken, { ...account, passwordHash: account.passwordHash.replace(/A$/, 'B') })).toBe('invalid');
    // Changing the expiry in the token breaks its MAC.
    const parts = one.svcToken.split('.');
    parts[3] = String(Number(parts[3]) + 86_400);
    expect(tokens.verifySvc(parts.join('.'), account)).toBe('invalid');
  });

  it('is accepted by another instance with the same keys, not with other keys', async () => {
    const a = setup().tokens;
    const b = setup().tokens;
    const c = setup([{ version: 1, key: key2 }]).tokens;
    const issued = await a.issue(account);
    await expect(b.verifyJwt(issued.jwtToken)).resolves.toMatchObject({ email: account.email });
    await expect(c.verifyJwt(issued.jwtToken)).rejects.toThrow('invalid credentials');
    expect(c.verifySvc(issued.svcToken, account)).toBe('invalid');
  });

  it('keeps accepting tokens of a previous key version after a rotation', async () => {
    const old = setup().tokens;
    const issued = await old.issue(account);
    const rotated = setup([{ version: 1, key: key1 }, { version: 2, key: key2 }], 2).tokens;
    await expect(rotated.verifyJwt(issued.jwtToken)).resolves.toMatchObject({ keyVersion: 1 });
    expect(rotated.verifySvc(issued.svcToken, account)).toBe('valid');
    const fresh = await rotated.issue(account);
    expect(fresh.svcToken.startsWith('svc1.2.')).toBe(true);
    await expect(old.verifyJwt(fresh.jwtToken)).rejects.toThrow(AuthError);
  });
});
