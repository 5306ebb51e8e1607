/**
 * SELECT (and the parts other statements share with it): WITH lists, FROM items — tables,
 * subqueries, CTEs, joins (ON, USING, NATURAL), functions — and the output columns a query yields,
 * so that `s.x` in an outer query still knows it is `customers.ssn` underneath.
 */
import type {
  Alias, JoinExpr, Node, RangeVar, ResTarget, SelectStmt, WithClause,
} from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { analyseExpression } from './expressionAnalyser.js';
import {
  findColumn, findOutput, isProtectedOrigin, renameColumns, Scope, tableColumns, UNKNOWN_COLUMNS, VALUE_ORIGIN,
  type ColumnOrigin, type OutputColumn, type RangeItem,
} from './nameScope.js';
import { exposeFunctionSource, plaintextIn, targetShows } from './plaintextExposure.js';
import { forEachChild, lastName, nodeLocation, stringList, stripCasts } from './parseTree.js';
import { sameStoredColumn } from './relationLookup.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { rejectColumn } from './statementFindings.js';
import { feedSupplied, misuseOrigin, suppliedOrigin, unnestColumns, valuesListOrigins } from './suppliedValues.js';

export function analyseSelect(select: SelectStmt, outer: Scope | undefined, context: AnalysisContext): OutputColumn[] {
  const scope = new Scope(outer);
  defineCtes(select.withClause, scope, context);
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    const left = select.larg === undefined ? [] : analyseSelect(select.larg, scope, context);
    const right = select.rarg === undefined ? [] : analyseSelect(select.rarg, scope, context);
    const columns = mergeSetOperation(left, right, context);
    const outputScope = new Scope(scope);
    outputScope.items.push({ name: undefined, columns });
    analyseAll(select.sortClause, outputScope, context);
    analyseExpression(select.limitCount, outputScope, 'read', context);
    analyseExpression(select.limitOffset, outputScope, 'read', context);
    return columns;
  }
  if (select.valuesLists !== undefined) {
    const shown: (ColumnRef | undefined)[] = [];
    const rows = select.valuesLists.map((row) => 'List' in row ? row.List.items ?? [] : []);
    for (const items of rows) {
      items.forEach((item, index) => {
        analyseExpression(item, scope, 'read', context);
        shown[index] ??= plaintextIn(item, scope, context);
      });
    }
    const origins = valuesListOrigins(rows);
    return Array.from(shown, (from, index): OutputColumn => ({
      name: `column${index + 1}`, origin: origins[index] ?? VALUE_ORIGIN, ...(from === undefined ? {} : { shows: { column: from, computed: true } }),
    }));
  }
  for (const item of select.fromClause ?? []) scope.items.push(...fromItems(item, scope, context));
  analyseExpression(select.whereClause, scope, 'predicate', context);
  const outputs = targetListOutputs(select.targetList, scope, context);
  analyseAll(select.groupClause, scope, context);
  analyseExpression(select.havingClause, scope, 'predicate', context);
  analyseAll(select.windowClause, scope, context);
  analyseAll(select.distinctClause, scope, context);
  const outputScope = new Scope(scope);
  outputScope.items.push({ name: undefined, columns: outputs });
  analyseAll(select.sortClause, outputScope, context);
  analyseExpression(select.limitCount, scope, 'read', context);
  analyseExpression(select.limitOffset, scope, 'read', context);
  return outputs;
}

function analyseAll(nodes: readonly Node[] | undefined, scope: Scope, context: AnalysisContext): void {
  for (const node of nodes ?? []) analyseExpression(node, scope, 'read', context);
}

/** WITH: each CTE's outputs become a relation later CTEs and the main statement can read. */
export function defineCtes(clause: WithClause | undefined, scope: Scope, context: AnalysisContext): void {
  for (const node of clause?.ctes ?? []) {
    if (!('CommonTableExpr' in node)) continue;
    const cte = node.CommonTableExpr;
    const name = cte.ctename ?? '';
    const names = stringList(cte.aliascolnames);
    const query = cte.ctequery;
    if (query === undefined) continue;
    const recursive = clause?.recursive === true && 'SelectStmt' in query
      && query.SelectStmt.op !== undefined && query.SelectStmt.op !== 'SETOP_NONE';
    if (recursive && 'SelectStmt' in query) {
      // As PostgreSQL does: the non-recursive term fixes the columns the recursive term reads.
      const left = query.SelectStmt.larg === undefined ? [] : analyseSelect(query.SelectStmt.larg, scope, context);
      scope.defineCte(name, renameColumns(left, names));
      const right = query.SelectStmt.rarg === undefined ? [] : analyseSelect(query.SelectStmt.rarg, scope, context);
      scope.defineCte(name, renameColumns(mergeSetOperation(left, right, context), names));
    } else {
      scope.defineCte(name, renameColumns(context.subquery(query, scope), names));
    }
  }
}

