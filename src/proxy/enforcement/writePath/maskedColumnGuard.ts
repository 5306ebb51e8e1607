/**
 * A column stored in plaintext (method passthrough) that this session's roles see masked or
 * redacted is masked on read only where RowDescription names it: a bare result column. The SQL
 * analysis lists every other way a statement may hand out its value (expressions, casts, set
 * operations, whole rows, COPY of a query, copies into other columns or tables, SQL in text);
 * for such a session those statements are refused before anything reaches the database.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import type { SqlAnalysis } from '../../sql/index.js';
import { columnName } from '../../sql/relationLookup.js';
import { protectsWrites, type ColumnPolicies } from '../catalog/columnPolicies.js';
import { columnLabel, PolicyRefusal } from '../policyRefusal.js';
import type { ReadActions } from '../readPath/resultPlan.js';

/** SQLSTATE insufficient_privilege: the session may not see the column's value this way. */
export const INSUFFICIENT_PRIVILEGE = '42501';

const BARE_ONLY = 'a masked column can only be selected as a bare column';

function seenMasked(policy: ColumnPolicy, actions: ReadActions): boolean {
  return !protectsWrites(policy) && actions.of(policy) !== 'pass';
}

/** The refusal for a statement that could show this session a masked column's plaintext, if any. */
export function maskedColumnRefusal(analysis: SqlAnalysis, policies: ColumnPolicies, actions: ReadActions): PolicyRefusal | undefined {
  for (const exposure of analysis.exposures) {
    const policy = policies.policyOfColumn(exposure.column);
    // The analysis reported it as stored in plaintext: without its policy now, refuse (fail closed).
    if (policy === undefined || seenMasked(policy, actions)) {
      return new PolicyRefusal(INSUFFICIENT_PRIVILEGE,
        `pgveil refused the statement: column ${columnName(exposure.column)} is masked for this session, and ${BARE_ONLY} (${exposure.reason})`);
    }
  }
  if (analysis.opaqueRead !== undefined) {
    const masked = policies.policies.columns.find((policy) => seenMasked(policy, actions));
    if (masked !== undefined) {
      return new PolicyRefusal(INSUFFICIENT_PRIVILEGE,
        `pgveil refused the statement: ${analysis.opaqueRead}; column ${columnLabel(masked)} is masked for this session, and ${BARE_ONLY}`);
    }
  }
  return undefined;
}
