/**
 * Walks expressions for values flowing into protected columns.
 *
 * - Comparisons that keep working on deterministic tokens — `=`, `<>`, IS [NOT] DISTINCT FROM,
 *   IN (…), `= ANY(…)`, `<> ALL(…)`, `CASE col WHEN …`, IN (subquery) — map each parameter or
 *   constant compared with a protected column to that column; anything else compared with a
 *   protected column is refused. This holds wherever the comparison appears.
 * - In a predicate (WHERE, JOIN … ON, HAVING, FILTER, ON CONFLICT … WHERE) a protected column may
 *   appear only in those comparisons and in IS [NOT] NULL: LIKE, ranges, functions or operators
 *   over it are refused, because on tokens they silently answer wrongly.
 * - In a read position (select list, ORDER BY, GROUP BY, RETURNING) anything goes: no value flows in.
 */
import type { A_Expr, CaseExpr, FuncCall, Node, SubLink } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { isProtectedOrigin, type Scope } from './nameScope.js';
import {
  describeOperator, operandOf, operandPosition, recordLiteral, unprotectableReason, type Operand,
} from './operands.js';
import { forEachChild, lastName, nodeLocation, stripCasts } from './parseTree.js';
import { checkFunctionCall, checkOperatorUse } from './plaintextExposure.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { rejectColumn } from './statementFindings.js';
import { feedSupplied } from './suppliedValues.js';

export type ExpressionMode = 'predicate' | 'read';

/** Aggregates whose argument is not a value use (`count(ssn) > 1` is fine in HAVING). */
const VALUE_FREE_AGGREGATES = new Set(['count']);

export function analyseExpression(node: Node | undefined, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  if (node === undefined) return;
  checkOperatorUse(node, scope, context);
  if ('A_Expr' in node) return analyseOperator(node.A_Expr, scope, mode, context);
  if ('SubLink' in node) return analyseSubLink(node.SubLink, scope, mode, context);
  if ('CaseExpr' in node) return analyseCase(node.CaseExpr, scope, mode, context);
  if ('FuncCall' in node) return analyseFunction(node.FuncCall, scope, mode, context);
  if ('NullTest' in node) {
    const argument = node.NullTest.arg;
    if (argument !== undefined && isColumnLike(operandOf(argument, scope, context))) return;
    return analyseExpression(argument, scope, mode, context);
  }
  if ('ColumnRef' in node) {
    const operand = operandOf(node, scope, context);
    if (operand.kind === 'supplied') context.findings.addSuppliedMisuse(operand.source, 'is also used in an expression, a sort or grouping key or a whole row');
    if (mode === 'predicate') refuseInPredicate(operand, 'is used in an expression pgveil cannot map');
    return;
  }
  if ('SelectStmt' in node || 'InsertStmt' in node || 'UpdateStmt' in node || 'DeleteStmt' in node || 'MergeStmt' in node) {
    context.subquery(node, scope);
    return;
  }
  forEachChild(node, (child) => analyseExpression(child, scope, mode, context));
}

/** IS [NOT] NULL answers the same on tokens: NULL stays NULL. */
function isColumnLike(operand: Operand): boolean {
  return operand.kind === 'protected' || operand.kind === 'derived' || operand.kind === 'column' || operand.kind === 'supplied';
}

/** What a refused filter on a protected column may do instead: tokens and fpe ciphertext keep neither order nor text. */
const EQUALITY_ONLY = ' (protected values keep equality only, not order or text: compare the column itself with = or IN, or filter on an unprotected column)';

/** In a predicate, a protected column (or data derived from one) here would be compared wrongly. */
function refuseInPredicate(operand: Operand, reason: string): void {
  if (operand.kind === 'protected') rejectColumn(operand.column, `it ${reason}`, operandPosition(operand));
  if (operand.kind === 'derived') rejectColumn(operand.from, `data computed from it ${reason}`, operandPosition(operand));
}

function isEqualityOperator(operator: string): boolean {
  return operator === '=' || operator === '<>';
}

