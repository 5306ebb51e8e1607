/**
 * Catalog readings after DDL are spaced by the event-loop time the last one took: a small
 * catalog's readings (a few ms) follow each other at once, so a migration's DDL and the statements
 * after it run at their own pace; a large one's (hundreds of ms building the snapshot) wait four
 * times that, so a DDL loop cannot keep the loop busy with readings.
 */
import { describe, expect, it } from 'vitest';
import { DatabaseCatalog } from '../../../src/proxy/enforcement/catalog/catalogCache.js';
import type { CatalogLoader } from '../../../src/proxy/enforcement/catalog/upstreamCatalogReader.js';
import { snapshotOf } from './support/catalogFixtures.js';

/**
 * A loader whose every reading waits `waitMs` for the database, then holds the event loop `busyMs`
 * as building a snapshot does; and when each reading started.
 */
function busyLoader(busyMs: number, waitMs: number): { loader: CatalogLoader; starts: number[] } {
  const starts: number[] = [];
  const loader: CatalogLoader = async () => {
    starts.push(performance.now());
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const until = performance.now() + busyMs;
    while (performance.now() < until) { /* the snapshot's rows */ }
    return snapshotOf([]);
  };
  return { loader, starts };
}

/** `count` readings, each after DDL marked the catalog stale, one after the other. */
async function readingsAfterDdl(catalog: DatabaseCatalog, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    catalog.markStale();
    await catalog.fresh();
  }
}

describe('readings after DDL', () => {
  it('follow each other at once when a reading is cheap for the event loop, however long the database takes', async () => {
    const { loader, starts } = busyLoader(1, 40);
    await readingsAfterDdl(new DatabaseCatalog('db', loader, 2_000), 5);
    // Four readings of 40 ms; spaced by four durations, they would take over 800 ms.
    expect((starts.at(-1) as number) - (starts[0] as number)).toBeLessThan(500);
  });

  it('wait four times the event loop time of the last one when a reading is costly', async () => {
    const { loader, starts } = busyLoader(60, 0);
    await readingsAfterDdl(new DatabaseCatalog('db', loader, 2_000), 3);
    for (let i = 1; i < starts.length; i++) {
      // The reading itself (60 ms), then a gap of at least 4 × 60 ms.
      expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(60 + 4 * 60 - 20);
    }
  });
});
