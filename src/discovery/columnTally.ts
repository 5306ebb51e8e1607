/**
 * Counts, per kind, how many of a column's sampled values it recognises. Values are looked at one
 * by one and dropped: the tally keeps counts only, never a value.
 */
import type { Kind } from '../engine/index.js';
import { hintsFor } from './columnNameHints.js';
import { recognises } from './kindRecognisers.js';

export class ColumnTally {
  /** Sampled values that were not NULL. */
  nonNull = 0;
  readonly matches = new Map<Kind, number>();
  /** Per kind, the words of the column's name that hint at it. */
  readonly hints: ReadonlyMap<Kind, readonly string[]>;

  constructor(column: string, readonly kinds: readonly Kind[]) {
    this.hints = new Map(kinds.map((kind) => [kind, hintsFor(kind, column)]));
    for (const kind of kinds) this.matches.set(kind, 0);
  }

  add(value: string | null): void {
    if (value === null) return;
    this.nonNull++;
    for (const kind of this.kinds) {
      if (recognises(kind, value, (this.hints.get(kind)?.length ?? 0) > 0)) this.matches.set(kind, (this.matches.get(kind) ?? 0) + 1);
    }
  }
}
