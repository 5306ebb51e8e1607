import { describe, expect, it } from 'vitest';
import { apiKeyMatches, generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { DEFAULT_SCRYPT_LOG_N, generatePassword, hashPassword, parseScryptHash, verifyPassword } from '../../src/auth/passwordHash.js';

describe('password hashes (scrypt)', () => {
  it('verifies the right password only', async () => {
    const hash = await hashPassword('correct horse', 4);
    expect(hash).toMatch(/^\$scrypt\$ln=4,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same', 4)).not.toBe(await hashPassword('same', 4));
  });

  // The one test that pays the default cost (some 0.7 s per hash or check on a slow machine).
  it('uses N = 2^17, r = 8, p = 1 by default', async () => {
    expect(DEFAULT_SCRYPT_LOG_N).toBe(17);
    const hash = await hashPassword('pw');
    expect(hash.startsWith('$scrypt$ln=17,r=8,p=1$')).toBe(true);
    expect(await verifyPassword('pw', hash)).toBe(true);
  }, 20_000);

  it('still verifies hashes made with another cost, read from the hash', async () => {
    const older = await hashPassword('pw', 5);
    expect(older.startsWith('$scrypt$ln=5,r=8,p=1$')).toBe(true);
    expect(await verifyPassword('pw', older)).toBe(true);
    expect(await verifyPassword('pw2', older)).toBe(false);
  });

  it('treats malformed or unbounded hashes as a mismatch', async () => {
    expect(await verifyPassword('pw', 'plaintext')).toBe(false);
    expect(await verifyPassword('pw', '$argon2id$v=19$m=65536,t=3,p=4$abc$def')).toBe(false);
    const huge = (await hashPassword('pw', 4)).replace('ln=4', 'ln=40');
    expect(parseScryptHash(huge)).toBeNull();
    expect(await verifyPassword('pw', huge)).toBe(false);
  });

  it('normalises Unicode (NFC) so the same password typed two ways matches', async () => {
    const hash = await hashPassword('caf\u00e9', 4);
    expect(await verifyPassword('cafe\u0301', hash)).toBe(true);
  });

  it('generates 128-bit passwords', () => {
    const p = generatePassword();
    expect(Buffer.from(p, 'base64url')).toHaveLength(16);
    expect(generatePassword()).not.toBe(p);
  });
});

describe('API keys', () => {
  it('stores a SHA-256 hash and matches only the key', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^pgv_[A-Za-z0-9_-]{43}$/);
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^\$sha256\$[A-Za-z0-9+/]{43}$/);
    expect(hash).not.toContain(key.slice(4));
    expect(apiKeyMatches(key, hash)).toBe(true);
    expect(apiKeyMatches(`${key}x`, hash)).toBe(false);
    expect(apiKeyMatches(generateApiKey(), hash)).toBe(false);
    expect(apiKeyMatches(key, 'garbage')).toBe(false);
  });
});