function analyseOperator(expression: A_Expr, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const operator = lastName(expression.name);
  const { kind, lexpr, rexpr } = expression;
  if (lexpr !== undefined && rexpr !== undefined) {
    if ((kind === 'AEXPR_OP' && isEqualityOperator(operator)) || kind === 'AEXPR_DISTINCT' || kind === 'AEXPR_NOT_DISTINCT') {
      return compareOperands(operandOf(lexpr, scope, context), operandOf(rexpr, scope, context), scope, mode, context);
    }
    if (kind === 'AEXPR_IN' && 'List' in rexpr) {
      const left = operandOf(lexpr, scope, context);
      for (const item of rexpr.List.items ?? []) compareOperands(left, operandOf(item, scope, context), scope, mode, context);
      return;
    }
    if ((kind === 'AEXPR_OP_ANY' || kind === 'AEXPR_OP_ALL') && isEqualityOperator(operator)) {
      return compareWithArray(operandOf(lexpr, scope, context), rexpr, scope, mode, context);
    }
  }
  // Any other operator: LIKE, ranges, BETWEEN, arithmetic, concatenation…
  const operands: Node[] = [];
  if (lexpr !== undefined) operands.push(lexpr);
  if (rexpr !== undefined) operands.push(...('List' in rexpr ? rexpr.List.items ?? [] : [rexpr]));
  if (mode === 'predicate') {
    const operatorName = describeOperator(kind, operator);
    for (const operand of operands) refuseInPredicate(operandOf(operand, scope, context), `is used with ${operatorName}, which does not work on protected values${EQUALITY_ONLY}`);
  }
  for (const operand of operands) analyseExpression(operand, scope, mode, context);
}

/** `left = right` and its kin: map values compared with a protected column, refuse the rest. */
export function compareOperands(left: Operand, right: Operand, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  if (left.kind === 'row' || right.kind === 'row') return compareRows(left, right, scope, mode, context);
  if (left.kind === 'supplied' || right.kind === 'supplied') return compareSupplied(left, right, scope, mode, context);
  const leftProtected = left.kind === 'protected' || left.kind === 'derived';
  const rightProtected = right.kind === 'protected' || right.kind === 'derived';
  if (!leftProtected && !rightProtected) {
    notePlainComparison(left, right, context);
    notePlainComparison(right, left, context);
    analyseOperand(left, scope, mode, context);
    analyseOperand(right, scope, mode, context);
    return;
  }
  if (left.kind === 'derived' || right.kind === 'derived') {
    const derived = (left.kind === 'derived' ? left : right) as Extract<Operand, { kind: 'derived' }>;
    rejectColumn(derived.from, 'an expression computed from it is compared with a value; only the column itself can be compared', operandPosition(derived));
  }
  if (left.kind === 'protected' && right.kind === 'protected') {
    context.findings.addComparison(left.column, right.column);
    return;
  }
  const [column, other] = left.kind === 'protected' ? [left, right] : [right as Extract<Operand, { kind: 'protected' }>, left];
  feedComparison(column.column, other, context);
}

/** A supplied column compared with a protected column is protected for it; compared with anything else, it is not. */
function compareSupplied(left: Operand, right: Operand, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const [supplied, other] = (left.kind === 'supplied' ? [left, right] : [right, left]) as [Extract<Operand, { kind: 'supplied' }>, Operand];
  if (other.kind === 'protected') return feedSupplied(supplied.source, other.column, operandPosition(supplied), context);
  if (other.kind === 'derived') {
    rejectColumn(other.from, 'an expression computed from it is compared with a value; only the column itself can be compared', operandPosition(other));
  }
  context.findings.addSuppliedMisuse(supplied.source, 'is also compared with something other than a protected column');
  notePlainComparison(other, supplied, context);
  analyseOperand(other, scope, mode, context);
}

/** A parameter or constant compared with something else than a protected column keeps its own value there. */
function notePlainComparison(value: Operand, other: Operand, context: AnalysisContext): void {
  if (value.kind !== 'param' && value.kind !== 'literal') return;
  if (other.kind === 'param' || other.kind === 'literal' || other.kind === 'null') return;
  context.findings.addPlainComparedValue(value.kind === 'literal' ? value.constant.location ?? 0 : nodeLocation(value.node));
}

