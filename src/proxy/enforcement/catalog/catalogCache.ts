/**
 * The catalog of each upstream database, shared by every session on it: loaded on first use,
 * marked stale when a session runs DDL or the policies reload, and refreshed on a miss (an OID in
 * a RowDescription, a table name it does not know). Refreshes on misses are spaced by at least
 * `missIntervalMs` (a miss waits for the next one rather than trust an old snapshot), so a burst
 * of statements naming unknown relations costs one refresh, not one each. Every reading, on a miss
 * or after DDL, starts at least READ_GAP_FACTOR times the event loop's busy time during the last
 * reading after it ended: a client naming new names, or running DDL, in a loop keeps this process's
 * event loop (which parses the rows and builds the snapshot: hundreds of ms for a large catalog)
 * busy with readings a bounded share of the time, however large the catalog, while a small catalog
 * (under UNSPACED_BUSY_MS of work) lets a migration's DDL and the statements after it run at their own pace.
 */
import { performance } from 'node:perf_hooks';
import type { CatalogSnapshot } from './catalogSnapshot.js';
import type { CatalogLoader } from './upstreamCatalogReader.js';

/** How long a name or OID that a refresh did not find is taken as absent (no refresh for it). */
const CONFIRMED_MISSING_MS = 5_000;

/** The least gap between readings, in event-loop busy times of the last one (readings hold the loop at most 1/(1 + this) of the time). */
const READ_GAP_FACTOR = 4;
/** Busy time a reading may take with no gap after it: a small catalog's (a few ms) is no stall. */
const UNSPACED_BUSY_MS = 10;

const pause = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms)));

export class DatabaseCatalog {
  private snapshot: CatalogSnapshot | undefined;
  private loading: Promise<CatalogSnapshot> | undefined;
  private stale = true;
  private lastLoad = 0;
  private lastLoadStarted = 0;
  /** How long the event loop was busy while the last reading ran (ms): its work, and other sessions'. */
  private lastBusy = 0;
  private nextMissLoad: Promise<void> | undefined;
  /** Bumped on each new snapshot: part of the SQL analysis cache key. */
  generation = 0;
  /** Readings started so far (a snapshot's readSequence numbers its reading). */
  readsStarted = 0;
  /** Names and OIDs still unknown after a refresh made for them → when they were confirmed. */
  private readonly confirmedMissing = new Map<string, number>();

  constructor(
    readonly database: string,
    private readonly loader: CatalogLoader,
    private readonly missIntervalMs: number,
  ) {}

  /** The current snapshot, or undefined when a load must happen first (see `fresh`). */
  get current(): CatalogSnapshot | undefined {
    return this.stale ? undefined : this.snapshot;
  }

  /** The last snapshot read, stale or not (undefined before the first read). */
  get latest(): CatalogSnapshot | undefined {
    return this.snapshot;
  }

  markStale(): void {
    this.stale = true;
    this.confirmedMissing.clear();
  }

  /** True when `key` was looked for by a refresh lately: no new refresh for it yet. */
  recentlyConfirmedMissing(key: string): boolean {
    const at = this.confirmedMissing.get(key);
    if (at === undefined) return false;
    if (Date.now() - at < CONFIRMED_MISSING_MS) return true;
    this.confirmedMissing.delete(key);
    return false;
  }

  confirmMissing(keys: Iterable<string>): void {
    if (this.confirmedMissing.size > 10_000) this.confirmedMissing.clear();
    const now = Date.now();
    for (const key of keys) this.confirmedMissing.set(key, now);
  }

  /** A snapshot taken after the last `markStale()`. */
  fresh(): Promise<CatalogSnapshot> {
    if (!this.stale && this.snapshot !== undefined) return Promise.resolve(this.snapshot);
    return this.load();
  }

  /** Something was not found: a snapshot read after now (spaced from the last read). */
  async afterMiss(): Promise<CatalogSnapshot> {
    const missedAt = Date.now();
    if (this.loading) await this.loading.catch(() => undefined);
    if (this.snapshot !== undefined && !this.stale && this.lastLoadStarted >= missedAt) return this.snapshot;
    this.nextMissLoad ??= new Promise<void>((resolve) => {
      setTimeout(resolve, Math.max(0, this.lastLoad + this.missIntervalMs - Date.now()));
    }).then(() => {
      this.nextMissLoad = undefined;
    });
    await this.nextMissLoad;
    if (this.loading === undefined && this.lastLoadStarted < missedAt) this.stale = true;
    return this.fresh();
  }

  private load(): Promise<CatalogSnapshot> {
    if (this.loading) return this.loading;
    // Marked before the read starts: DDL committed during the read (or the gap before it) is seen by it or by the next.
    this.stale = false;
    const gap = this.lastBusy > UNSPACED_BUSY_MS ? READ_GAP_FACTOR * this.lastBusy : 0;
    const loading = pause(this.lastLoad + gap - Date.now()).then(() => {
      this.lastLoadStarted = Date.now();
      const readSequence = ++this.readsStarted;
      const utilisation = performance.eventLoopUtilization();
      return this.loader(this.database).then((read) => ({ read, readSequence, utilisation }));
    }).then(
      ({ read, readSequence, utilisation }) => {
        // Which sessions logged in before this reading started (their defaults may differ).
        const snapshot: CatalogSnapshot = { ...read, readSequence };
        this.snapshot = snapshot;
        this.generation++;
        this.lastLoad = Date.now();
        this.lastBusy = performance.eventLoopUtilization(utilisation).active;
        this.loading = undefined;
        return snapshot;
      },
      (error: unknown) => {
        this.stale = true;
        this.loading = undefined;
        throw error;
      },
    );
    this.loading = loading;
    return loading;
  }
}

/** One DatabaseCatalog per upstream database name. */
export class CatalogCache {
  private readonly databases = new Map<string, DatabaseCatalog>();

  constructor(private readonly loader: CatalogLoader, private readonly missIntervalMs = 2_000) {}

  of(database: string): DatabaseCatalog {
    let catalog = this.databases.get(database);
    if (catalog === undefined) {
      catalog = new DatabaseCatalog(database, this.loader, this.missIntervalMs);
      this.databases.set(database, catalog);
    }
    return catalog;
  }

  markAllStale(): void {
    for (const catalog of this.databases.values()) catalog.markStale();
  }
}
