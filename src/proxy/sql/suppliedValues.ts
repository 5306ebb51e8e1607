/**
 * Derived sources that only pass client values through — a VALUES list (in FROM, as a CTE or a
 * subquery), a select-list parameter or constant (`SELECT $1, 'x'`), `unnest` of array parameters
 * or ARRAY[…] — yield "supplied" columns that remember the parameters and constants behind them.
 * Where such a column feeds a protected column (INSERT … SELECT, SET col = v.x, MERGE arms) or is
 * compared with one, each value behind it is protected for that column, as INSERT … VALUES does.
 * Every other use is recorded; a supplied column both protected and used elsewhere is refused once
 * the statement is walked (StatementFindings.refuseConflictingSuppliedUses).
 */
import type { FuncCall, Node, RangeFunction } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import {
  VALUE_ORIGIN, type ColumnOrigin, type OutputColumn, type SuppliedColumn, type SuppliedValue,
} from './nameScope.js';
import { recordLiteral } from './operands.js';
import { lastName, stringList, stripCasts } from './parseTree.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { rejectColumn } from './statementFindings.js';

/** The values behind one expression: a parameter or constant (plain casts allowed), none for NULL. */
function valuesOf(node: Node): SuppliedValue[] | undefined {
  const inner = stripCasts(node);
  if ('ParamRef' in inner) return [{ kind: 'param', param: inner.ParamRef.number ?? 0, location: inner.ParamRef.location }];
  if ('A_Const' in inner) return inner.A_Const.isnull === true ? [] : [{ kind: 'literal', constant: inner.A_Const }];
  return undefined;
}

/** What a select-list entry carries when it is a parameter or constant itself. */
export function suppliedOrigin(node: Node): ColumnOrigin | undefined {
  const values = valuesOf(node) ?? selectListUnnest(node);
  return values === undefined ? undefined : { kind: 'supplied', source: { values } };
}

/** The origin of each column of a VALUES list: supplied when every row holds a value there. */
export function valuesListOrigins(rows: readonly (readonly Node[])[]): ColumnOrigin[] {
  // A loop, not Math.max(...rows): a VALUES list may have more rows than a call takes arguments.
  let width = 0;
  for (const row of rows) width = Math.max(width, row.length);
  return Array.from({ length: width }, (_, index): ColumnOrigin => {
    const values: SuppliedValue[] = [];
    for (const row of rows) {
      const item = row[index];
      const found = item === undefined ? undefined : valuesOf(item);
      if (found === undefined) return VALUE_ORIGIN;
      values.push(...found);
    }
    return { kind: 'supplied', source: { values } };
  });
}

/** Element types whose arrays unnest into one column each (a composite type would expand). */
const SCALAR_TYPES = new Set([
  'text', 'varchar', 'bpchar', 'char', 'name', 'int2', 'int4', 'int8', 'numeric', 'float4', 'float8', 'bool',
  'date', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'uuid', 'json', 'jsonb', 'bytea', 'citext',
  'inet', 'cidr', 'macaddr', 'macaddr8',
]);

/** One argument of `unnest(…)`: its elements as supplied values, or undefined when it is anything else. */
function unnestArgument(node: Node): SuppliedValue[] | undefined {
  if ('TypeCast' in node && node.TypeCast.arg !== undefined) {
    const names = stringList(node.TypeCast.typeName?.names);
    const scalar = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog');
    const isArray = (node.TypeCast.typeName?.arrayBounds?.length ?? 0) > 0;
    const inner = node.TypeCast.arg;
    if (isArray && scalar && SCALAR_TYPES.has(names[names.length - 1] ?? '')) {
      if ('ParamRef' in inner) return [{ kind: 'arrayParam', param: inner.ParamRef.number ?? 0, location: inner.ParamRef.location }];
      if ('A_Const' in inner) return inner.A_Const.isnull === true ? [] : [{ kind: 'arrayConstant', constant: inner.A_Const }];
    }
    return 'A_ArrayExpr' in inner ? unnestArgument(inner) : undefined;
  }
  if ('A_ArrayExpr' in node) {
    const values: SuppliedValue[] = [];
    for (const element of node.A_ArrayExpr.elements ?? []) {
      const found = valuesOf(element);
      if (found === undefined) return undefined;
      values.push(...found);
    }
    return values;
  }
  return undefined;
}

