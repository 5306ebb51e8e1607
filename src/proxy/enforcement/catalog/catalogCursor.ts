/**
 * A catalog query's rows in batches, through a server-side cursor (DECLARE … FETCH). The driver
 * parses every row of a result as it arrives, a socket read after another in the same turn of the
 * event loop: 200 000 column rows held the loop for hundreds of milliseconds before the snapshot
 * even started to be built. A FETCH of a bounded number of rows bounds that turn, and the wait for
 * the next batch lets the other sessions run.
 *
 * Cursors live in a transaction: `inReadOnlyTransaction` opens one (REPEATABLE READ, so every
 * query of a reading also sees the catalog as of one moment) for the whole reading.
 */
import type { CatalogQuery, CatalogRow } from '../../../policy/index.js';

/** Runs `read` in a read-only transaction on the connection `query` uses; rolled back on error. */
export async function inReadOnlyTransaction<T>(query: CatalogQuery, read: () => Promise<T>): Promise<T> {
  await query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', []);
  let result: T;
  try {
    result = await read();
  } catch (error) {
    await query('ROLLBACK', []).catch(() => undefined);
    throw error;
  }
  await query('COMMIT', []);
  return result;
}

let cursorsDeclared = 0;

/**
 * The rows of `sql` (no parameters), at most `batchRows` at a time, in order. The next batch is
 * asked for as soon as one arrives, so the database reads it while the caller works on this one.
 * Must run inside `inReadOnlyTransaction` (its end closes the cursor).
 */
export async function* cursorBatches(query: CatalogQuery, sql: string, batchRows: number): AsyncGenerator<readonly CatalogRow[]> {
  const cursor = `pgveil_catalog_${++cursorsDeclared}`;
  await query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`, []);
  const fetch = (): Promise<readonly CatalogRow[]> => query(`FETCH FORWARD ${batchRows} FROM ${cursor}`, []);
  let next: Promise<readonly CatalogRow[]> | undefined = fetch();
  try {
    while (next !== undefined) {
      const rows: readonly CatalogRow[] = await next;
      // Fewer rows than asked for: the cursor is done (no FETCH to learn it).
      next = rows.length < batchRows ? undefined : fetch();
      // A caller that stops early leaves the prefetch unawaited: its failure is not an unhandled rejection.
      next?.catch(() => undefined);
      if (rows.length > 0) yield rows;
    }
  } finally {
    if (next !== undefined) await next.catch(() => undefined);
  }
}
