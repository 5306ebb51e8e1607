/**
 * Whether a prepared statement still means, to the write path, what it meant when pgveil analysed
 * it: PostgreSQL analyses its text again whenever its cached plan was invalidated (another
 * search_path, DDL on a relation it depends on), and its unqualified names may then denote other
 * tables. Used at Bind (preparedStatementPath.ts) and at SQL EXECUTE (preparedStatements.ts).
 */
import { schemaFactsOf, type SqlAnalysis } from '../../sql/index.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';
import type { PolicySessionState } from '../policySessionState.js';
import type { StatementInfo } from '../expectedReplies.js';
import { maskedColumnRefusal } from './maskedColumnGuard.js';
import { analyse, planSignature, type StatementContext } from './statementRewriter.js';

/** Digests per analysis (the analysis cache hands out one object per text and context): made once each. */
const signatures = new WeakMap<SqlAnalysis, string>();

function signatureOf(analysis: SqlAnalysis): string {
  let signature = signatures.get(analysis);
  if (signature === undefined) {
    signature = planSignature(analysis);
    signatures.set(analysis, signature);
  }
  return signature;
}

/**
 * Refused when the text, analysed again under `context`, now needs other rewriting, or sets a
 * column the session no longer reads in plaintext (an empty key: always analysed again).
 */
export function changedMeaningRefusal(statement: StatementInfo, context: StatementContext, message: string): PolicyRefusal | undefined {
  // The usual case: nothing the analysis depended on changed since Parse (or since a Bind checked it).
  if (context.schemaKey === statement.schemaKey || context.schemaKey === statement.checkedUnder) return undefined;
  if (statement.sql === undefined || statement.analysis === undefined) return unsupportedRefusal(message);
  const again = analyse(statement.sql, context);
  if (signatureOf(again) !== signatureOf(statement.analysis)) return unsupportedRefusal(message);
  // The same rewriting, but the session may read its columns otherwise now (a reload narrowed a
  // tokenised column's reveal without ending it): what it may set is decided again.
  const masked = maskedColumnRefusal(again, context.policies, context.actions);
  if (masked !== undefined) return masked;
  statement.checkedUnder = context.schemaKey;
  return undefined;
}

const REEXECUTE = 'pgveil refused the statement: EXECUTE runs a statement prepared under another search_path, catalog or column policies, and now its names denote tables with other column policies (or pgveil cannot tell); prepare it again';
const UNSETTLED = 'pgveil refused the statement: EXECUTE follows, in the same text, a statement that may change the search_path, role or catalog, and the prepared statement it runs names relations the server looks up again; send the EXECUTE as a text of its own';

/**
 * SQL `EXECUTE name` (a simple Query, or a Parse of such a text and its Bind) runs the prepared
 * statement as the server plans it now: analysed again, at Bind or at Parse of the EXECUTE, like
 * a Bind of it. A statement prepared with Parse or SQL PREPARE whose text now needs other
 * rewriting (a shadowing table dropped, another search_path, a policy reload) is refused, as is
 * one named by DDL of this session that the catalog cannot see yet. `unsettled`: an earlier
 * statement of the same text may have changed the search_path, role or catalog.
 */
export function executedStatementRefusal(
  state: PolicySessionState, statement: StatementInfo, context: StatementContext, unsettled: boolean,
): PolicyRefusal | undefined {
  if (statement.schemaKey === undefined) return undefined;
  const pending = pendingDdlRefusal(state, statement, context.policies, 'statement');
  if (pending !== undefined) return pending;
  if (unsettled) {
    statement.schemaFacts ??= schemaFactsOf(statement.sql ?? '');
    if (statement.sql === undefined || statement.schemaFacts.some((facts) => facts.mentions.length > 0)) return unsupportedRefusal(UNSETTLED);
  }
  return changedMeaningRefusal(statement, context, REEXECUTE);
}

/**
 * DDL of this session the catalog cannot see yet (not committed, or not answered) may have
 * changed what the statement's names denote: its text is checked against it as a Parse of it
 * would be now.
 */
export function pendingDdlRefusal(state: PolicySessionState, statement: StatementInfo, policies: ColumnPolicies, what: 'Bind' | 'statement'): PolicyRefusal | undefined {
  const unsure = state.ddlPending || state.uncommittedDdl;
  if (!unsure && state.pendingSchema.isEmpty) return undefined;
  statement.schemaFacts ??= schemaFactsOf(statement.sql ?? '');
  const refusal = state.pendingSchema.check(statement.schemaFacts, policies, unsure);
  return refusal === undefined ? undefined : unsupportedRefusal(`pgveil refused the ${what}: ${refusal.message.replace(/^pgveil refused the statement: /, '')}`);
}
