/**
 * The functions and operators an expression calls by name, and whether the ProtectedSchema takes
 * one of them as volatile (PostgreSQL's pg_proc.provolatile: a volatile routine may store what it
 * receives — in a setting, a sequence, a large object, a lock — where a later statement reads it
 * back). Operators hide in more syntax than `a op b`: LIKE, SIMILAR TO, IN, BETWEEN, NULLIF,
 * IS DISTINCT FROM, `op ANY (subquery)`, `CASE x WHEN …`, `ORDER BY … USING op`.
 */
import type { A_Expr, Node } from 'libpg-query';
import { stringList } from './parseTree.js';
import type { ProtectedSchema } from './sqlAnalysisTypes.js';

/** A routine as written: its name, and its schema when the statement qualifies it. */
interface RoutineName {
  readonly name: string;
  readonly schema: string | undefined;
}

function routineName(nodes: readonly Node[] | undefined): RoutineName {
  const names = stringList(nodes);
  return { name: names[names.length - 1] ?? '', schema: names.length > 1 ? names[names.length - 2] : undefined };
}

function shown(routine: RoutineName): string {
  return routine.schema === undefined ? routine.name : `${routine.schema}.${routine.name}`;
}

/** The function's name as written when the schema takes it as volatile (or does not know it). */
export function volatileFunction(funcname: readonly Node[] | undefined, schema: ProtectedSchema): string | undefined {
  if (schema.functionIsVolatile === undefined) return undefined;
  const routine = routineName(funcname);
  return schema.functionIsVolatile(routine.name, routine.schema) ? shown(routine) : undefined;
}

/** The operators a node calls and the values they receive (`subquery`: its result columns too). */
export interface OperatorUse {
  readonly operators: readonly RoutineName[];
  readonly operands: readonly Node[];
  readonly subquery?: Node;
}

const unqualified = (...names: string[]): RoutineName[] => names.map((name) => ({ name, schema: undefined }));

/** BETWEEN is `>=` and `<=`; NOT BETWEEN `<` and `>` (SYMMETRIC alike). */
function operatorsOf(expression: A_Expr): RoutineName[] {
  switch (expression.kind) {
    case 'AEXPR_BETWEEN': case 'AEXPR_BETWEEN_SYM': return unqualified('>=', '<=');
    case 'AEXPR_NOT_BETWEEN': case 'AEXPR_NOT_BETWEEN_SYM': return unqualified('<', '>');
    default: return [routineName(expression.name)];
  }
}

export function operatorUse(node: Node): OperatorUse | undefined {
  if ('A_Expr' in node) {
    const { lexpr, rexpr } = node.A_Expr;
    const operands: Node[] = [];
    if (lexpr !== undefined) operands.push(lexpr);
    if (rexpr !== undefined) operands.push(...('List' in rexpr ? rexpr.List.items ?? [] : [rexpr]));
    return { operators: operatorsOf(node.A_Expr), operands };
  }
  if ('SubLink' in node) {
    const { testexpr, operName, subselect } = node.SubLink;
    if (testexpr === undefined) return undefined;
    // `x IN (subquery)` carries no operator name: it is `= ANY`.
    const operators = operName === undefined ? unqualified('=') : [routineName(operName)];
    return subselect === undefined ? { operators, operands: [testexpr] } : { operators, operands: [testexpr], subquery: subselect };
  }
  if ('CaseExpr' in node && node.CaseExpr.arg !== undefined) {
    // `CASE x WHEN v …` compares x = v.
    const operands = [node.CaseExpr.arg];
    for (const when of node.CaseExpr.args ?? []) if ('CaseWhen' in when && when.CaseWhen.expr !== undefined) operands.push(when.CaseWhen.expr);
    return { operators: unqualified('='), operands };
  }
  if ('SortBy' in node && node.SortBy.useOp !== undefined && node.SortBy.node !== undefined) {
    return { operators: [routineName(node.SortBy.useOp)], operands: [node.SortBy.node] };
  }
  return undefined;
}

/** The first operator of the use the schema takes as volatile (or does not know), as written. */
export function volatileOperator(use: OperatorUse, schema: ProtectedSchema): string | undefined {
  if (schema.operatorIsVolatile === undefined) return undefined;
  for (const operator of use.operators) {
    if (schema.operatorIsVolatile(operator.name, operator.schema)) return shown(operator);
  }
  return undefined;
}
