/**
 * The read action over a batch of stored values of one column, as text: unprotect, mask, both, or
 * NULL. Shared by DataRow and COPY TO rewriting. The result says per value: new text, NULL, or
 * KEEP (send the stored value unchanged — it did not unprotect, and a token is safe to show).
 */
import type { ColumnPolicy, ReadAction } from '../../../policy/index.js';
import type { Engine } from '../../../engine/index.js';
import type { PolicyMetrics } from '../policyMetrics.js';
import { maskValues, unprotectValues } from '../writePath/valueProtector.js';

export const KEEP: unique symbol = Symbol('keep the stored value');
export type RevealedValue = string | null | typeof KEEP;

export async function revealColumn(
  engine: Engine, policy: ColumnPolicy, action: Exclude<ReadAction, 'pass'>, stored: readonly string[], metrics: PolicyMetrics,
): Promise<RevealedValue[]> {
  metrics.valuesRevealed += stored.length;
  switch (action) {
    case 'null':
      return stored.map(() => null);
    case 'unprotect':
      return (await unprotectValues(engine, policy, stored, metrics)).map((value) => value ?? KEEP);
    case 'mask':
      return maskValues(engine, policy, stored, metrics);
    case 'unprotect-then-mask': {
      const plain = await unprotectValues(engine, policy, stored, metrics);
      // A value that does not unprotect is masked as stored: a legacy plaintext row stays hidden.
      return maskValues(engine, policy, plain.map((value, i) => value ?? (stored[i] as string)), metrics);
    }
  }
}
