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
 * Calls `work(start, end)` over the indexes of `values` in consecutive slices; `work` writes its
 * results where the caller keeps them, and may be called again for the same range (it must be
 * repeatable). A slice builds at most one format-preserving permutation table (up to some 20 ms
 * each); one that needs more runs again after a turn, with the tables built so far cached.
 * A throw rejects the batch. Returns undefined when the whole batch was done in the first slice,
 * without a turn; else a promise of the rest.
 */
export function inSlices(values: readonly string[], work: (start: number, end: number) => void, budgetMs = SLICE_BUDGET_MS): Promise<void> | undefined {
  const state: SliceState = { start: 0, allowed: FIRST_SLICE_WEIGHT, dearest: 0, deferrals: 0 };
  try {
    // A batch done in its first slice (one or a few short values) needs no promise and no turn.
    if (runSlice(values, work, budgetMs, state)) return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
  return restInSlices(values, work, budgetMs, state);
}

interface SliceState {
  start: number;
  allowed: number;
  dearest: number;
  deferrals: number;
}

async function restInSlices(values: readonly string[], work: (start: number, end: number) => void, budgetMs: number, state: SliceState): Promise<void> {
  do await nextTurn(); while (!runSlice(values, work, budgetMs, state));
}

/** Runs the next slice (or tries it again); true when every value is done. */
function runSlice(values: readonly string[], work: (start: number, end: number) => void, budgetMs: number, state: SliceState): boolean {
  const count = values.length;
  const start = state.start;
  if (start >= count) return true;
  let end = start;
  let weight = 0;
  do weight += weightOf(values[end++] as string); while (end < count && weight + weightOf(values[end] as string) <= state.allowed);
  const began = performance.now();
  const buildsBefore = permutationTableBuilds();
  try {
    withTableBuildAllowance(state.deferrals < MAX_DEFERRALS ? 1 : Number.POSITIVE_INFINITY, () => work(start, end));
  } catch (error) {
    if (!(error instanceof TableBuildDeferred)) throw error;
    state.allowed = 1;
    state.deferrals++;
    return false;
  }
  state.deferrals = 0;
  // A table build says nothing of the values' own cost: it is bounded apart (one per slice).
  if (permutationTableBuilds() === buildsBefore) state.dearest = Math.max(state.dearest, (performance.now() - began) / weight);
  state.start = end;
  if (end >= count) return true;
  state.allowed = Math.max(1, Math.min(MAX_SLICE_WEIGHT, 2 * state.allowed, Math.floor(budgetMs / Math.max(state.dearest, 1e-4))));
  return false;
}
