/**
 * INSERT, UPDATE, DELETE and MERGE: which value lands in which protected column of the target,
 * plus their WHERE/ON predicates and RETURNING lists. Each returns its RETURNING columns, which is
 * what a data-modifying CTE yields to the rest of the statement.
 */
import type {
  DeleteStmt, InsertStmt, MergeStmt, MergeWhenClause, Node, OnConflictClause, RangeVar,
  ReturningClause, UpdateStmt,
} from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { assignValue } from './columnAssignment.js';
import { analyseExpression } from './expressionAnalyser.js';
import {
  columnAt, isProtectedOrigin, Scope, tableColumns, UNKNOWN_COLUMNS, type ColumnOrigin, type OutputColumn, type RangeItem,
} from './nameScope.js';
import { nodeLocation } from './parseTree.js';
import { exposeWrite, plaintextIn } from './plaintextExposure.js';
import { defineCtes, fromItems, relationItem, targetListOutputs } from './queryAnalyser.js';
import { sameStoredColumn, type TableColumn, type TableInfo } from './relationLookup.js';
import { rejectColumn } from './statementFindings.js';
import { feedSupplied, misuseOrigin } from './suppliedValues.js';
import { operandOf } from './operands.js';

interface WriteTarget {
  readonly info: TableInfo | undefined;
  readonly item: RangeItem;
}

function writeTarget(relation: RangeVar | undefined, scope: Scope, context: AnalysisContext): WriteTarget {
  if (relation === undefined) return { info: undefined, item: { name: undefined, columns: [UNKNOWN_COLUMNS] } };
  const info = context.relations.table(relation.schemaname, relation.relname ?? '');
  return { info, item: relationItem(relation, scope, context) };
}

function columnOf(target: WriteTarget, name: string | undefined): TableColumn | undefined {
  return target.info?.columns.find((column) => column.ref.column === name);
}

export function analyseInsert(insert: InsertStmt, outer: Scope | undefined, context: AnalysisContext): OutputColumn[] {
  const scope = new Scope(outer);
  defineCtes(insert.withClause, scope, context);
  const target = writeTarget(insert.relation, scope, context);
  const columns = insertColumns(insert.cols, target);
  const source = insert.selectStmt;
  if (source !== undefined && 'SelectStmt' in source && source.SelectStmt.valuesLists !== undefined
    && (source.SelectStmt.op ?? 'SETOP_NONE') === 'SETOP_NONE') {
    for (const row of source.SelectStmt.valuesLists) {
      const items = 'List' in row ? row.List.items ?? [] : [];
      items.forEach((item, index) => writeValue(columns[index], item, scope, context));
    }
  } else if (source !== undefined) {
    const outputs = context.subquery(source, scope);
    outputs.forEach((output, index) => exposeWrite(columns[index]?.ref, output.shows?.column, nodeLocation(source), context));
    let positionKnown = true;
    outputs.forEach((output, index) => {
      if (output.origin.kind === 'unknown') positionKnown = false;
      // After a run of columns nobody knows, which target column an output lands in is unknown too.
      if (positionKnown) feedFromQuery(columns[index], columnAt(outputs, index), nodeLocation(source), context);
      else feedFromQuery(undefined, output.origin, nodeLocation(source), context);
    });
    columns.forEach((column, index) => {
      if (column?.protected !== true) return;
      const origin = columnAt(outputs, index);
      if (origin?.kind === 'supplied') return;
      if (origin !== undefined && isProtectedOrigin(origin) && sameStoredColumn(origin.column, column.ref)) return;
      rejectColumn(column.ref, 'INSERT … SELECT feeds it values pgveil cannot protect (use INSERT … VALUES with parameters)', nodeLocation(source));
    });
  }
  if (insert.onConflictClause !== undefined) analyseOnConflict(insert.onConflictClause, target, scope, context);
  return returningOutputs(insert.returningClause, target, scope, context);
}

/** A query's output column written into a target column: supplied values are protected for a protected one. */
function feedFromQuery(column: TableColumn | undefined, origin: ColumnOrigin | undefined, position: number | undefined, context: AnalysisContext): void {
  if (origin?.kind !== 'supplied') return;
  if (column?.protected === true) return feedSupplied(origin.source, column.ref, position, context);
  misuseOrigin(origin, `is also written into ${column === undefined ? 'a column pgveil cannot see' : `column ${column.ref.column}, which is not protected`}`, context);
}