/** Records a value compared with a protected column, or refuses what cannot be protected. */
function feedComparison(column: ColumnRef, other: Operand, context: AnalysisContext): void {
  switch (other.kind) {
    case 'param': return context.findings.addParam(other.param, column, nodeLocation(other.node));
    case 'literal': return recordLiteral(other.constant, column, context);
    case 'null': return;
    default: rejectColumn(column, `it is compared with ${unprotectableReason(other)}`, operandPosition(other));
  }
}

function compareRows(left: Operand, right: Operand, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const leftItems = rowOperands(left, scope, context);
  const rightItems = rowOperands(right, scope, context);
  if (leftItems !== undefined && rightItems !== undefined && leftItems.length === rightItems.length) {
    leftItems.forEach((item, index) => compareOperands(item, rightItems[index] as Operand, scope, mode, context));
    return;
  }
  for (const side of [left, right]) {
    const items = side.kind === 'row' ? side.items : [side.node];
    for (const item of items) {
      const operand = operandOf(item, scope, context);
      if (operand.kind === 'protected') rejectColumn(operand.column, 'it is compared as part of a row value pgveil cannot match up', operandPosition(operand));
      analyseOperand(operand, scope, mode, context);
    }
  }
}

/** The items of a row constructor, or the output columns of a row subquery `(SELECT a, b …)`. */
function rowOperands(operand: Operand, scope: Scope, context: AnalysisContext): Operand[] | undefined {
  if (operand.kind === 'row') return operand.items.map((item) => operandOf(item, scope, context));
  const node = operand.node;
  if ('SubLink' in node && node.SubLink.subLinkType === 'EXPR_SUBLINK') return subqueryOperands(node.SubLink, scope, context);
  return undefined;
}

/** A subquery's output columns as operands: protected ones compare like the columns they are. */
function subqueryOperands(link: SubLink, scope: Scope, context: AnalysisContext): Operand[] {
  const node: Node = { SubLink: link };
  const outputs = link.subselect === undefined ? [] : context.subquery(link.subselect, scope);
  return outputs.map((output): Operand => {
    if (isProtectedOrigin(output.origin)) return { kind: 'protected', column: output.origin.column, node };
    if (output.origin.kind === 'derived') return { kind: 'derived', from: output.origin.from, node };
    if (output.origin.kind === 'supplied') return { kind: 'supplied', source: output.origin.source, node };
    return { kind: 'subquery', node };
  });
}

/** `left = ANY(right)` / `left <> ALL(right)`: an array parameter or an ARRAY[…] of values. */
function compareWithArray(left: Operand, right: Node, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const array = stripCasts(right);
  if ('A_ArrayExpr' in array) {
    for (const element of array.A_ArrayExpr.elements ?? []) compareOperands(left, operandOf(element, scope, context), scope, mode, context);
    return;
  }
  if (left.kind === 'protected') {
    if ('ParamRef' in array) return context.findings.addArrayParam(array.ParamRef.number ?? 0, left.column, nodeLocation(array));
    if ('A_Const' in array && array.A_Const.isnull === true) return;
    // '{a,b}': each element protected, the constant spliced back whole (as under unnest).
    if ('A_Const' in array && array.A_Const.sval !== undefined) return recordLiteral(array.A_Const, left.column, context, true);
    const reason = 'A_Const' in array
      ? 'an array constant that is not a quoted string cannot be protected element by element; use ARRAY[…] or an array parameter'
      : `it is compared with ANY/ALL over ${unprotectableReason(operandOf(array, scope, context))}`;
    rejectColumn(left.column, reason, nodeLocation(array));
  }
  if (left.kind === 'derived') refuseInPredicate(left, 'is compared with an array; only the column itself can be');
  if (left.kind === 'supplied') context.findings.addSuppliedMisuse(left.source, 'is also compared with an array');
  analyseOperand(left, scope, mode, context);
  analyseExpression(right, scope, mode, context);
}

