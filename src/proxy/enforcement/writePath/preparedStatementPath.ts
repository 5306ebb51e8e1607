/**
 * PostgreSQL analyses a prepared statement's text again, at Bind, whenever its cached plan was
 * invalidated: a search_path other than the one it was parsed under (the plan cache keys plans
 * by search_path), or DDL on any relation it depends on — a table dropped, renamed or moved, a
 * temp table created or dropped. Unqualified names then resolve again, and may denote other
 * tables than at Parse (a table that shadowed a protected one dropped). The parameter plans and
 * spliced literals pgveil made at Parse then belong to other tables: a Bind whose statement now
 * means something else to the write path is refused. So is a Bind whose text names a relation
 * that DDL of this session, not yet visible to pgveil's catalog, may have changed.
 */
import type { SqlAnalysis } from '../../sql/index.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';
import type { PolicySessionState } from '../policySessionState.js';
import { executedPlansRefusal } from './preparedStatements.js';
import type { StatementInfo } from '../expectedReplies.js';
import { changedMeaningRefusal, pendingDdlRefusal } from './statementMeaning.js';

const REPREPARE = 'pgveil refused the Bind: the statement was prepared under another search_path, catalog or column policies, and now its names denote tables with other column policies; prepare it again';

/** The refusal for binding `statement` in `domain`, if its names now resolve differently. */
export function preparedPathRefusal(
  state: PolicySessionState, statement: StatementInfo, domain: number,
): PolicyRefusal | undefined | Promise<PolicyRefusal | undefined> {
  if (statement.schemaKey === undefined) return undefined;
  const now = state.policiesNow();
  if (now === undefined) return state.policies().then((policies) => check(state, statement, domain, policies));
  return check(state, statement, domain, now);
}

function check(state: PolicySessionState, statement: StatementInfo, domain: number, policies: ColumnPolicies): PolicyRefusal | undefined {
  const pending = pendingDdlRefusal(state, statement, policies, 'Bind');
  if (pending !== undefined) return pending;
  const context = state.statementContext(policies, domain);
  // The SQL EXECUTEs its text runs are checked as an EXECUTE sent now would be.
  const executed = executedPlansRefusal(state, statement, context);
  if (executed !== undefined) return executed;
  return changedMeaningRefusal(statement, context, REPREPARE);
}

/**
 * A prepared `COPY table FROM STDIN` resolves its table when it is executed, not at Parse nor at
 * Bind: DDL between Bind and Execute (dropping a relation that shadowed a protected table of the
 * same name) would send rows pgveil did not rewrite into the protected table. So an unqualified
 * name in it must denote the only relation of that name when a protected table has that name;
 * else the Parse is refused: qualify the name, or send the COPY as a simple Query.
 */
export function preparedCopyRefusal(analysis: SqlAnalysis, policies: ColumnPolicies): PolicyRefusal | undefined {
  for (const statement of analysis.statements) {
    const copy = statement.copy;
    if (copy === undefined || !copy.from || !copy.stdio || copy.query || copy.relation === undefined || copy.relation.schema !== undefined) continue;
    const named = policies.snapshot.byBareName.get(copy.relation.table) ?? [];
    const protectedOnes = named.filter((relation) => policies.hasColumnPolicies(relation));
    if (protectedOnes.length === 0) continue;
    const only = protectedOnes[0];
    const loadsProtected = only !== undefined && (copy.columns === undefined
      || copy.columns.some((column) => policies.isProtected({ schema: only.schema, table: only.table, column })));
    if (named.length > 1 || (statement.copyFrom === undefined && loadsProtected)) {
      return unsupportedRefusal(`pgveil refused the statement: a prepared COPY ${copy.relation.table} FROM STDIN names its table unqualified, and a table of that name has protected columns while the name may denote another relation when the COPY runs; qualify the table name (schema.${copy.relation.table}) or send the COPY as a simple Query`);
    }
  }
  return undefined;
}
