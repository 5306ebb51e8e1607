/**
 * The queries of one catalog reading, their rows handed to the caller in slices: large results
 * come through a cursor a batch at a time, and the rows of a batch are worked on a slice at a time,
 * with a turn of the event loop between slices. One slice budget covers the whole reading, so no
 * turn holds more than about a slice's worth of rows, whichever query they come from.
 */
import type { CatalogQuery, CatalogRow } from '../../../policy/index.js';
import { cursorBatches } from './catalogCursor.js';
import { forEachInSlices, SliceBudget, UNITS_PER_SLICE } from './eventLoopSlices.js';

export interface RowOptions {
  /** Rows per FETCH (default: a slice's worth); fewer for rows that are large or costly each. */
  readonly batchRows?: number;
  /** The work one row costs, in slice units (default 1). */
  readonly units?: (row: CatalogRow) => number;
}

export class SlicedCatalogReading {
  readonly budget: SliceBudget;

  constructor(private readonly query: CatalogQuery, private readonly unitsPerSlice = UNITS_PER_SLICE) {
    this.budget = new SliceBudget(unitsPerSlice);
  }

  /** Calls `each` on every row of `sql`, in order. Runs in the reading's transaction (a cursor). */
  async forEachRow(sql: string, each: (row: CatalogRow) => void, options: RowOptions = {}): Promise<void> {
    for await (const rows of cursorBatches(this.query, sql, options.batchRows ?? this.unitsPerSlice)) {
      // The driver parsed this batch in the turn that hands it over: that turn has had its share.
      if (this.budget.spend(rows.length)) await this.budget.yield();
      await forEachInSlices(rows, this.budget, each, options.units);
    }
  }

  /** Every row of a query whose result is small (a few hundred rows): one round trip, no cursor. */
  rows(sql: string): Promise<readonly CatalogRow[]> {
    return this.query(sql, []);
  }
}