function analyseOperand(operand: Operand, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  switch (operand.kind) {
    case 'param': case 'literal': case 'null': case 'default': case 'subquery': return;
    case 'supplied': return context.findings.addSuppliedMisuse(operand.source, 'is also compared with something other than a protected column');
    default: analyseExpression(operand.node, scope, mode, context);
  }
}

function analyseSubLink(link: SubLink, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const rightOperands = subqueryOperands(link, scope, context);
  const { testexpr } = link;
  if (testexpr === undefined) {
    // A scalar or ARRAY(…) subquery inside an expression: its value goes wherever the expression does.
    if (link.subLinkType !== 'EXISTS_SUBLINK') {
      for (const operand of rightOperands) {
        if (operand.kind === 'supplied') context.findings.addSuppliedMisuse(operand.source, 'is also used in an expression through a subquery');
      }
    }
    return;
  }
  const node: Node = { SubLink: link };
  const operator = link.operName === undefined ? '=' : lastName(link.operName);
  const left = operandOf(testexpr, scope, context);
  const testItems = left.kind === 'row' ? left.items.map((item) => operandOf(item, scope, context)) : [left];
  const comparable = (link.subLinkType === 'ANY_SUBLINK' || link.subLinkType === 'ALL_SUBLINK' || link.subLinkType === 'ROWCOMPARE_SUBLINK')
    && isEqualityOperator(operator);
  testItems.forEach((item, index) => {
    const right = rightOperands[index] ?? { kind: 'subquery', node };
    const involvesProtection = item.kind === 'protected' || item.kind === 'derived' || right.kind === 'protected' || right.kind === 'derived';
    const involvesSupplied = item.kind === 'supplied' || right.kind === 'supplied';
    if (!involvesProtection && !involvesSupplied) return analyseOperand(item, scope, mode, context);
    if (!comparable && involvesProtection) {
      const column = item.kind === 'protected' ? item.column : right.kind === 'protected' ? right.column
        : item.kind === 'derived' ? item.from : (right as Extract<Operand, { kind: 'derived' }>).from;
      rejectColumn(column, `it is compared with a subquery by ${operator}, which does not work on protected values`, nodeLocation(testexpr));
    }
    compareOperands(item, right, scope, mode, context);
  });
}

function analyseCase(expression: CaseExpr, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const subject = expression.arg === undefined ? undefined : operandOf(expression.arg, scope, context);
  for (const when of expression.args ?? []) {
    if (!('CaseWhen' in when)) continue;
    const { expr, result } = when.CaseWhen;
    // `CASE col WHEN v …` compares col = v.
    if (subject !== undefined && expr !== undefined) compareOperands(subject, operandOf(expr, scope, context), scope, mode, context);
    else analyseExpression(expr, scope, mode, context);
    analyseExpression(result, scope, mode, context);
  }
  analyseExpression(expression.defresult, scope, mode, context);
}

function analyseFunction(call: FuncCall, scope: Scope, mode: ExpressionMode, context: AnalysisContext): void {
  const name = lastName(call.funcname);
  checkFunctionCall(call, scope, context);
  const argumentMode = VALUE_FREE_AGGREGATES.has(name) ? 'read' : mode;
  if (argumentMode === 'predicate') {
    for (const argument of call.args ?? []) {
      refuseInPredicate(operandOf(argument, scope, context), `is passed to function ${name}(), which does not work on protected values${EQUALITY_ONLY}`);
    }
  }
  for (const argument of call.args ?? []) analyseExpression(argument, scope, argumentMode, context);
  for (const order of call.agg_order ?? []) analyseExpression(order, scope, 'read', context);
  analyseExpression(call.agg_filter, scope, 'predicate', context);
  if (call.over !== undefined) {
    for (const partition of call.over.partitionClause ?? []) analyseExpression(partition, scope, 'read', context);
    for (const order of call.over.orderClause ?? []) analyseExpression(order, scope, 'read', context);
  }
}
