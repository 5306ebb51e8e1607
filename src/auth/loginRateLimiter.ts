import type { LoginRateLimit } from '../config/index.js';
import type { Clock } from './clock.js';

interface Window {
  failures: number;
  resetsAt: number;
  /** How many times this key was locked in a row: each lock lasts twice the one before. */
  strikes: number;
}

export type RateDecision = { limited: false } | { limited: true; retryAfterSeconds: number };

/** One counted login (a wrong password, or a right one that clears its count), as shared between processes. */
export interface CountedLogin {
  readonly outcome: 'failure' | 'success';
  /** The normalised email. */
  readonly account: string;
  readonly client?: string;
}

/** Keeps memory bounded whatever number of emails or addresses an attacker tries. */
const MAX_TRACKED = 100_000;
/** The longest a key stays locked, however often it was locked before. */
const MAX_LOCK_MS = 24 * 3600 * 1000;

/**
 * Counts failed logins per (account, client address) and per client address, in windows. Once a
 * count reaches its limit, further attempts from there are refused (429, or the proxy's "too many
 * failed logins") without checking the password, for a lock that doubles each time the same key is
 * locked again (backoff). An account is never locked for everyone: the right password from another
 * address still works, so wrong guesses cannot deny service to its owner. Per instance: the
 * processes of one instance pass their counted logins to each other (`onCounted`, `applyShared`);
 * with N instances an attacker gets at most N times the budget.
 */
export class LoginRateLimiter {
  private readonly windows = new Map<string, Window>();
  /**
   * Password checks under way, by client key. They count with the failures: otherwise a burst of
   * guesses sent at once would all pass `check` before the first of them failed.
   */
  private readonly inFlight = new Map<string, number>();
  private sharer: ((login: CountedLogin) => void) | undefined;

  constructor(private readonly settings: LoginRateLimit, private readonly clock: Clock) {}

  private current(key: string, max: number, now: number): Window | undefined {
    const w = this.windows.get(key);
    if (w === undefined || w.resetsAt > now) return w;
    if (w.failures >= max && now - w.resetsAt < this.lockMs(w.strikes)) {
      // A lock just ended: a fresh count, but the next lock lasts longer.
      w.failures = 0;
      w.resetsAt = now + this.settings.windowSeconds * 1000;
      return w;
    }
    this.windows.delete(key);
    return undefined;
  }

  private lockMs(strikes: number): number {
    return Math.min(MAX_LOCK_MS, this.settings.windowSeconds * 1000 * 2 ** Math.max(0, strikes - 1));
  }

  private keys(account: string, client: string | undefined): [string, number][] {
    const out: [string, number][] = [[`a:${account}\u0000${client ?? ''}`, this.settings.maxFailuresPerAccount]];
    if (client !== undefined) out.push([`c:${client}`, this.settings.maxFailuresPerClient]);
    return out;
  }

  check(account: string, client?: string): RateDecision {
    const now = this.clock();
    let retryAt = 0;
    for (const [key, max] of this.keys(account, client)) {
      const w = this.current(key, max, now);
      if (w && w.failures >= max) retryAt = Math.max(retryAt, w.resetsAt);
      // Checks under way could each fail: refuse until they are done (a second, as a rule).
      else if ((w?.failures ?? 0) + (this.inFlight.get(key) ?? 0) >= max) retryAt = Math.max(retryAt, now + 1000);
    }
    if (retryAt === 0) return { limited: false };
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now) / 1000)) };
  }

  /**
   * A password check of this client begins (after `check` let it through): it counts against the
   * client's limit until `end`. The caller runs one check at a time per account and client, so
   * only the client's count (checks of several accounts at once) needs this.
   */
  begin(client?: string): void {
    if (client === undefined) return;
    const key = `c:${client}`;
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
  }

  end(client?: string): void {
    if (client === undefined) return;
    const key = `c:${client}`;
    const n = (this.inFlight.get(key) ?? 0) - 1;
    if (n > 0) this.inFlight.set(key, n);
    else this.inFlight.delete(key);
  }

  /** Tells `sharer` of every login this limiter counts itself (not of those applied from elsewhere). */
  onCounted(sharer: (login: CountedLogin) => void): void {
    this.sharer = sharer;
  }

  /** Counts a login that another process of this instance counted. */
  applyShared(login: CountedLogin): void {
    if (login.outcome === 'failure') this.countFailure(login.account, login.client);
    else this.clearAccount(login.account, login.client);
  }

  recordFailure(account: string, client?: string): void {
    this.countFailure(account, client);
    this.sharer?.({ outcome: 'failure', account, ...(client === undefined ? {} : { client }) });
  }

  /** A correct password clears the count of that account from that address (not the address's own). */
  recordSuccess(account: string, client?: string): void {
    this.clearAccount(account, client);
    this.sharer?.({ outcome: 'success', account, ...(client === undefined ? {} : { client }) });
  }

  private countFailure(account: string, client: string | undefined): void {
    const now = this.clock();
    if (this.windows.size >= MAX_TRACKED) this.prune(now);
    for (const [key, max] of this.keys(account, client)) {
      let w = this.current(key, max, now);
      if (w === undefined) {
        w = { failures: 0, resetsAt: now + this.settings.windowSeconds * 1000, strikes: 0 };
        this.windows.set(key, w);
      }
      w.failures++;
      if (w.failures === max) {
        w.strikes++;
        w.resetsAt = now + this.lockMs(w.strikes);
      }
    }
  }

  private clearAccount(account: string, client: string | undefined): void {
    this.windows.delete(this.keys(account, client)[0]?.[0] ?? '');
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (w.resetsAt + this.lockMs(w.strikes) <= now) this.windows.delete(key);
    // Still full: drop the oldest entries (Map keeps insertion order).
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED * 0.9) break;
      this.windows.delete(key);
    }
  }
}
