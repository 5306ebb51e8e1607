/** Counters of the proxy's policy work, shared by all sessions (exported for /metrics and tests). */
export interface PolicyMetrics {
  /** Stored values of a protected column that did not unprotect and went out as stored. */
  unprotectFailures: number;
  /** Values a mask view could not mask (sent as NULL). */
  maskFailures: number;
  /** Binary values pgveil could not decode on read (sent as stored). */
  undecodableValues: number;
  /** Statements, Binds and COPY streams refused. */
  refusals: number;
  /** Values protected on the write path. */
  valuesProtected: number;
  /** Result values rewritten on the read path. */
  valuesRevealed: number;
}

export function createPolicyMetrics(): PolicyMetrics {
  return { unprotectFailures: 0, maskFailures: 0, undecodableValues: 0, refusals: 0, valuesProtected: 0, valuesRevealed: 0 };
}