/**
 * A column of UNION/INTERSECT/EXCEPT is protected only if both sides are the same protected
 * column; and RowDescription names no table column for it, so any plaintext it shows is computed.
 */
function mergeSetOperation(left: readonly OutputColumn[], right: readonly OutputColumn[], context: AnalysisContext): OutputColumn[] {
  return left.map((column, index): OutputColumn => {
    // Client values merged with other rows are no longer followed (a later use could not reach them).
    for (const side of [column, right[index]]) misuseOrigin(side?.origin, 'is also merged by UNION, INTERSECT or EXCEPT', context);
    const merged = mergeOrigins(column, right[index]);
    const shown = column.shows?.column ?? right[index]?.shows?.column;
    return shown === undefined ? merged : { ...merged, shows: { column: shown, computed: true } };
  });
}

function mergeOrigins(column: OutputColumn, other: OutputColumn | undefined): OutputColumn {
  if (other === undefined || column.origin.kind === 'unknown') return column;
  const a = column.origin;
  const b = other.origin;
  if (isProtectedOrigin(a)) {
    return isProtectedOrigin(b) && sameStoredColumn(a.column, b.column) ? column : { name: column.name, origin: { kind: 'derived', from: a.column } };
  }
  if (isProtectedOrigin(b)) return { name: column.name, origin: { kind: 'derived', from: b.column } };
  if (b.kind === 'derived') return { name: column.name, origin: b };
  return a.kind === 'supplied' ? { ...column, origin: VALUE_ORIGIN } : column;
}

/** The relation(s) one FROM entry adds to the scope. */
export function fromItems(node: Node, scope: Scope, context: AnalysisContext): RangeItem[] {
  if ('RangeVar' in node) return [relationItem(node.RangeVar, scope, context)];
  if ('RangeSubselect' in node) {
    const { subquery, alias } = node.RangeSubselect;
    const outputs = subquery === undefined ? [] : context.subquery(subquery, scope);
    return [{ name: alias?.aliasname, columns: renameColumns(outputs, stringList(alias?.colnames)) }];
  }
  if ('JoinExpr' in node) return joinItems(node.JoinExpr, scope, context);
  if ('RangeTableSample' in node) {
    const { relation, args, repeatable } = node.RangeTableSample;
    for (const argument of [...(args ?? []), ...(repeatable === undefined ? [] : [repeatable])]) analyseExpression(argument, scope, 'read', context);
    return relation === undefined ? [] : fromItems(relation, scope, context);
  }
  if ('RangeFunction' in node) {
    forEachChild(node, (child) => analyseExpression(child, scope, 'read', context));
    exposeFunctionSource(node, scope, context);
    const { alias, functions } = node.RangeFunction;
    const firstCall = functions?.[0];
    const firstFunction = firstCall !== undefined && 'List' in firstCall ? firstCall.List.items?.[0] : undefined;
    const name = alias?.aliasname ?? (firstFunction !== undefined && 'FuncCall' in firstFunction ? lastName(firstFunction.FuncCall.funcname) : undefined);
    return [{ name, columns: unnestColumns(node.RangeFunction) ?? namedValueColumns(alias) }];
  }
  // XMLTABLE, JSON_TABLE and other table functions: their own columns, nothing pgveil knows.
  forEachChild(node, (child) => analyseExpression(child, scope, 'read', context));
  exposeFunctionSource(node, scope, context);
  return [{ name: aliasOf(node), columns: [UNKNOWN_COLUMNS] }];
}

function aliasOf(node: Node): string | undefined {
  for (const key in node) {
    const payload = (node as Record<string, unknown>)[key] as { alias?: Alias } | undefined;
    return payload?.alias?.aliasname;
  }
  return undefined;
}

function namedValueColumns(alias: Alias | undefined): OutputColumn[] {
  const names = stringList(alias?.colnames);
  return [...names.map((name) => ({ name, origin: VALUE_ORIGIN })), UNKNOWN_COLUMNS];
}

