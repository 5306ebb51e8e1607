/**
 * What an expression is, as far as protection cares: a parameter, a constant, NULL/DEFAULT, a
 * protected column (or a subquery yielding one), something derived from a protected column, or
 * anything else. Plain casts are looked through on both sides (`$1::text`, `ssn::text`): the
 * value inside is what gets protected; the cast then applies to the token.
 */
import type { A_Const, Node } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { constantValue } from './constantValues.js';
import { isProtectedOrigin, type Scope, type SuppliedColumn } from './nameScope.js';
import { lastName, nodeLocation, nodeType, stringList, stripCasts, forEachChild } from './parseTree.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { SqlSyntaxError } from './sqlParser.js';
import { rejectColumn } from './statementFindings.js';

export type Operand =
  | { readonly kind: 'param'; readonly param: number; readonly node: Node }
  | { readonly kind: 'literal'; readonly constant: A_Const; readonly node: Node }
  | { readonly kind: 'null'; readonly node: Node }
  | { readonly kind: 'default'; readonly node: Node }
  | { readonly kind: 'protected'; readonly column: ColumnRef; readonly node: Node }
  | { readonly kind: 'derived'; readonly from: ColumnRef; readonly node: Node }
  | { readonly kind: 'row'; readonly items: readonly Node[]; readonly node: Node }
  /** A column of a derived source passing client values through (see suppliedValues.ts). */
  | { readonly kind: 'supplied'; readonly source: SuppliedColumn; readonly node: Node }
  /** A column that is not protected, or a relation nobody knows. */
  | { readonly kind: 'column'; readonly node: Node }
  /** A subquery yielding no protected column (already analysed). */
  | { readonly kind: 'subquery'; readonly node: Node }
  | { readonly kind: 'expression'; readonly node: Node };

export function operandOf(node: Node, scope: Scope, context: AnalysisContext): Operand {
  const inner = stripCasts(node);
  if ('ParamRef' in inner) return { kind: 'param', param: inner.ParamRef.number ?? 0, node: inner };
  if ('A_Const' in inner) {
    return inner.A_Const.isnull === true ? { kind: 'null', node: inner } : { kind: 'literal', constant: inner.A_Const, node: inner };
  }
  if ('SetToDefault' in inner) return { kind: 'default', node: inner };
  if ('RowExpr' in inner) return { kind: 'row', items: inner.RowExpr.args ?? [], node: inner };
  if ('ColumnRef' in inner) {
    const resolution = scope.resolve(inner.ColumnRef.fields);
    if (resolution.kind === 'column') {
      const origin = resolution.origin;
      if (isProtectedOrigin(origin)) return { kind: 'protected', column: origin.column, node: inner };
      if (origin.kind === 'derived') return { kind: 'derived', from: origin.from, node: inner };
      if (origin.kind === 'supplied') return { kind: 'supplied', source: origin.source, node: inner };
    } else if (resolution.kind === 'wholeRow') {
      for (const column of resolution.item.columns) {
        if (column.origin.kind === 'supplied') context.findings.addSuppliedMisuse(column.origin.source, 'is read as part of a whole row');
      }
      const hidden = resolution.item.columns.find((column) => isProtectedOrigin(column.origin));
      if (hidden !== undefined && isProtectedOrigin(hidden.origin)) {
        return { kind: 'derived', from: hidden.origin.column, node: inner };
      }
    }
    return { kind: 'column', node: inner };
  }
  if ('SubLink' in inner && inner.SubLink.subLinkType === 'EXPR_SUBLINK' && inner.SubLink.subselect !== undefined) {
    const first = context.subquery(inner.SubLink.subselect, scope)[0];
    if (first !== undefined && isProtectedOrigin(first.origin)) return { kind: 'protected', column: first.origin.column, node: inner };
    if (first?.origin.kind === 'derived') return { kind: 'derived', from: first.origin.from, node: inner };
    if (first?.origin.kind === 'supplied') return { kind: 'supplied', source: first.origin.source, node: inner };
    return { kind: 'subquery', node: inner };
  }
  return { kind: 'expression', node: inner };
}

