/**
 * What each kind of top-level statement means for protected columns. Queries and writes are
 * analysed; wrappers (EXPLAIN, PREPARE, DECLARE, CREATE TABLE AS, CREATE VIEW) analyse what they
 * wrap; utility statements that carry no values into columns pass; anything else pgveil does not
 * understand (DO, CALL, CREATE FUNCTION, CREATE RULE…) is refused when its text names a table
 * with protected columns — fail closed, but without blocking unrelated DDL.
 */
import type { AlterTableCmd, AlterTableStmt, IndexStmt, Node, RangeVar } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { analyseCopy } from './copyStatement.js';
import { analyseExpression } from './expressionAnalyser.js';
import { Scope } from './nameScope.js';
import { nodeLocation, nodeType } from './parseTree.js';
import { exposeResultColumns, exposeWrite, plaintextIn } from './plaintextExposure.js';
import { findPlaintextTableMention, findProtectedTableMention } from './protectedNameScan.js';
import { relationItem } from './queryAnalyser.js';
import { checkSchemaChange } from './schemaChangeGuard.js';
import { sessionEffectsOf } from './sessionEffects.js';
import { rejectColumn, rejectStatement } from './statementFindings.js';
import { misuseResultColumns } from './suppliedValues.js';

/** Utility statements that put no value into any column (names as in the parse tree). */
const VALUE_FREE_STATEMENTS = new Set([
  'TransactionStmt', 'VariableSetStmt', 'VariableShowStmt', 'DiscardStmt', 'ListenStmt', 'UnlistenStmt',
  'NotifyStmt', 'LockStmt', 'TruncateStmt', 'VacuumStmt', 'ExecuteStmt', 'DeallocateStmt',
  'ClosePortalStmt', 'FetchStmt', 'CheckPointStmt', 'GrantStmt', 'GrantRoleStmt', 'CommentStmt',
  'DropStmt', 'RenameStmt', 'ReindexStmt', 'ClusterStmt', 'RefreshMatViewStmt', 'CreateStmt',
  'CreateSeqStmt', 'AlterSeqStmt', 'CreateExtensionStmt', 'AlterExtensionStmt', 'CreateRoleStmt',
  'AlterRoleStmt', 'AlterRoleSetStmt', 'DropRoleStmt', 'CreatedbStmt', 'DropdbStmt', 'AlterDatabaseStmt',
  'AlterDatabaseSetStmt', 'AlterOwnerStmt', 'AlterObjectSchemaStmt', 'ConstraintsSetStmt',
  'CreateEnumStmt', 'AlterEnumStmt', 'CompositeTypeStmt', 'LoadStmt', 'AlterDefaultPrivilegesStmt',
  'DropOwnedStmt', 'ReassignOwnedStmt', 'CreateStatsStmt', 'AlterSystemStmt', 'CreateTableSpaceStmt',
  'DropTableSpaceStmt', 'AlterTableSpaceOptionsStmt', 'ReturnStmt',
]);

/** The statement's own text, for the name scan of statements pgveil does not understand. */
export interface StatementSource {
  readonly text: string;
}

/**
 * Who receives a query's result: the client (RowDescription names bare columns), a new table
 * (CREATE TABLE AS, SELECT INTO), or nobody (EXPLAIN, a view's definition — a view is checked when
 * read, from the catalog).
 */
type ResultUse = 'client' | 'new table' | 'none';

export function analyseStatement(node: Node | undefined, context: AnalysisContext, source: StatementSource, use: ResultUse = 'client'): void {
  if (node === undefined) return;
  checkSchemaChange(node, context);
  if ('SelectStmt' in node || 'InsertStmt' in node || 'UpdateStmt' in node || 'DeleteStmt' in node || 'MergeStmt' in node) {
    const outputs = context.subquery(node, new Scope(undefined));
    misuseResultColumns(outputs, context);
    const into = 'SelectStmt' in node && node.SelectStmt.intoClause !== undefined;
    if (into || use === 'new table') exposeResultColumns(outputs, 'new table', context);
    else if (use === 'client') exposeResultColumns(outputs, 'client', context);
  } else if ('ExplainStmt' in node) {
    analyseStatement(node.ExplainStmt.query, context, source, 'none');
  } else if ('DeclareCursorStmt' in node) {
    analyseStatement(node.DeclareCursorStmt.query, context, source);
  } else if ('CreateTableAsStmt' in node) {
    const { query, objtype } = node.CreateTableAsStmt;
    // A materialized view is read like a view (the catalog says what its columns show).
    if (query !== undefined && 'ExecuteStmt' in query && objtype !== 'OBJECT_MATVIEW') {
      context.findings.addOpaqueRead('CREATE TABLE AS EXECUTE stores the result of a prepared statement pgveil cannot see');
    }
    analyseStatement(query, context, source, objtype === 'OBJECT_MATVIEW' ? 'none' : 'new table');
  } else if ('ViewStmt' in node) {
    analyseStatement(node.ViewStmt.query, context, source, 'none');
  } else if ('PrepareStmt' in node) {
    const pathDependentBefore = context.relations.pathDependentLookups;
    analyseStatement(node.PrepareStmt.query, context, source);
    refusePathDependentPrepare(node.PrepareStmt.query, context, source, context.relations.pathDependentLookups > pathDependentBefore);
  } else if ('CopyStmt' in node) {
    analyseCopy(node.CopyStmt, context);
  } else if ('CreateSchemaStmt' in node) {
    for (const element of node.CreateSchemaStmt.schemaElts ?? []) analyseStatement(element, context, source);
  } else if ('IndexStmt' in node) {
    analyseIndex(node.IndexStmt, context);
  } else if ('AlterTableStmt' in node) {
    checkAlterTable(node.AlterTableStmt, context);
  } else if ('CreateTrigStmt' in node && node.CreateTrigStmt.whenClause === undefined) {
    // A trigger without WHEN only names a function; the function's own body is checked when created.
  } else if (!VALUE_FREE_STATEMENTS.has(nodeType(node) ?? '')) {
    refuseIfMentionsProtectedTable(nodeType(node) ?? 'statement', context, source);
  }
}

