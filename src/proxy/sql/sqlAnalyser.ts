/**
 * The entry point: one SQL text (a Query message, possibly several statements, or a Parse
 * message with `$n` parameters) → per statement, which parameters and constants feed which
 * protected columns, COPY targets, and rejections. Pure: the result depends only on the text and
 * the ProtectedSchema's answers.
 */
import type { Node, RawStmt } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { UNKNOWN_COLUMNS, type OutputColumn, type Scope } from './nameScope.js';
import { copyShape } from './copyStatement.js';
import { forEachChild, nodeType } from './parseTree.js';
import { findProtectedTableMention } from './protectedNameScan.js';
import { analyseExpression } from './expressionAnalyser.js';
import { analyseSelect } from './queryAnalyser.js';
import { RelationLookup, sameColumn } from './relationLookup.js';
import type { ColumnRef, ParamUse, PlaintextExposure, ProtectedSchema, RuleFinding, SqlAnalysis, StatementAnalysis } from './sqlAnalysisTypes.js';
import { parseSql, SqlSyntaxError } from './sqlParser.js';
import { SqlText } from './sqlText.js';
import {
  rejectColumn, rejectStatement, StatementFindings, StatementRejected, SYNTAX_ERROR_SQLSTATE,
} from './statementFindings.js';
import { preparedNameUseOf } from './preparedNames.js';
import { statementRuleFindings } from './statementRules.js';
import { sessionEffectsOf, unknownSessionEffects } from './sessionEffects.js';
import { analyseStatement } from './statementKinds.js';
import { analyseDelete, analyseInsert, analyseMerge, analyseUpdate } from './writeStatements.js';
import { settingWordsOf } from './settingWords.js';

export function analyseSql(sql: string, schema: ProtectedSchema): SqlAnalysis {
  const text = new SqlText(sql);
  const relations = lookupIn(schema);
  if (sql.includes('\u0000')) {
    return summarise(sql, [unparsedStatement(text, 'pgveil refused the statement: the SQL text contains a NUL character')]);
  }
  if (sql.trim() === '') return summarise(sql, []);
  let statements: readonly RawStmt[];
  try {
    statements = parseSql(sql).stmts ?? [];
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
    // PostgreSQL will answer with the syntax error itself — unless the text names a protected
    // table: then pgveil cannot tell what the server would make of it, so it is not forwarded.
    const table = findProtectedTableMention(sql, schema, relations);
    const message = table === undefined
      ? undefined
      : `pgveil refused the statement: it does not parse (${error.message}) and mentions protected table ${table}`;
    // Forwarded text the server may still run: what it does to search_path is unknown.
    return summarise(sql, [{ ...unparsedStatement(text, message), sessionEffects: unknownSessionEffects() }]);
  }
  return summarise(sql, analyseInOrder(statements, text, schema, relations));
}

function lookupIn(schema: ProtectedSchema): RelationLookup {
  return new RelationLookup(schema, (message) => rejectStatement(message, undefined));
}

/** Statement by statement: one that changes search_path changes what the later ones' names denote. */
function analyseInOrder(statements: readonly RawStmt[], text: SqlText, schema: ProtectedSchema, relations: RelationLookup): StatementAnalysis[] {
  const analysed: StatementAnalysis[] = [];
  let current = schema;
  let lookup = relations;
  for (const raw of statements) {
    const statement = analyseRawStatement(raw, text, lookup);
    const effects = sessionEffectsOf(raw.stmt, text.slice(statement.start, statement.end));
    const preparedNames = preparedNameUseOf(raw.stmt, text);
    const named = preparedNames.effects.length + preparedNames.executes.length === 0 ? statement : { ...statement, preparedNames };
    analysed.push(effects.length === 0 ? named : { ...named, sessionEffects: effects });
    if (effects.length > 0 && current.afterStatement !== undefined) {
      current = current.afterStatement(effects);
      lookup = lookupIn(current);
    }
  }
  return analysed;
}

function unparsedStatement(text: SqlText, message: string | undefined): StatementAnalysis {
  return {
    ...emptyStatement(0, text.byteLength, 'Unparsed'),
    rejection: message === undefined ? undefined : { message, sqlState: SYNTAX_ERROR_SQLSTATE },
  };
}

function emptyStatement(start: number, end: number, type: string): StatementAnalysis {
  return {
    start, end, type, params: [], arrayParams: [], literals: [], comparedColumns: [], copyFrom: undefined, rejection: undefined,
    exposures: [], opaqueRead: undefined,
  };
}