/** A table, view or CTE named in FROM (or as the target of a write). */
export function relationItem(relation: RangeVar, scope: Scope, context: AnalysisContext): RangeItem {
  const relname = relation.relname ?? '';
  const aliasName = relation.alias?.aliasname;
  const renames = stringList(relation.alias?.colnames);
  const cte = relation.schemaname === undefined ? scope.findCte(relname) : undefined;
  if (cte !== undefined) return { name: aliasName ?? relname, columns: renameColumns(cte, renames) };
  const info = context.relations.table(relation.schemaname, relname);
  if (info === undefined) return { name: aliasName ?? relname, columns: [UNKNOWN_COLUMNS] };
  return {
    name: aliasName ?? relname,
    ...(aliasName === undefined ? { table: { schema: info.schema, table: info.table } } : {}),
    columns: renameColumns(tableColumns(info), renames),
  };
}

function joinItems(join: JoinExpr, scope: Scope, context: AnalysisContext): RangeItem[] {
  const joinScope = new Scope(scope);
  const left = join.larg === undefined ? [] : fromItems(join.larg, scope, context);
  joinScope.items.push(...left);
  const right = join.rarg === undefined ? [] : fromItems(join.rarg, joinScope, context);
  joinScope.items.push(...right);
  const leftColumns = left.flatMap((item) => item.columns);
  const rightColumns = right.flatMap((item) => item.columns);
  const usingNames = join.isNatural === true ? naturalJoinNames(leftColumns, rightColumns) : stringList(join.usingClause);
  for (const name of usingNames) {
    compareJoinColumns(findColumn(leftColumns, name), findColumn(rightColumns, name), context, nodeLocation(join.quals));
    // FULL JOIN … USING merges the two sides with COALESCE: the merged column names no table column.
    const shown = findOutput(leftColumns, name)?.shows ?? findOutput(rightColumns, name)?.shows;
    if (join.jointype === 'JOIN_FULL' && shown !== undefined) {
      context.findings.addExposure(shown.column, 'a FULL JOIN … USING merges it into a computed column', nodeLocation(join.quals));
    }
  }
  analyseExpression(join.quals, joinScope, 'predicate', context);
  // `JOIN … USING (a) AS j` names the merged USING columns j.a (PostgreSQL 14+).
  const usingAlias: RangeItem[] = join.join_using_alias?.aliasname === undefined ? [] : [{
    name: join.join_using_alias.aliasname,
    columns: usingNames.map((name) => ({ name, origin: findColumn(leftColumns, name) ?? VALUE_ORIGIN })),
  }];
  if (join.alias === undefined) return [...left, ...right, ...usingAlias];
  return [{ name: join.alias.aliasname, columns: renameColumns([...leftColumns, ...rightColumns], stringList(join.alias.colnames)) }];
}

/** NATURAL JOIN compares every name both sides share; unknown sides make protected ones uncertain. */
function naturalJoinNames(left: readonly OutputColumn[], right: readonly OutputColumn[]): string[] {
  const names: string[] = [];
  for (const [mine, theirs] of [[left, right], [right, left]] as const) {
    if (!theirs.some((column) => column.origin.kind === 'unknown')) continue;
    const exposed = mine.find((column) => isProtectedOrigin(column.origin));
    if (exposed !== undefined && isProtectedOrigin(exposed.origin)) {
      rejectColumn(exposed.origin.column, 'NATURAL JOIN with a relation whose columns pgveil cannot see may compare it with plaintext', undefined);
    }
  }
  for (const column of left) {
    if (column.name !== undefined && right.some((other) => other.name === column.name)) names.push(column.name);
  }
  return names;
}

/** USING (col): the two sides are compared; both protected (tokens) or neither. */
function compareJoinColumns(left: ColumnOrigin | undefined, right: ColumnOrigin | undefined, context: AnalysisContext, position: number | undefined): void {
  if (left === undefined || right === undefined) return;
  for (const [one, other] of [[left, right], [right, left]] as const) {
    if (isProtectedOrigin(one) && other.kind === 'supplied') return feedSupplied(other.source, one.column, position, context);
  }
  for (const side of [left, right]) misuseOrigin(side, 'is also compared by a join on USING or NATURAL', context);
  if (isProtectedOrigin(left) && isProtectedOrigin(right)) return context.findings.addComparison(left.column, right.column);
  for (const [one, other] of [[left, right], [right, left]] as const) {
    if (isProtectedOrigin(one)) rejectColumn(one.column, `a join compares it with ${other.kind === 'derived' ? 'data computed from protected data' : 'a column that is not protected'}`, position);
    if (one.kind === 'derived') rejectColumn(one.from, 'a join compares data computed from it', position);
  }
}

