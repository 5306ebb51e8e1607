/**
 * A text whose analysis found nothing to protect, check or follow is forwarded as it came: its
 * rewriting is known without running the write path (no parameter plan, no constant to protect,
 * no COPY, no PREPARE or EXECUTE, no catalog change). Answering it here, synchronously, keeps the
 * message off the asynchronous path; anything else goes through `rewriteStatement`, which gives
 * the same result for these texts (the tests compare the two).
 */
import type { SqlAnalysis, StatementAnalysis } from '../sql/index.js';
import type { RewrittenStatement, StatementContext } from './writePath/statementRewriter.js';

/** Statement kinds that change no catalog and carry nothing the rewriter acts on when their analysis is empty. */
const UNCHANGED_KINDS: ReadonlySet<string> = new Set([
  'SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'TransactionStmt', 'VariableSetStmt', 'VariableShowStmt',
]);

/** Shared by every unchanged text: the types make them read-only, and a text that needs nothing fills none. */
const NO_PARAMS: ReadonlyMap<number, never> = new Map<number, never>();
const NO_EXECUTED: ReadonlyMap<string, string> = new Map<string, string>();
const NO_COPIES: readonly never[] = Object.freeze([]);
const ONE_STATEMENT_PLANS: readonly undefined[] = Object.freeze([undefined]);

function needsNothing(statement: StatementAnalysis): boolean {
  return UNCHANGED_KINDS.has(statement.type) && statement.rejection === undefined
    && statement.params.length === 0 && statement.arrayParams.length === 0 && statement.literals.length === 0
    && statement.comparedColumns.length === 0 && statement.copyFrom === undefined && statement.copy === undefined
    && statement.exposures.length === 0 && statement.opaqueRead === undefined && statement.preparedNames === undefined;
}

/**
 * The rewriting of `sql` when it needs none (the text itself, no plans), else undefined.
 * `declaredParamCount`: the parameter types a Parse declared.
 */
export function unchangedStatement(sql: string, analysis: SqlAnalysis, context: StatementContext, declaredParamCount = 0): RewrittenStatement | undefined {
  if (analysis.rejection !== undefined || analysis.exposures.length > 0 || analysis.opaqueRead !== undefined) return undefined;
  let clientParamCount = declaredParamCount;
  for (const statement of analysis.statements) {
    if (!needsNothing(statement)) return undefined;
    for (const use of statement.paramUses ?? []) clientParamCount = Math.max(clientParamCount, use.param);
  }
  return {
    sql,
    params: NO_PARAMS,
    extraParams: NO_PARAMS,
    clientParamCount,
    preparedPlans: analysis.statements.length === 1 ? ONE_STATEMENT_PLANS : analysis.statements.map(() => undefined),
    preparedTexts: analysis.statements.length === 1 ? ONE_STATEMENT_PLANS : analysis.statements.map(() => undefined),
    executedPlans: NO_EXECUTED,
    copies: NO_COPIES,
    changesCatalog: false,
    analysis,
    resolutionKey: context.schema.resolutionKey,
    schemaKey: context.schemaKey,
    policies: context.policies,
  };
}
