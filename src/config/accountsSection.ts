import type { ConfigReader, KeyPath } from './configReader.js';
import type { AccountConfig } from './configTypes.js';

/** scrypt in PHC form: $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt base64>$<hash base64>. */
export const SCRYPT_HASH_PATTERN = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{16,88})\$([A-Za-z0-9+/]{43,88})$/;
/** Bounds on scrypt costs read from a file: a typo such as ln=40 must not exhaust memory. */
export const SCRYPT_BOUNDS = { maxLogN: 20, maxR: 32, maxP: 16 } as const;
/** SHA-256 of a high-entropy generated API key, base64 without padding. */
export const API_KEY_HASH_PATTERN = /^\$sha256\$([A-Za-z0-9+/]{43})$/;

const ACCOUNT_KEYS = ['email', 'passwordHash', 'apiKeyHash', 'roles', 'enabled'] as const;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** What a role name may look like (accounts and policies share it). */
export const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Whether a passwordHash is a well-formed scrypt string with bounded costs. */
export function isScryptHash(phc: string): boolean {
  const m = SCRYPT_HASH_PATTERN.exec(phc);
  if (!m) return false;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return logN >= 1 && logN <= SCRYPT_BOUNDS.maxLogN && r >= 1 && r <= SCRYPT_BOUNDS.maxR
    && p >= 1 && p <= SCRYPT_BOUNDS.maxP;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Accounts as stored in the file: only hashes of their secrets, never the secrets. */
export function readAccountsSection(r: ConfigReader, value: unknown): AccountConfig[] {
  const path: KeyPath = ['accounts'];
  const list = r.list(value, path) ?? [];
  const accounts: AccountConfig[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const ip: KeyPath = [...path, i];
    const a = r.map(item, ip, ACCOUNT_KEYS);
    if (!a) return;
    const rawEmail = r.string(a, 'email', ip, { required: true });
    const passwordHash = r.string(a, 'passwordHash', ip, { required: true });
    const apiKeyHash = r.string(a, 'apiKeyHash', ip, { required: true });
    const enabled = r.boolean(a, 'enabled', ip, true);
    let ok = rawEmail !== undefined && passwordHash !== undefined && apiKeyHash !== undefined;

    const email = rawEmail === undefined ? '' : normaliseEmail(rawEmail);
    if (rawEmail !== undefined && !EMAIL.test(email)) {
      r.issue([...ip, 'email'], 'must be an email address (name@domain)');
      ok = false;
    } else if (rawEmail !== undefined && seen.has(email)) {
      r.issue([...ip, 'email'], 'this email is already used by an earlier account');
      ok = false;
    }
    seen.add(email);
    if (passwordHash !== undefined && !isScryptHash(passwordHash)) {
      r.issue([...ip, 'passwordHash'],
        `must be a scrypt hash ($scrypt$ln=..,r=..,p=..$salt$hash, ln at most ${SCRYPT_BOUNDS.maxLogN}); `
          + '`pgveil account add` writes one');
      ok = false;
    }
    if (apiKeyHash !== undefined && !API_KEY_HASH_PATTERN.test(apiKeyHash)) {
      r.issue([...ip, 'apiKeyHash'], 'must be a $sha256$ hash of an API key; `pgveil account add` writes one');
      ok = false;
    }
    const roles: string[] = [];
    const rawRoles = r.list(a['roles'], [...ip, 'roles']) ?? [];
    rawRoles.forEach((role, j) => {
      if (typeof role !== 'string' || !ROLE_NAME.test(role)) {
        r.issue([...ip, 'roles', j], 'must be a role name (1-64 letters, digits, _ . : -)');
        ok = false;
      } else if (!roles.includes(role)) {
        roles.push(role);
      }
    });
    if (ok && passwordHash !== undefined && apiKeyHash !== undefined) {
      accounts.push({ email, passwordHash, apiKeyHash, roles, enabled });
    }
  });
  return accounts;
}