/** Records a constant as feeding `column`: its exact byte range and decoded value. */
export function recordLiteral(constant: A_Const, column: ColumnRef, context: AnalysisContext, array = false): void {
  const decoded = constantValue(constant);
  const start = constant.location ?? 0;
  if (decoded.kind === 'null') return;
  if (decoded.kind === 'unsupported') rejectColumn(column, `${decoded.reason} cannot be protected`, start);
  let end: number | undefined;
  try {
    end = context.text.constantEnd(start);
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
  }
  if (end === undefined) rejectColumn(column, 'pgveil cannot locate the constant in the text', start);
  context.findings.addLiteral({ start, end, value: decoded.value, column, ...(array ? { array: true } : {}) });
}

/** A short name for an expression in rejection messages. */
export function describeExpression(node: Node): string {
  if ('FuncCall' in node) return `function ${lastName(node.FuncCall.funcname)}()`;
  if ('A_Expr' in node) return describeOperator(node.A_Expr.kind, lastName(node.A_Expr.name));
  if ('ColumnRef' in node) return `column ${stringList(node.ColumnRef.fields).join('.') || '*'}`;
  if ('SubLink' in node) return 'a subquery';
  if ('CaseExpr' in node) return 'a CASE expression';
  if ('CoalesceExpr' in node) return 'COALESCE';
  if ('CollateClause' in node) return 'COLLATE';
  if ('A_ArrayExpr' in node) return 'an ARRAY constructor';
  if ('RowExpr' in node) return 'a row constructor';
  if ('BoolExpr' in node) return 'a boolean expression';
  if ('SQLValueFunction' in node) return 'a built-in function';
  return `an expression (${nodeType(node) ?? 'empty'})`;
}

export function describeOperator(kind: string | undefined, operator: string): string {
  switch (kind) {
    case 'AEXPR_LIKE': return 'LIKE';
    case 'AEXPR_ILIKE': return 'ILIKE';
    case 'AEXPR_SIMILAR': return 'SIMILAR TO';
    case 'AEXPR_BETWEEN':
    case 'AEXPR_NOT_BETWEEN':
    case 'AEXPR_BETWEEN_SYM':
    case 'AEXPR_NOT_BETWEEN_SYM': return 'BETWEEN';
    case 'AEXPR_NULLIF': return 'NULLIF';
    case 'AEXPR_IN': return operator === '<>' ? 'NOT IN' : 'IN';
    default: return `operator ${operator}`;
  }
}

/** True when a parameter or a non-NULL constant appears anywhere inside `node`. */
export function containsValue(node: Node): boolean {
  if ('ParamRef' in node) return true;
  if ('A_Const' in node) return node.A_Const.isnull !== true;
  let found = false;
  forEachChild(node, (child) => {
    if (!found && containsValue(child)) found = true;
  });
  return found;
}

/** Why an operand cannot feed a protected column, as a noun phrase ("function lower() around …"). */
export function unprotectableReason(operand: Operand): string {
  const what = describeExpression(operand.node);
  switch (operand.kind) {
    case 'derived': return `${what}, computed from protected data`;
    case 'column': return `${what}, which is not protected`;
    case 'subquery': return 'a subquery whose result is not a protected column';
    case 'row': return 'a row value';
    case 'supplied': return `${what}, a derived column of client values`;
    case 'default': return 'DEFAULT';
    default:
      return containsValue(operand.node)
        ? `${what} around a parameter or constant, which hides the value to protect`
        : `${what}, whose value pgveil cannot protect`;
  }
}

export function operandPosition(operand: Operand): number | undefined {
  return operand.kind === 'literal' ? operand.constant.location ?? 0 : nodeLocation(operand.node);
}
