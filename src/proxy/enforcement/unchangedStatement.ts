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
    params: new Map(),
    extraParams: new Map(),
    clientParamCount,
    preparedPlans: analysis.statements.map(() => undefined),
    executedPlans: new Map(),
    copies: [],
    changesCatalog: false,
    analysis,
    resolutionKey: context.schema.resolutionKey,
  };
}
