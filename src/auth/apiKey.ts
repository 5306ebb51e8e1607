import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_HASH_PATTERN } from '../config/index.js';

const PREFIX = 'pgv_';

/**
 * API keys are 256 random bits, so a single SHA-256 is a sound way to store them (no dictionary
 * to defend against) and cheap enough to check on every request.
 */
export function generateApiKey(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

function digest(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey, 'utf8').digest();
}

export function hashApiKey(apiKey: string): string {
  return `$sha256$${digest(apiKey).toString('base64').replace(/=+$/, '')}`;
}

/** Constant-time comparison of a presented key with a stored hash. */
export function apiKeyMatches(apiKey: string, storedHash: string): boolean {
  const m = API_KEY_HASH_PATTERN.exec(storedHash);
  if (!m) return false;
  const expected = Buffer.from(m[1] ?? '', 'base64');
  const actual = digest(apiKey);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
