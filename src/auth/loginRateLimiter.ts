import type { LoginRateLimit } from '../config/configTypes.js';
import type { Clock } from './clock.js';

interface Window {
  failures: number;
  resetsAt: number;
}

export type RateDecision = { limited: false } | { limited: true; retryAfterSeconds: number };

/** Keeps memory bounded whatever number of emails or addresses an attacker tries. */
const MAX_TRACKED = 100_000;

/**
 * Counts failed logins per account and per client address in fixed windows. Once a count reaches
 * its limit, further attempts are refused (429) without checking the password, until the window
 * ends. Per instance: with N instances an attacker gets at most N times the budget.
 */
export class LoginRateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly settings: LoginRateLimit, private readonly clock: Clock) {}

  private current(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    if (w && w.resetsAt <= now) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private keys(account: string, client: string | undefined): [string, number][] {
    const out: [string, number][] = [[`a:${account}`, this.settings.maxFailuresPerAccount]];
    if (client !== undefined) out.push([`c:${client}`, this.settings.maxFailuresPerClient]);
    return out;
  }

  check(account: string, client?: string): RateDecision {
    const now = this.clock();
    let retryAt = 0;
    for (const [key, max] of this.keys(account, client)) {
      const w = this.current(key, now);
      if (w && w.failures >= max) retryAt = Math.max(retryAt, w.resetsAt);
    }
    if (retryAt === 0) return { limited: false };
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now) / 1000)) };
  }

  recordFailure(account: string, client?: string): void {
    const now = this.clock();
    if (this.windows.size >= MAX_TRACKED) this.prune(now);
    for (const [key] of this.keys(account, client)) {
      const w = this.current(key, now);
      if (w) w.failures++;
      else this.windows.set(key, { failures: 1, resetsAt: now + this.settings.windowSeconds * 1000 });
    }
  }

  /** A correct password clears the account's count (not the address's). */
  recordSuccess(account: string): void {
    this.windows.delete(`a:${account}`);
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (w.resetsAt <= now) this.windows.delete(key);
    // Still full: drop the oldest entries (Map keeps insertion order).
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED * 0.9) break;
      this.windows.delete(key);
    }
  }
}