/** The target column each VALUES position feeds; an INSERT without a list fills all, in order. */
function insertColumns(cols: readonly Node[] | undefined, target: WriteTarget): (TableColumn | undefined)[] {
  if (cols === undefined) return [...(target.info?.columns ?? [])];
  return cols.map((node) => {
    if (!('ResTarget' in node)) return undefined;
    const column = columnOf(target, node.ResTarget.name);
    if (column?.protected === true && node.ResTarget.indirection !== undefined) {
      rejectColumn(column.ref, 'writing into a field or element of it cannot be protected', node.ResTarget.location);
    }
    return column;
  });
}

function writeValue(column: TableColumn | undefined, value: Node, scope: Scope, context: AnalysisContext): void {
  exposeWrite(column?.ref, plaintextIn(value, scope, context), nodeLocation(value), context);
  if (column?.protected === true) return assignValue(column.ref, value, scope, context);
  const operand = operandOf(value, scope, context);
  if (operand.kind === 'supplied') feedFromQuery(column, { kind: 'supplied', source: operand.source }, nodeLocation(value), context);
  analyseExpression(value, scope, 'read', context);
}

function analyseOnConflict(clause: OnConflictClause, target: WriteTarget, outer: Scope, context: AnalysisContext): void {
  const scope = new Scope(outer);
  // EXCLUDED is the row proposed for insertion: its protected values are already protected.
  scope.items.push(target.item, { name: 'excluded', columns: target.info === undefined ? [UNKNOWN_COLUMNS] : tableColumns(target.info) });
  analyseExpression(clause.infer?.whereClause, scope, 'predicate', context);
  analyseAssignments(clause.targetList, target, scope, context);
  analyseExpression(clause.whereClause, scope, 'predicate', context);
}

/** SET col = value, SET (a, b) = (…), SET (a, b) = (SELECT …). */
function analyseAssignments(targets: readonly Node[] | undefined, target: WriteTarget, scope: Scope, context: AnalysisContext): void {
  for (const node of targets ?? []) {
    if (!('ResTarget' in node)) continue;
    const { name, indirection, val, location } = node.ResTarget;
    if (val === undefined) continue;
    const column = columnOf(target, name);
    if (column?.protected === true && indirection !== undefined) {
      rejectColumn(column.ref, 'writing into a field or element of it cannot be protected', location);
    }
    exposeOverwrite(column, val, target, scope, location, context);
    if (!('MultiAssignRef' in val)) {
      writeValue(column, val, scope, context);
      continue;
    }
    const { source, colno } = val.MultiAssignRef;
    const position = (colno ?? 1) - 1;
    if (source !== undefined && 'RowExpr' in source) {
      const item = source.RowExpr.args?.[position];
      if (item !== undefined) writeValue(column, item, scope, context);
    } else if (source !== undefined && 'SubLink' in source && source.SubLink.subselect !== undefined) {
      const outputs = context.subquery(source.SubLink.subselect, scope);
      exposeWrite(column?.ref, outputs[position]?.shows?.column, location, context);
      const origin = columnAt(outputs, position);
      feedFromQuery(column, origin, location, context);
      if (column?.protected === true && origin?.kind !== 'supplied' && !(origin !== undefined && isProtectedOrigin(origin) && sameStoredColumn(origin.column, column.ref))) {
        rejectColumn(column.ref, 'the value assigned to it comes from a subquery pgveil cannot protect', location);
      }
    } else {
      exposeWrite(column?.ref, plaintextIn(source, scope, context), location, context);
      if (column?.protected === true) rejectColumn(column.ref, 'the value assigned to it comes from a row expression pgveil cannot map', location);
    }
  }
}

const OVERWRITE = 'an UPDATE sets it, so a value read that way and written back (grid editors and ORMs send whole rows) would '
  + 'replace the stored one: leave it out of the SET list (or set it to itself), or give the role the blind-update privilege '
  + '(privileges: { <role>: [blind-update] } in the policy file) to let it set values it cannot read';

/**
 * SET of a column with a policy to anything but its own current value: recorded as an overwrite
 * (with the exposures, so that every path that skips sessions' checks for a statement without
 * exposures skips none of these), refused for a session that does not read the column in plaintext
 * (maskedColumnGuard).
 */
