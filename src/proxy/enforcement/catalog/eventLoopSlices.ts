/**
 * Long synchronous work cut into slices with a turn of the event loop between them. The proxy's
 * sessions share one event loop: building a catalog snapshot of 200 000 columns in one go stalled
 * every other session for the whole build, each time the catalog was read. Slices are counted in
 * work units (a catalog row is one) rather than timed, so where a reading yields does not depend
 * on the machine's speed or load.
 */

/** Work units per slice: a few milliseconds of building on a slow machine. */
export const UNITS_PER_SLICE = 1_000;

/** Resolves in a later turn of the event loop, after the I/O and timers already due. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts the work done since the last yield; one budget is shared by every step of a reading. */
export class SliceBudget {
  private spent = 0;

  constructor(private readonly unitsPerSlice = UNITS_PER_SLICE) {}

  /**
   * Counts `units` of work just done; true when the slice is full and the caller must
   * `await budget.yield()` before going on (checked per row without a promise: most rows fit).
   */
  spend(units: number): boolean {
    this.spent += units;
    return this.spent >= this.unitsPerSlice;
  }

  /** Lets the event loop run other work, then starts a new slice. */
  async yield(): Promise<void> {
    await nextTurn();
    this.spent = 0;
  }
}

/** Calls `each` on every item, yielding between slices; `units` weighs an item (default 1). */
export async function forEachInSlices<T>(
  items: Iterable<T>, budget: SliceBudget, each: (item: T) => void, units: (item: T) => number = () => 1,
): Promise<void> {
  for (const item of items) {
    each(item);
    if (budget.spend(units(item))) await budget.yield();
  }
}