function analyseRawStatement(raw: RawStmt, text: SqlText, relations: RelationLookup): StatementAnalysis {
  const start = raw.stmt_location ?? 0;
  const end = raw.stmt_len === undefined || raw.stmt_len === 0 ? text.byteLength : start + raw.stmt_len;
  const type = nodeType(raw.stmt) ?? 'Empty';
  const findings = new StatementFindings();
  try {
    analyseStatement(raw.stmt, createContext(text, relations, findings), { text: text.slice(start, end) });
    findings.refuseConflictingSuppliedUses();
    refuseScalarAndArrayUse(findings);
  } catch (error) {
    if (error instanceof StatementRejected) {
      // The statement rules still speak first: they name the rule and the privilege that lifts it.
      return { ...emptyStatement(start, end, type), rejection: error.rejection, ...withRules(statementRuleFindings(raw.stmt, relations)) };
    }
    throw error;
  }
  return {
    start, end, type,
    params: findings.params,
    arrayParams: findings.arrayParams,
    literals: findings.literals,
    comparedColumns: findings.comparedColumns,
    copyFrom: findings.copyFrom,
    ...(raw.stmt !== undefined && 'CopyStmt' in raw.stmt ? { copy: copyShape(raw.stmt.CopyStmt) } : {}),
    rejection: undefined,
    exposures: findings.exposures,
    opaqueRead: findings.opaqueRead,
    ...withRules(statementRuleFindings(raw.stmt, relations)),
    ...withParamUses(raw.stmt),
    ...(findings.plainComparedValues.length === 0 ? {} : { plainComparedValues: findings.plainComparedValues }),
  };
}

/** Every `$n` token of the statement, in text order. */
function withParamUses(node: Node | undefined): { paramUses?: readonly ParamUse[] } {
  if (node === undefined) return {};
  const uses: ParamUse[] = [];
  const visit = (child: Node): void => {
    if ('ParamRef' in child) {
      // A location of 0 is omitted from the parser's JSON.
      uses.push({ param: child.ParamRef.number ?? 0, location: child.ParamRef.location ?? 0 });
      return;
    }
    forEachChild(child, visit);
  };
  visit(node);
  uses.sort((a, b) => a.location - b.location);
  return uses.length === 0 ? {} : { paramUses: uses };
}

function withRules(rules: RuleFinding[]): { rules?: readonly RuleFinding[] } {
  return rules.length === 0 ? {} : { rules };
}

/** One `$n` cannot be both a value and an array of values: its Bind value could not be protected. */
function refuseScalarAndArrayUse(findings: StatementFindings): void {
  for (const target of findings.arrayParams) {
    if (findings.params.some((scalar) => scalar.param === target.param)) {
      rejectColumn(target.column, `parameter $${target.param} is used both as one value and as an array of values`, undefined);
    }
  }
}

function createContext(text: SqlText, relations: RelationLookup, findings: StatementFindings): AnalysisContext {
  const analysed = new WeakMap<Node, readonly OutputColumn[]>();
  const context: AnalysisContext = {
    text,
    relations,
    findings,
    subquery(node: Node, outer: Scope): readonly OutputColumn[] {
      const known = analysed.get(node);
      if (known !== undefined) return known;
      const outputs = analyseQuery(node, outer, context);
      analysed.set(node, outputs);
      return outputs;
    },
  };
  return context;
}

function analyseQuery(node: Node, outer: Scope, context: AnalysisContext): readonly OutputColumn[] {
  if ('SelectStmt' in node) return analyseSelect(node.SelectStmt, outer, context);
  if ('InsertStmt' in node) return analyseInsert(node.InsertStmt, outer, context);
  if ('UpdateStmt' in node) return analyseUpdate(node.UpdateStmt, outer, context);
  if ('DeleteStmt' in node) return analyseDelete(node.DeleteStmt, outer, context);
  if ('MergeStmt' in node) return analyseMerge(node.MergeStmt, outer, context);
  forEachChild(node, (child) => analyseExpression(child, outer, 'read', context));
  return [UNKNOWN_COLUMNS];
}

function summarise(sql: string, statements: readonly StatementAnalysis[]): SqlAnalysis {
  const paramColumns = new Map<number, ColumnRef[]>();
  const exposures: PlaintextExposure[] = [];
  let passThrough = true;
  for (const statement of statements) {
    for (const target of [...statement.params, ...statement.arrayParams]) {
      const columns = paramColumns.get(target.param) ?? [];
      if (!columns.some((column) => sameColumn(column, target.column))) columns.push(target.column);
      paramColumns.set(target.param, columns);
    }
    exposures.push(...statement.exposures);
    if (statement.rejection !== undefined || statement.params.length > 0 || statement.arrayParams.length > 0
      || statement.literals.length > 0 || statement.comparedColumns.length > 0 || statement.copyFrom !== undefined
      || statement.exposures.length > 0 || statement.opaqueRead !== undefined) {
      passThrough = false;
    }
  }
  return {
    statements,
    rejection: statements.find((statement) => statement.rejection !== undefined)?.rejection,
    paramColumns,
    exposures,
    opaqueRead: statements.find((statement) => statement.opaqueRead !== undefined)?.opaqueRead,
    passThrough,
    settingWords: settingWordsOf(sql),
  };
}
