/**
 * Decides what to suggest for a column from its tally: the first kind, most specific first, that
 * at least SUGGEST_THRESHOLD of the sampled non-null values are valid for, and that the column's
 * name hints at when the kind needs a hint. Columns that miss are reported with their best kind.
 */
import type { Kind } from '../engine/index.js';
import { KINDS_NEEDING_A_HINT } from './kindRecognisers.js';
import type { ColumnTally } from './columnTally.js';

/** The share of sampled non-null values that must be valid for a kind before it is suggested. */
export const SUGGEST_THRESHOLD = 0.8;

export interface ColumnScore {
  /** The kind suggested, or the best candidate when none is; undefined when no kind applies at all. */
  readonly kind: Kind | undefined;
  /** Share (0–1) of the sampled non-null values valid for `kind`. */
  readonly score: number;
  /** Sampled non-null values. */
  readonly sampleSize: number;
  /** Words of the column's name that hint at `kind`. */
  readonly hints: readonly string[];
  readonly suggested: boolean;
  /** Why it is not suggested; absent when it is. */
  readonly reason?: string;
}

function candidate(tally: ColumnTally, kind: Kind): { kind: Kind; score: number; hints: readonly string[] } {
  const matched = tally.matches.get(kind) ?? 0;
  return { kind, score: tally.nonNull === 0 ? 0 : matched / tally.nonNull, hints: tally.hints.get(kind) ?? [] };
}

export function scoreColumn(tally: ColumnTally): ColumnScore {
  const sampleSize = tally.nonNull;
  const candidates = tally.kinds.map((kind) => candidate(tally, kind));
  if (sampleSize === 0) {
    const hinted = candidates.find((c) => c.hints.length > 0);
    return { kind: hinted?.kind, score: 0, sampleSize, hints: hinted?.hints ?? [], suggested: false, reason: 'no non-null values in the sample' };
  }
  const chosen = candidates.find((c) => c.score >= SUGGEST_THRESHOLD && (c.hints.length > 0 || !KINDS_NEEDING_A_HINT.has(c.kind)));
  if (chosen) return { ...chosen, sampleSize, suggested: true };
  // The best candidate: hinted ones first (the name says what the column was meant for), then by share.
  const best = [...candidates].sort((a, b) => Number(b.hints.length > 0) - Number(a.hints.length > 0) || b.score - a.score)[0];
  if (best === undefined || (best.score === 0 && best.hints.length === 0)) {
    return { kind: undefined, score: 0, sampleSize, hints: [], suggested: false, reason: 'no sampled value is valid for any kind' };
  }
  const reason = best.score >= SUGGEST_THRESHOLD
    ? `kind ${best.kind} is suggested only when the column's name hints at it`
    : `below ${Math.round(SUGGEST_THRESHOLD * 100)}%`;
  return { ...best, sampleSize, suggested: false, reason };
}

/** "98%": rounded down, so 100% means every sampled value. */
export function percent(score: number): string {
  return `${Math.floor(score * 100 + 1e-9)}%`;
}
