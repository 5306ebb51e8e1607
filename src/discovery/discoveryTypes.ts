import type { ColumnType } from '../policy/index.js';
import type { ColumnScore } from './columnScoring.js';

/** One sampled column and what its sample says. Holds counts and shares, never a value. */
export interface DiscoveredColumn {
  readonly schema: string;
  readonly table: string;
  readonly column: string;
  readonly type: ColumnType;
  readonly score: ColumnScore;
}

/** A table that could not be sampled, and why (a SQLSTATE and a fixed description, never a value). */
export interface UnsampledTable {
  readonly schema: string;
  readonly table: string;
  readonly reason: string;
}

export interface DiscoveryReport {
  readonly schema: string;
  /** Tables (and partitioned tables) found in the schema, sampled or not. */
  readonly tableCount: number;
  /** The most rows sampled per table. */
  readonly sampleLimit: number;
  /** In catalog order: tables by name, columns by position. */
  readonly columns: readonly DiscoveredColumn[];
  readonly unsampled: readonly UnsampledTable[];
}
