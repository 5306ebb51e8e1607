/**
 * PostgreSQL re-resolves a prepared statement's names when it is bound under another
 * search_path than the one it was parsed under (the plan cache keys plans by search_path). The
 * parameter plans and spliced literals pgveil made at Parse then belong to other tables: a Bind
 * whose statement now means something else to the write path is refused.
 */
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';
import type { PolicySessionState } from '../policySessionState.js';
import type { StatementInfo } from '../expectedReplies.js';
import { hasPathDependentNames } from '../catalog/sessionRelations.js';
import { analyse, planSignature } from './statementRewriter.js';

const REPREPARE = 'pgveil refused the Bind: the statement was prepared under another search_path, and under the current one its table names denote tables with other column policies; prepare it again';

/** The refusal for binding `statement` in `domain`, if its names now resolve differently. */
export function preparedPathRefusal(
  state: PolicySessionState, statement: StatementInfo, domain: number,
): PolicyRefusal | undefined | Promise<PolicyRefusal | undefined> {
  if (statement.sql === undefined || statement.resolutionKey === undefined) return undefined;
  const now = state.policiesNow();
  if (now === undefined) return state.policies().then((policies) => check(state, statement, domain, policies));
  return check(state, statement, domain, now);
}

function check(state: PolicySessionState, statement: StatementInfo, domain: number, policies: ColumnPolicies): PolicyRefusal | undefined {
  // Unless a bare name denotes several relations, one with policies, every path resolves alike.
  if (!hasPathDependentNames(policies)) return undefined;
  const context = state.statementContext(policies, domain);
  if (context.schema.resolutionKey === statement.resolutionKey || statement.analysis === undefined) return undefined;
  const again = analyse(statement.sql ?? '', context);
  // Digests are made only here, on the rare Bind under a changed path, not on every Parse.
  return planSignature(again) === planSignature(statement.analysis) ? undefined : unsupportedRefusal(REPREPARE);
}