/** A call of PostgreSQL's own `unnest` (bare or pg_catalog-qualified), with nothing but its arguments. */
function isPlainUnnest(call: FuncCall): boolean {
  const { funcname, agg_star, func_variadic, agg_order, agg_filter, over } = call;
  const names = stringList(funcname);
  if (lastName(funcname) !== 'unnest' || names.length > 2 || (names.length === 2 && names[0] !== 'pg_catalog')) return false;
  return agg_star !== true && func_variadic !== true && agg_order === undefined && agg_filter === undefined && over === undefined;
}

/** `SELECT unnest($1::text[])`: one array argument in a select list (several are allowed only in FROM). */
function selectListUnnest(node: Node): SuppliedValue[] | undefined {
  if (!('FuncCall' in node) || !isPlainUnnest(node.FuncCall)) return undefined;
  const { args } = node.FuncCall;
  const only = args?.[0];
  return args?.length === 1 && only !== undefined ? unnestArgument(only) : undefined;
}

/**
 * `unnest($1::int[], $2::text[]) [WITH ORDINALITY] [AS u(x, y)]` over array parameters, ARRAY[…]
 * of values or array constants: one supplied column per argument. Undefined for anything else.
 */
export function unnestColumns(call: RangeFunction): OutputColumn[] | undefined {
  const functions = call.functions ?? [];
  const first = functions[0];
  if (functions.length !== 1 || first === undefined || !('List' in first)) return undefined;
  const [funcNode, columnDefinitions] = first.List.items ?? [];
  if (funcNode === undefined || !('FuncCall' in funcNode) || (columnDefinitions !== undefined && 'List' in columnDefinitions && (columnDefinitions.List.items?.length ?? 0) > 0)) return undefined;
  if (!isPlainUnnest(funcNode.FuncCall)) return undefined;
  const origins: ColumnOrigin[] = [];
  for (const argument of funcNode.FuncCall.args ?? []) {
    const values = unnestArgument(argument);
    if (values === undefined) return undefined;
    origins.push({ kind: 'supplied', source: { values } });
  }
  if (origins.length === 0) return undefined;
  const renames = stringList(call.alias?.colnames);
  // PostgreSQL names a lone unnest's column after the alias, several of them all "unnest".
  const defaultName = origins.length === 1 ? call.alias?.aliasname ?? 'unnest' : 'unnest';
  const columns: OutputColumn[] = origins.map((origin, index) => ({ name: renames[index] ?? defaultName, origin }));
  if (call.ordinality === true) columns.push({ name: renames[origins.length] ?? 'ordinality', origin: VALUE_ORIGIN });
  return columns;
}

/** Protects each value behind a supplied column for `column` (written into it, or compared with it). */
export function feedSupplied(source: SuppliedColumn, column: ColumnRef, position: number | undefined, context: AnalysisContext): void {
  context.findings.addSuppliedFeed(source, column, position);
  for (const value of source.values) {
    switch (value.kind) {
      case 'param': context.findings.addParam(value.param, column, value.location); break;
      case 'literal': recordLiteral(value.constant, column, context); break;
      case 'arrayParam': context.findings.addArrayParam(value.param, column, value.location); break;
      case 'arrayConstant':
        if (value.constant.sval === undefined) rejectColumn(column, 'only a quoted array constant can be protected element by element', value.constant.location);
        recordLiteral(value.constant, column, context, true);
    }
  }
}

/** A statement's result columns (to the client, a new table or COPY): tokens there would replace the client's values. */
export function misuseResultColumns(outputs: readonly OutputColumn[], context: AnalysisContext): void {
  for (const output of outputs) misuseOrigin(output.origin, 'is also a result column of the statement', context);
}

/** Records that a supplied column reaches something that must not see a token (no-op for other origins). */
export function misuseOrigin(origin: ColumnOrigin | undefined, reason: string, context: AnalysisContext): void {
  if (origin?.kind === 'supplied') context.findings.addSuppliedMisuse(origin.source, reason);
}
