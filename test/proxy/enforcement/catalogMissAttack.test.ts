/**
 * Availability: a client naming functions (or relations) the catalog does not know, a new name
 * each time, makes pgveil read the catalog again before it decides (a newer reading may know the
 * name). One session doing so in a loop must not keep the reader busy: past a small burst its
 * misses wait their turn, and every reading is spaced by a multiple of the event loop's busy time
 * during the last one (with a large catalog, hundreds of ms).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICIES_YAML, SCHEMA_SQL, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';
import { attempt, ATTACK_PHONE, simple } from './support/rawAttempts.js';
import type { DirectHarness } from './support/policyHarness.js';

/** Readings the hooks' catalog loader made. */
let readings = 0;
/** A reading's extra work on the event loop: a large catalog (200,000 columns take hundreds of ms to build). */
const READING_MS = 150;

/** Holds the event loop for `ms`, as building a large snapshot does. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* the snapshot's rows */ }
}
const shared = {} as { harness: PolicyHarness; direct: DirectHarness['direct'] };

beforeAll(async () => {
  shared.harness = await startPolicyHarness(SCHEMA_SQL, POLICIES_YAML, {
    wrapCatalogLoader: (loader) => async (database) => {
      readings++;
      const snapshot = await loader(database);
      busyFor(READING_MS);
      return snapshot;
    },
  });
  shared.direct = await shared.harness.direct();
  await shared.direct.query('INSERT INTO customers (id, phone, note) VALUES (1, $1, $2)', [ATTACK_PHONE, 'victim']);
});

afterAll(async () => {
  await shared.direct?.end().catch(() => undefined);
  await shared.harness?.stop();
});

/** Statements from one session for `ms`, each naming what `statement(n)` names; the readings they caused. */
async function loopFor(ms: number, statement: (n: number) => string): Promise<{ statements: number; readings: number; last: string }> {
  const h = { harness: shared.harness, direct: shared.direct };
  const before = readings;
  let statements = 0;
  let last = '';
  await attempt(h, SUPPORT, async (session) => {
    const start = Date.now();
    await simple(session, 'SELECT 1');
    while (Date.now() - start < ms) last = await simple(session, statement(statements++));
    return last;
  });
  return { statements, readings: readings - before, last };
}

describe('catalog readings caused by one session', () => {
  it('unknown function names receiving a masked value, a new one each time, cause a bounded number of readings', async () => {
    const { readings: caused, last } = await loopFor(4_000, (n) => `SELECT id FROM customers WHERE nosuch_fn_${n}(phone)`);
    // Unpaced: a reading every 250 ms + READING_MS, about 10 in 4 s.
    expect(caused).toBeLessThanOrEqual(6);
    expect(last).toMatch(/E .*C42501.*nosuch_fn_\d+\(\)/);
  }, 20_000);

  it('DDL in a loop (each marks the catalog stale) causes a bounded number of readings', async () => {
    const { readings: caused, statements } = await loopFor(3_000, () => 'CREATE TEMP TABLE IF NOT EXISTS scratch (a int)');
    // Unspaced: a reading per statement, about 3_000 / READING_MS.
    expect(caused).toBeLessThanOrEqual(6);
    expect(statements).toBeGreaterThan(caused);
  }, 20_000);
});
