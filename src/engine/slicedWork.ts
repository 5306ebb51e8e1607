/**
 * Runs a long batch in slices of a few milliseconds and lets the event loop turn between them, so
 * that one large request delays other clients (and health checks) by one slice, not by the whole
 * batch. A value weighs 1 plus one per 64 characters; slices are sized by weight from the dearest
 * cost per weight seen so far, grow at most twofold and never pass MAX_SLICE_WEIGHT, so a run of
 * cheap values cannot open a slice wide enough to hide many dear ones. A small batch of short
 * values runs at once, without a turn.
 */
import { permutationTableBuilds, TableBuildDeferred, withTableBuildAllowance } from './crypto/smallDomain.js';

/** Work per slice before the loop may turn. */
export const SLICE_BUDGET_MS = 4;
const FIRST_SLICE_WEIGHT = 64;
const MAX_SLICE_WEIGHT = 512;
/** Deferrals of one slice after which it runs with no table limit (a cache too small to hold them all). */
const MAX_DEFERRALS = 16;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function weightOf(value: string): number {
  return 1 + (value.length >> 6);
}

/**
 * Runs `work(0, values.length)` at once, without a turn of the event loop, when the whole batch
 * fits in a first slice and builds at most one permutation table: true then. False when the
 * batch must go through inSlices instead (`work` may have run partly: it must be repeatable).
 * This spares a request of one or a few values the slicing machinery and its promises.
 */
export function tryAtOnce(values: readonly string[], work: (start: number, end: number) => void): boolean {
  const count = values.length;
  let weight = 0;
  for (let i = 0; i < count; i++) {
    weight += weightOf(values[i] as string);
    if (weight > FIRST_SLICE_WEIGHT) return false;
  }
  try {
    withTableBuildAllowance(1, () => work(0, count));
    return true;
  } catch (error) {
    if (error instanceof TableBuildDeferred) return false;
    throw error;
  }
}

/**
 * Calls `work(start, end)` over the indexes of `values` in consecutive slices; `work` writes its
 * results where the caller keeps them, and may be called again for the same range (it must be
 * repeatable). A slice builds at most one format-preserving permutation table (up to some 20 ms
 * each); one that needs more runs again after a turn, with the tables built so far cached.
 * A throw rejects the batch.
 */
export async function inSlices(values: readonly string[], work: (start: number, end: number) => void, budgetMs = SLICE_BUDGET_MS): Promise<void> {
  const count = values.length;
  let start = 0;
  let allowed = FIRST_SLICE_WEIGHT;
  let dearest = 0;
  let deferrals = 0;
  while (start < count) {
    let end = start;
    let weight = 0;
    do weight += weightOf(values[end++] as string); while (end < count && weight + weightOf(values[end] as string) <= allowed);
    const began = performance.now();
    const buildsBefore = permutationTableBuilds();
    let finished = true;
    try {
      withTableBuildAllowance(deferrals < MAX_DEFERRALS ? 1 : Number.POSITIVE_INFINITY, () => work(start, end));
    } catch (error) {
      if (!(error instanceof TableBuildDeferred)) throw error;
      finished = false;
    }
    if (finished) {
      deferrals = 0;
      // A table build says nothing of the values' own cost: it is bounded apart (one per slice).
      if (permutationTableBuilds() === buildsBefore) dearest = Math.max(dearest, (performance.now() - began) / weight);
      start = end;
      if (start >= count) return;
      allowed = Math.max(1, Math.min(MAX_SLICE_WEIGHT, 2 * allowed, Math.floor(budgetMs / Math.max(dearest, 1e-4))));
    } else {
      allowed = 1;
      deferrals++;
    }
    await nextTurn();
  }
}
