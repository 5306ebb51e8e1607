/**
 * SQL analysis for the proxy's write path: which `$n` and which constant of a statement feeds which
 * protected column, COPY targets, and what to refuse. Call `loadSqlParser()` once at start-up.
 */
export { loadSqlParser } from './sqlParser.js';
export { forgetParsed, OFF_THREAD_PARSE_LENGTH, parseAhead } from './parseWorker.js';
export { analyseSql } from './sqlAnalyser.js';
export { SqlAnalysisCache, type SqlAnalysisCacheOptions } from './sqlAnalysisCache.js';
export { spliceLiterals, spliceText, quoteLiteral, type LiteralReplacement, type TextReplacement } from './spliceLiterals.js';
export { schemaFactsOf, type RelationName, type SchemaChange, type StatementSchemaFacts } from './schemaChanges.js';
export { sessionEffectsOf, unknownSessionEffects, type SessionEffect, type TransactionAction } from './sessionEffects.js';
export { statementRuleFindings } from './statementRules.js';
export { preparedNameUseOf, type ExecuteArgument, type ExecuteUse, type PreparedNameEffect, type PreparedNameUse } from './preparedNames.js';
export { parseSearchPath } from './searchPathValue.js';
export type {
  ColumnComparison, ColumnRef, CopyColumn, CopyFormat, CopyFromTarget, CopyOptions, CopyShape, LiteralTarget,
  ParamTarget, ParamUse, PlaintextExposure, PlaintextSource, ProtectedSchema, Rejection, ResolvedTable, RuleFinding, SqlAnalysis,
  StatementAnalysis, StatementRule,
} from './sqlAnalysisTypes.js';
