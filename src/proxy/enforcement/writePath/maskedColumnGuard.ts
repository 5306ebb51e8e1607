/**
 * A column stored in plaintext (method passthrough) that this session's roles see masked or
 * redacted is masked on read only where RowDescription names it: a bare result column. The SQL
 * analysis lists every other way a statement may hand out its value (expressions, casts, set
 * operations, whole rows, COPY of a query, copies into other columns or tables, SQL in text);
 * for such a session those statements are refused before anything reaches the database. An
 * UPDATE that sets a tokenised, fpe or passthrough column is refused for a session that does not
 * read it in plaintext (a mask, a token or NULL written back would replace the value), unless its
 * roles hold the `blind-update` privilege.
 */
import type { ColumnPolicy, ReadAction } from '../../../policy/index.js';
import type { SqlAnalysis } from '../../sql/index.js';
import { columnName } from '../../sql/relationLookup.js';
import { protectsWrites, type ColumnPolicies } from '../catalog/columnPolicies.js';
import { columnLabel, INSUFFICIENT_PRIVILEGE, PolicyRefusal } from '../policyRefusal.js';
import type { ReadActions } from '../readPath/resultPlan.js';
import { sessionRights } from '../statementRuleGuard.js';

const BARE_ONLY = 'a masked column can only be selected as a bare column';

/** Stored one-way (a mask, NULL): what a write-back stores is what was there. */
const ONE_WAY = new Set(['mask', 'redact']);

const VIEW_OF_ACTION: Readonly<Record<ReadAction, string>> = {
  pass: 'the stored tokens', null: 'NULL', unprotect: 'plaintext', mask: 'a mask', 'unprotect-then-mask': 'a mask',
};

/** The session reads the column's plaintext: what it writes back is what it read. */
function readsPlaintext(policy: ColumnPolicy, actions: ReadActions): boolean {
  const action = actions.of(policy);
  return protectsWrites(policy) ? action === 'unprotect' : action === 'pass';
}

function seenMasked(policy: ColumnPolicy, actions: ReadActions): boolean {
  return !protectsWrites(policy) && actions.of(policy) !== 'pass';
}

/** The refusal for a statement that could show this session a masked column's plaintext, or overwrite what it cannot read, if any. */
export function maskedColumnRefusal(analysis: SqlAnalysis, policies: ColumnPolicies, actions: ReadActions): PolicyRefusal | undefined {
  for (const exposure of analysis.exposures) {
    if (exposure.overwrite === true) continue;
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
  return overwriteRefusal(analysis, policies, actions);
}

/** Reads first (the graver finding), then the UPDATEs of columns this session does not read in plaintext. */
function overwriteRefusal(analysis: SqlAnalysis, policies: ColumnPolicies, actions: ReadActions): PolicyRefusal | undefined {
  let blindUpdate: boolean | undefined;
  for (const exposure of analysis.exposures) {
    if (exposure.overwrite !== true) continue;
    const policy = policies.policyOfColumn(exposure.column);
    if (policy !== undefined && (readsPlaintext(policy, actions) || ONE_WAY.has(policy.method))) continue;
    blindUpdate ??= sessionRights(policies.policies, actions.roles).privileges.has('blind-update');
    if (blindUpdate) continue;
    const seen = policy === undefined ? 'no longer has its policy' : `is not read in plaintext by this session (it sees ${VIEW_OF_ACTION[actions.of(policy)]})`;
    return new PolicyRefusal(INSUFFICIENT_PRIVILEGE, `pgveil refused the statement: column ${columnName(exposure.column)} ${seen}, and ${exposure.reason}`);
  }
  return undefined;
}
