import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { normaliseEmail } from '../config/index.js';
import { systemClock, type Clock } from './clock.js';
import { verifyPassword } from './passwordHash.js';

/** Checks a password against a PHC scrypt string (the expensive part this cache spares). */
export type PasswordVerifier = (password: string, phc: string) => Promise<boolean>;

/** How long a successful check is reused: long enough for pools to reconnect, short for a verifier held in memory. */
export const VERIFIED_PASSWORD_LIFETIME_MS = 5 * 60_000;
/** Bounds the memory an unbounded number of accounts could take; the least recently used go first. */
export const VERIFIED_PASSWORD_MAX_ENTRIES = 10_000;

export interface VerifiedPasswordsOptions {
  verify?: PasswordVerifier;
  clock?: Clock;
  lifetimeMs?: number;
  maxEntries?: number;
}

interface Entry {
  /** HMAC of (email, passwordHash, password) under the process key: neither the password nor a plain hash of it. */
  tag: Buffer;
  /** The account's hash the password was checked against (configuration data, not a secret of the client). */
  passwordHash: string;
  expiresAt: number;
}

interface Pending {
  tag: Buffer;
  passwordHash: string;
  result: Promise<boolean>;
}

/**
 * Successful password checks, kept for a few minutes so pools and reconnecting clients do not pay
 * scrypt on every connection (as PgBouncer keeps SCRAM keys). One entry per account, keyed by a
 * random per-process HMAC key, so a memory dump reveals no password and cannot be checked offline.
 * Only successes are stored; an entry counts only for the same account hash, and `retain` drops
 * entries of accounts that were removed, disabled or given a new hash. Concurrent checks of the
 * same password for the same account (a pool opening) share one scrypt run.
 */
export class VerifiedPasswords {
  private readonly key = randomBytes(32);
  private readonly verifier: PasswordVerifier;
  private readonly clock: Clock;
  private readonly lifetimeMs: number;
  private readonly maxEntries: number;
  /** By normalised email; Map order is the LRU order (oldest first). */
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Pending>();
  /** Bumped by `retain`, so a check that started before an account change stores nothing. */
  private epoch = 0;

  constructor(options: VerifiedPasswordsOptions = {}) {
    this.verifier = options.verify ?? verifyPassword;
    this.clock = options.clock ?? systemClock;
    this.lifetimeMs = options.lifetimeMs ?? VERIFIED_PASSWORD_LIFETIME_MS;
    this.maxEntries = Math.max(0, options.maxEntries ?? VERIFIED_PASSWORD_MAX_ENTRIES);
  }

  /** Whether `password` matches `passwordHash`, the current hash of the enabled account `email`. */
  async verify(email: string, password: string, passwordHash: string): Promise<boolean> {
    const id = normaliseEmail(email);
    const tag = this.tag(id, passwordHash, password);

    const entry = this.entries.get(id);
    if (entry) {
      if (entry.expiresAt <= this.clock() || entry.passwordHash !== passwordHash) {
        this.entries.delete(id);
      } else if (timingSafeEqual(entry.tag, tag)) {
        this.entries.delete(id);
        this.entries.set(id, entry);
        return true;
      }
    }

    const inFlight = this.pending.get(id);
    if (inFlight && inFlight.passwordHash === passwordHash && timingSafeEqual(inFlight.tag, tag)) return inFlight.result;

    const epoch = this.epoch;
    const result = this.verifier(password, passwordHash);
    const own: Pending = { tag, passwordHash, result };
    if (!inFlight) this.pending.set(id, own);
    try {
      const ok = await result;
      if (ok && epoch === this.epoch) this.store(id, { tag, passwordHash, expiresAt: this.clock() + this.lifetimeMs });
      return ok;
    } finally {
      if (this.pending.get(id) === own) this.pending.delete(id);
    }
  }

  /** Keeps only the entries whose account still exists, is enabled and has the same hash. */
  retain(current: (email: string) => string | undefined): void {
    this.epoch++;
    for (const [id, entry] of this.entries) {
      if (current(id) !== entry.passwordHash) this.entries.delete(id);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private store(id: string, entry: Entry): void {
    if (this.maxEntries === 0) return;
    this.entries.delete(id);
    this.entries.set(id, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  private tag(id: string, passwordHash: string, password: string): Buffer {
    const mac = createHmac('sha256', this.key);
    // Length-prefixed, so no two different triples feed the same bytes.
    for (const part of [id, passwordHash, password.normalize('NFC')]) {
      const bytes = Buffer.from(part, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      mac.update(length).update(bytes);
    }
    return mac.digest();
  }
}