function refuseIfMentionsProtectedTable(kind: string, context: AnalysisContext, source: StatementSource): void {
  const table = findProtectedTableMention(source.text, context.relations.schema, context.relations);
  if (table !== undefined) {
    rejectStatement(`pgveil refused the statement: ${kind} mentions protected table ${table}, and pgveil cannot analyse how it uses its protected columns`, undefined);
  }
  const plaintextTable = findPlaintextTableMention(source.text, context.relations.schema, context.relations);
  if (plaintextTable !== undefined) {
    context.findings.addOpaqueRead(`${kind} mentions table ${plaintextTable}, and pgveil cannot analyse how it reads its columns`);
  }
}

/**
 * EXECUTE re-plans a prepared statement under the search_path then in force, and pgveil does not
 * see what it runs: a PREPARE whose unqualified names another path could turn into relations
 * with column policies, or that changes search_path itself, is refused.
 */
function refusePathDependentPrepare(query: Node | undefined, context: AnalysisContext, source: StatementSource, pathDependent: boolean): void {
  if (pathDependent) {
    rejectStatement('pgveil refused the statement: PREPARE names a table unqualified that another search_path would resolve to a different table with column policies, and EXECUTE re-resolves it; qualify the table name with its schema', undefined);
  }
  if (sessionEffectsOf(query, source.text).length > 0) {
    rejectStatement('pgveil refused the statement: PREPARE of a statement that may change search_path or the role; run it directly', undefined);
  }
}

/** CREATE INDEX: a partial index's WHERE compares like any predicate (its constants get protected). */
function analyseIndex(index: IndexStmt, context: AnalysisContext): void {
  if (index.relation === undefined) return;
  const scope = tableScope(index.relation, context);
  for (const element of index.indexParams ?? []) {
    if ('IndexElem' in element) analyseExpression(element.IndexElem.expr, scope, 'read', context);
  }
  analyseExpression(index.whereClause, scope, 'predicate', context);
}

/**
 * ALTER TABLE may not give a protected column a plaintext default or rewrite its tokens, nor
 * rewrite another column from a plaintext-at-rest one (`ALTER COLUMN note TYPE text USING phone`).
 */
function checkAlterTable(alter: AlterTableStmt, context: AnalysisContext): void {
  const relation = alter.relation;
  if (relation === undefined) return;
  exposeRewrittenColumns(alter, relation, context);
  const info = context.relations.table(relation.schemaname, relation.relname ?? '');
  if (info?.hasProtectedColumns !== true) return;
  for (const node of alter.cmds ?? []) {
    if (!('AlterTableCmd' in node)) continue;
    const command = node.AlterTableCmd;
    const column = info.columns.find((candidate) => candidate.ref.column === command.name);
    if (column?.protected !== true) continue;
    if (command.subtype === 'AT_ColumnDefault' && command.def !== undefined) {
      rejectColumn(column.ref, 'ALTER TABLE … SET DEFAULT would store a plaintext default in it', relation.location);
    }
    if (command.subtype === 'AT_AlterColumnType' && alterTypeUsing(command) !== undefined) {
      rejectColumn(column.ref, 'ALTER COLUMN … TYPE … USING would rewrite its stored tokens', relation.location);
    }
  }
}

function alterTypeUsing(command: AlterTableCmd): Node | undefined {
  const definition = command.def;
  return command.subtype === 'AT_AlterColumnType' && definition !== undefined && 'ColumnDef' in definition ? definition.ColumnDef.raw_default : undefined;
}

/** ALTER COLUMN … TYPE … USING writes its expression's value into the column: a write like UPDATE's SET. */
function exposeRewrittenColumns(alter: AlterTableStmt, relation: RangeVar, context: AnalysisContext): void {
  if (alter.objtype !== undefined && alter.objtype !== 'OBJECT_TABLE' && alter.objtype !== 'OBJECT_FOREIGN_TABLE') return;
  let scope: Scope | undefined;
  for (const node of alter.cmds ?? []) {
    if (!('AlterTableCmd' in node)) continue;
    const using = alterTypeUsing(node.AlterTableCmd);
    if (using === undefined) continue;
    scope ??= tableScope(relation, context);
    const item = scope.items[0];
    const table = item?.table;
    const target = table === undefined || node.AlterTableCmd.name === undefined ? undefined : { ...table, column: node.AlterTableCmd.name };
    exposeWrite(target, plaintextIn(using, scope, context), nodeLocation(using), context);
  }
}

function tableScope(relation: RangeVar, context: AnalysisContext): Scope {
  const scope = new Scope(undefined);
  scope.items.push(relationItem(relation, scope, context));
  return scope;
}
