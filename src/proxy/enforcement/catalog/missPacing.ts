/**
 * How often one session's statements may have the catalog read again because they name a
 * relation, function or operator the last reading does not know. A few such readings come at once
 * (another session, or the DBA, just created the name); past that burst the session's next one
 * waits its turn, one per interval. The statement still waits for a newer reading before it is
 * decided (nothing is trusted missing without one): only this session is slowed, and a client
 * naming new names in a loop (`SELECT nosuch_1(phone)`, `nosuch_2`, …) no longer keeps the reader
 * busy. Readings stay shared and spaced per database (DatabaseCatalog).
 */

/** Readings a session's misses may ask for at once. */
const MISS_BURST = 8;
/** Past the burst, one reading per this many milliseconds. */
const MISS_INTERVAL_MS = 2_000;

export class SessionMissPacing {
  /** When the session's next miss would be due were there no burst (a virtual schedule). */
  private due = 0;

  constructor(private readonly burst = MISS_BURST, private readonly intervalMs = MISS_INTERVAL_MS) {}

  /** Milliseconds the miss seen `now` waits before it may have the catalog read (0: at once); books its turn. */
  delayFor(now: number): number {
    const start = Math.max(now, this.due - (this.burst - 1) * this.intervalMs);
    this.due = Math.max(this.due, now) + this.intervalMs;
    return start - now;
  }
}
