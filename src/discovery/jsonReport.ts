/** The machine-readable form of a discovery report: counts, shares and names only. */
import { formatColumnName, formatTableName } from '../policy/index.js';
import { chooseMethod } from './suggestedMethod.js';
import type { DiscoveryReport } from './discoveryTypes.js';

export interface JsonColumnReport {
  /** schema.table.column as the policy file writes it. */
  readonly column: string;
  readonly type: string;
  /** The suggested kind, or the best candidate; null when no kind applies. */
  readonly kind: string | null;
  /** Share (0–1, four decimals) of the sampled non-null values valid for `kind`. */
  readonly score: number;
  /** Sampled non-null values. */
  readonly sampleSize: number;
  readonly hints: readonly string[];
  readonly suggested: boolean;
  /** The method the policy file would use; only when suggested. */
  readonly method?: string;
  /** Why not suggested; only when not. */
  readonly reason?: string;
}

export interface JsonDiscoveryReport {
  readonly schema: string;
  readonly sampleLimit: number;
  readonly columns: readonly JsonColumnReport[];
  readonly unsampled: readonly { readonly table: string; readonly reason: string }[];
}

export function toJsonReport(report: DiscoveryReport): JsonDiscoveryReport {
  return {
    schema: report.schema,
    sampleLimit: report.sampleLimit,
    columns: report.columns.map((c) => {
      const { score } = c;
      const base = {
        column: formatColumnName({ schema: c.schema, table: c.table, column: c.column }),
        type: c.type.display,
        kind: score.kind ?? null,
        score: Math.round(score.score * 10_000) / 10_000,
        sampleSize: score.sampleSize,
        hints: score.hints,
        suggested: score.suggested,
      };
      if (score.suggested && score.kind !== undefined) return { ...base, method: chooseMethod(score.kind, c.type).method };
      return score.reason === undefined ? base : { ...base, reason: score.reason };
    }),
    unsampled: report.unsampled.map((t) => ({ table: formatTableName(t.schema, t.table), reason: t.reason })),
  };
}
