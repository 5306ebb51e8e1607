/**
 * A Query or Parse text through the write path: analysed under the session's schema (the catalog
 * loaded or refreshed first when needed), checked against the statement rules, the session's
 * settings and its pending DDL, then rewritten. The answer comes at once when nothing has to be
 * waited for (the catalog is current, no name is missing, nothing to protect): a promise makes
 * the relay pause the client and resume it a loop turn later. Throws PolicyRefusal (or rejects
 * with it) for a text that must not be forwarded.
 */
import { forgetParsed, OFF_THREAD_PARSE_LENGTH, parseAhead, schemaFactsOf, type SqlAnalysis } from '../sql/index.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';
import { namesSystemRelation } from './catalog/systemRelations.js';
import type { PolicySessionState } from './policySessionState.js';
import { statementRuleRefusal } from './statementRuleGuard.js';
import { unchangedStatement } from './unchangedStatement.js';
import { executePlanLookup } from './writePath/preparedStatements.js';
import { analyse, changesCatalog, rewriteStatement, type RewrittenStatement, type StatementContext } from './writePath/statementRewriter.js';

/**
 * `domain`: the search_path failure domain of the message (SessionSearchPath); `batch`: its
 * Sync-delimited batch; `declaredParamCount`: the parameter types a Parse declared.
 */
export function analysedText(
  state: PolicySessionState, sql: string, domain: number, batch: number, declaredParamCount = 0,
): RewrittenStatement | Promise<RewrittenStatement> {
  // Short texts (nearly all) skip the worker's round trip.
  if (sql.length < OFF_THREAD_PARSE_LENGTH) return analysedInPlace(state, sql, domain, batch, declaredParamCount);
  return analysedOffThread(state, sql, domain, batch, declaredParamCount);
}

async function analysedOffThread(state: PolicySessionState, sql: string, domain: number, batch: number, declaredParamCount: number): Promise<RewrittenStatement> {
  await parseAhead(sql);
  try {
    return await analysedInPlace(state, sql, domain, batch, declaredParamCount);
  } finally {
    forgetParsed(sql);
  }
}

function analysedInPlace(state: PolicySessionState, sql: string, domain: number, batch: number, declaredParamCount: number): RewrittenStatement | Promise<RewrittenStatement> {
  const now = state.policiesNow();
  if (now === undefined) return state.policies().then((policies) => analysedUnder(state, sql, domain, batch, declaredParamCount, policies));
  return analysedUnder(state, sql, domain, batch, declaredParamCount, now);
}

function analysedUnder(
  state: PolicySessionState, sql: string, domain: number, batch: number, declaredParamCount: number, policies: ColumnPolicies,
): RewrittenStatement | Promise<RewrittenStatement> {
  if (state.wantsNewerDefault(policies)) {
    // The session's default search_path may be newer than this reading: read after its login.
    return state.catalog.afterMiss().then(() => state.policies())
      .then((newer) => analysedWith(state, sql, domain, batch, declaredParamCount, newer));
  }
  return analysedWith(state, sql, domain, batch, declaredParamCount, policies);
}

function analysedWith(
  state: PolicySessionState, sql: string, domain: number, batch: number, declaredParamCount: number, policies: ColumnPolicies,
): RewrittenStatement | Promise<RewrittenStatement> {
  const context = state.statementContext(policies, domain);
  // `missed` only grows: the names this analysis missed are the ones added after this size.
  const missedBefore = policies.missed.size;
  const analysis = analyse(sql, context);
  if (policies.missed.size === missedBefore) return rewritten(state, sql, analysis, context, batch, declaredParamCount);
  const missedNow = [...policies.missed].slice(missedBefore).filter((key) => !state.catalog.recentlyConfirmedMissing(key)
    && !namesSystemRelation(key, policies.snapshot, context.schema.scope));
  if (missedNow.length === 0) return rewritten(state, sql, analysis, context, batch, declaredParamCount);
  return analysedAfterMiss(state, sql, missedNow, domain, batch, declaredParamCount);
}

/**
 * A relation the catalog does not know (created by another session since the last load), or a
 * function or operator: look again before deciding it has no protected columns, or is volatile —
 * after the session's turn (SessionMissPacing), so one client cannot keep the catalog read.
 */
async function analysedAfterMiss(
  state: PolicySessionState, sql: string, missedNow: readonly string[], domain: number, batch: number, declaredParamCount: number,
): Promise<RewrittenStatement> {
  const turn = state.missPacing.delayFor(Date.now());
  if (turn > 0) await new Promise((resolve) => setTimeout(resolve, turn));
  await state.catalog.afterMiss();
  const policies = await state.policies();
  const context = state.statementContext(policies, domain);
  const analysis = analyse(sql, context);
  state.catalog.confirmMissing(missedNow.filter((key) => policies.missed.has(key)));
  return rewritten(state, sql, analysis, context, batch, declaredParamCount);
}

/** Throws PolicyRefusal (synchronously) for a text that must not be forwarded. */
function rewritten(
  state: PolicySessionState, sql: string, analysis: SqlAnalysis, context: StatementContext, batch: number, declaredParamCount: number,
): RewrittenStatement | Promise<RewrittenStatement> {
  const policies = context.policies;
  const ruleRefusal = statementRuleRefusal(analysis, state.rights());
  if (ruleRefusal) throw ruleRefusal;
  const settingsRefusal = state.settings.check(sql, analysis, policies);
  if (settingsRefusal) throw settingsRefusal;
  // DDL this session sent may be invisible to the catalog (uncommitted, or unanswered), and DDL
  // earlier in this text certainly is: statements that rely on what it changed are refused
  // (before rewriting: the analysis of such a statement used column lists that may be wrong).
  const unsure = state.ddlPending || state.uncommittedDdl;
  const facts = unsure || !state.pendingSchema.isEmpty || changesCatalog(analysis) ? schemaFactsOf(sql) : undefined;
  if (facts !== undefined) {
    const refusal = state.pendingSchema.check(facts, policies, unsure);
    if (refusal !== undefined) throw refusal;
  }
  const unchanged = unchangedStatement(sql, analysis, context, declaredParamCount);
  if (unchanged !== undefined) {
    if (facts !== undefined) state.pendingSchema.record(facts, policies);
    return unchanged;
  }
  return rewrittenByWritePath(state, sql, analysis, context, batch, declaredParamCount, facts);
}

/** A text the write path rewrites (a function of its own: its closure's context is made only on this path). */
function rewrittenByWritePath(
  state: PolicySessionState, sql: string, analysis: SqlAnalysis, context: StatementContext, batch: number, declaredParamCount: number,
  facts: ReturnType<typeof schemaFactsOf> | undefined,
): RewrittenStatement | Promise<RewrittenStatement> {
  const policies = context.policies;
  const settled = (done: RewrittenStatement): RewrittenStatement => {
    if (facts !== undefined) state.pendingSchema.record(facts, policies);
    if (done.changesCatalog) state.ddlPending = true;
    return done;
  };
  const statement = rewriteStatement(sql, analysis, context, declaredParamCount, executePlanLookup(state, batch, context));
  return statement instanceof Promise ? statement.then(settled) : settled(statement);
}