function exposeOverwrite(
  column: TableColumn | undefined, value: Node, target: WriteTarget, scope: Scope, location: number | undefined, context: AnalysisContext,
): void {
  if (column === undefined || (!column.protected && column.plaintext === undefined) || keepsCurrentValue(column, value, target, scope)) return;
  context.findings.addExposure(column.plaintext?.column ?? column.ref, OVERWRITE, location, true);
}

/**
 * `SET phone = phone` or `t.phone` (t the target's name or alias): the row's own value. Another
 * FROM item of the same table (`= d.phone`) is another row's, and `EXCLUDED.phone` the proposed one.
 */
function keepsCurrentValue(column: TableColumn, value: Node, target: WriteTarget, scope: Scope): boolean {
  if (!('ColumnRef' in value)) return false;
  const fields = value.ColumnRef.fields ?? [];
  if (fields.length === 2) {
    const qualifier = fields[0];
    if (qualifier === undefined || !('String' in qualifier) || qualifier.String.sval !== target.item.name) return false;
  } else if (fields.length !== 1) {
    return false;
  }
  const resolution = scope.resolve(fields);
  return resolution.kind === 'column' && resolution.origin.kind === 'column' && sameStoredColumn(resolution.origin.column, column.ref);
}

export function analyseUpdate(update: UpdateStmt, outer: Scope | undefined, context: AnalysisContext): OutputColumn[] {
  const scope = new Scope(outer);
  defineCtes(update.withClause, scope, context);
  const target = writeTarget(update.relation, scope, context);
  scope.items.push(target.item);
  for (const item of update.fromClause ?? []) scope.items.push(...fromItems(item, scope, context));
  analyseAssignments(update.targetList, target, scope, context);
  analyseExpression(update.whereClause, scope, 'predicate', context);
  return returningOutputs(update.returningClause, target, scope, context);
}

export function analyseDelete(statement: DeleteStmt, outer: Scope | undefined, context: AnalysisContext): OutputColumn[] {
  const scope = new Scope(outer);
  defineCtes(statement.withClause, scope, context);
  const target = writeTarget(statement.relation, scope, context);
  scope.items.push(target.item);
  for (const item of statement.usingClause ?? []) scope.items.push(...fromItems(item, scope, context));
  analyseExpression(statement.whereClause, scope, 'predicate', context);
  return returningOutputs(statement.returningClause, target, scope, context);
}

export function analyseMerge(merge: MergeStmt, outer: Scope | undefined, context: AnalysisContext): OutputColumn[] {
  const scope = new Scope(outer);
  defineCtes(merge.withClause, scope, context);
  const target = writeTarget(merge.relation, scope, context);
  scope.items.push(target.item);
  if (merge.sourceRelation !== undefined) scope.items.push(...fromItems(merge.sourceRelation, scope, context));
  analyseExpression(merge.joinCondition, scope, 'predicate', context);
  for (const node of merge.mergeWhenClauses ?? []) {
    if ('MergeWhenClause' in node) analyseMergeAction(node.MergeWhenClause, target, scope, context);
  }
  return returningOutputs(merge.returningClause, target, scope, context);
}

function analyseMergeAction(action: MergeWhenClause, target: WriteTarget, scope: Scope, context: AnalysisContext): void {
  analyseExpression(action.condition, scope, 'predicate', context);
  if (action.commandType === 'CMD_UPDATE') analyseAssignments(action.targetList, target, scope, context);
  if (action.commandType === 'CMD_INSERT') {
    const columns = insertColumns(action.targetList, target);
    (action.values ?? []).forEach((value, index) => writeValue(columns[index], value, scope, context));
  }
}

/** RETURNING reads the written rows (and, since PostgreSQL 18, `old` and `new`). */
function returningOutputs(clause: ReturningClause | undefined, target: WriteTarget, scope: Scope, context: AnalysisContext): OutputColumn[] {
  if (clause === undefined) return [];
  const returningScope = new Scope(scope);
  returningScope.items.push(
    ...(scope.items.includes(target.item) ? scope.items : [target.item, ...scope.items]),
    { name: 'old', columns: target.item.columns, hiddenFromStar: true },
    { name: 'new', columns: target.item.columns, hiddenFromStar: true },
  );
  return targetListOutputs(clause.exprs, returningScope, context);
}