/** Output columns of a select list or RETURNING list, analysing each expression as a read. */
export function targetListOutputs(targets: readonly Node[] | undefined, scope: Scope, context: AnalysisContext): OutputColumn[] {
  const outputs: OutputColumn[] = [];
  for (const node of targets ?? []) {
    if (!('ResTarget' in node)) continue;
    const target: ResTarget = node.ResTarget;
    const value = target.val;
    if (value === undefined) continue;
    if ('ColumnRef' in value && value.ColumnRef.fields?.some((field) => 'A_Star' in field)) {
      outputs.push(...starColumns(value.ColumnRef.fields, scope));
      continue;
    }
    const origin = originOf(value, scope, context);
    // A bare reference passing a supplied column on is not a use: what reads the output is.
    if (!(origin.kind === 'supplied' && isPassedOn(value))) analyseExpression(value, scope, 'read', context);
    const shows = targetShows(value, scope, context);
    outputs.push({ name: target.name ?? figureName(value), origin, ...(shows === undefined ? {} : { shows }) });
  }
  return outputs;
}

/** `v.a`, `v.a::text`, `(SELECT a FROM v)`: the output is the column itself. */
function isPassedOn(value: Node): boolean {
  const inner = stripCasts(value);
  return 'ColumnRef' in inner || ('SubLink' in inner && inner.SubLink.subLinkType === 'EXPR_SUBLINK');
}

function starColumns(fields: readonly Node[], scope: Scope): OutputColumn[] {
  if (fields.length === 1) {
    const visible = scope.items.filter((item) => item.hiddenFromStar !== true);
    return visible.length === 0 ? [UNKNOWN_COLUMNS] : visible.flatMap((item) => item.columns);
  }
  const resolution = scope.resolve(fields);
  return resolution.kind === 'wholeRow' ? [...resolution.item.columns] : [UNKNOWN_COLUMNS];
}

/** What an output expression carries: a column (through casts), data derived from a protected one, or a value. */
export function originOf(value: Node, scope: Scope, context: AnalysisContext): ColumnOrigin {
  const inner = stripCasts(value);
  if ('ColumnRef' in inner) {
    const resolution = scope.resolve(inner.ColumnRef.fields);
    if (resolution.kind === 'column') return resolution.origin;
  }
  if ('SubLink' in inner && inner.SubLink.subLinkType === 'EXPR_SUBLINK' && inner.SubLink.subselect !== undefined) {
    const first = context.subquery(inner.SubLink.subselect, scope)[0];
    if (first !== undefined) return first.origin;
  }
  const supplied = suppliedOrigin(inner);
  if (supplied !== undefined) return supplied;
  const from = protectedReference(inner, scope, context);
  return from === undefined ? VALUE_ORIGIN : { kind: 'derived', from };
}

/** The first protected column an expression reads (not counting `count(…)`). */
function protectedReference(node: Node, scope: Scope, context: AnalysisContext): ColumnRef | undefined {
  if ('ColumnRef' in node) {
    const resolution = scope.resolve(node.ColumnRef.fields);
    if (resolution.kind === 'column') {
      const origin = resolution.origin;
      if (isProtectedOrigin(origin)) return origin.column;
      if (origin.kind === 'derived') return origin.from;
      misuseOrigin(origin, 'is also used in an expression', context);
    } else if (resolution.kind === 'wholeRow') {
      const hidden = resolution.item.columns.find((column) => isProtectedOrigin(column.origin))?.origin;
      if (hidden !== undefined && isProtectedOrigin(hidden)) return hidden.column;
    }
    return undefined;
  }
  if ('FuncCall' in node && lastName(node.FuncCall.funcname) === 'count') return undefined;
  if ('SubLink' in node) {
    if (node.SubLink.subLinkType !== 'EXPR_SUBLINK' || node.SubLink.subselect === undefined) return undefined;
    const first = context.subquery(node.SubLink.subselect, scope)[0]?.origin;
    misuseOrigin(first, 'is also used in an expression', context);
    if (first !== undefined && isProtectedOrigin(first)) return first.column;
    return first?.kind === 'derived' ? first.from : undefined;
  }
  let found: ColumnRef | undefined;
  forEachChild(node, (child) => {
    found ??= protectedReference(child, scope, context);
  });
  return found;
}

/** PostgreSQL's name for an unnamed output column (enough for lookups by name). */
function figureName(value: Node): string | undefined {
  if ('ColumnRef' in value) {
    const names = stringList(value.ColumnRef.fields);
    return names[names.length - 1];
  }
  if ('TypeCast' in value) {
    const inner = value.TypeCast.arg === undefined ? undefined : figureName(value.TypeCast.arg);
    return inner ?? lastName(value.TypeCast.typeName?.names);
  }
  if ('FuncCall' in value) return lastName(value.FuncCall.funcname);
  if ('CaseExpr' in value) return 'case';
  return undefined;
}
