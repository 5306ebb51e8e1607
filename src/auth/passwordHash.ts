import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { isScryptHash, SCRYPT_HASH_PATTERN } from '../config/index.js';

/**
 * N = 2^17, r = 8, p = 1, OWASP's current minimum for scrypt: 128 MiB and a fraction of a second
 * per check, so successful checks are reused for a while (VerifiedPasswords). Hashes made with
 * other costs keep verifying: the cost is read from each hash.
 */
export const DEFAULT_SCRYPT_LOG_N = 17;
const R = 8;
const P = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize('NFC'), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function b64(buf: Buffer): string {
  return buf.toString('base64').replace(/=+$/, '');
}

interface ScryptHash {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** Parses a PHC scrypt string; null when malformed or its cost is outside the allowed bounds. */
export function parseScryptHash(phc: string): ScryptHash | null {
  const m = SCRYPT_HASH_PATTERN.exec(phc);
  if (!m || !isScryptHash(phc)) return null;
  return { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]), salt: Buffer.from(m[4] ?? '', 'base64'), hash: Buffer.from(m[5] ?? '', 'base64') };
}

/** scrypt's working set (128·r·(N + p + 2) bytes) plus slack; Node refuses anything above 32 MiB unless told. */
function memoryFor(logN: number, r: number, p: number): number {
  return 128 * r * (2 ** logN + p + 2) + 1024 * 1024;
}

/** Hashes a password with a fresh salt. `logN` below the default is meant for tests only. */
export async function hashPassword(password: string, logN: number = DEFAULT_SCRYPT_LOG_N): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, HASH_BYTES, { N: 2 ** logN, r: R, p: P, maxmem: memoryFor(logN, R, P) });
  return `$scrypt$ln=${logN},r=${R},p=${P}$${b64(salt)}$${b64(hash)}`;
}

/** Constant-time check of a password against a PHC scrypt string; false for a malformed hash. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const parsed = parseScryptHash(phc);
  if (!parsed) return false;
  const { logN, r, p, salt, hash } = parsed;
  const candidate = await scrypt(password, salt, hash.length, { N: 2 ** logN, r, p, maxmem: memoryFor(logN, r, p) });
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}

/** A random password for a new account: 128 bits, URL-safe. */
export function generatePassword(): string {
  return randomBytes(16).toString('base64url');
}
