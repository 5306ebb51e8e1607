/**
 * DDL that would move data out from under its policy, or put plaintext under one. Policies name
 * columns (`schema.table.column`), so renaming or moving a protected table or column would leave
 * its tokens — and every later write — unprotected, and retyping it invalidates the checks the
 * policy passed (storage rules). Such DDL is refused through pgveil, in or outside a transaction
 * block: the DBA changes the policy file and runs it on the database directly. So are column
 * defaults and generated expressions (plaintext stored by the server itself) and INHERIT / ATTACH
 * PARTITION, which would put rows pgveil never protected under a protected parent.
 *
 * "Bound" below means the policy file names the column (or, through inheritance, a parent's or
 * child's column of that name) — checked by name, so columns added in the open transaction count.
 */
import type { AlterTableCmd, AlterTableStmt, ColumnDef, CreateStmt, Node, RangeVar, RenameStmt } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { quoteIdentifier, type TableInfo } from './relationLookup.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { rejectColumn, rejectStatement } from './statementFindings.js';

const RELATION_OBJECTS = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE']);
const AFTERWARDS = 'change the policy file and run the DDL on the database directly (not through pgveil), then reload the policies';

/** Refuses (throws StatementRejected) DDL that would rename, move or retype protected data. */
export function checkSchemaChange(node: Node, context: AnalysisContext): void {
  if ('RenameStmt' in node) checkRename(node.RenameStmt, context);
  else if ('AlterObjectSchemaStmt' in node) {
    const { objectType, relation, newschema } = node.AlterObjectSchemaStmt;
    if (relation !== undefined && newschema !== undefined && RELATION_OBJECTS.has(objectType ?? '')) {
      checkRelationMove(relation, newschema, relation.relname ?? '', 'SET SCHEMA', context);
    }
  } else if ('AlterTableStmt' in node) checkAlterTable(node.AlterTableStmt, context);
  else if ('CreateStmt' in node) checkCreate(node.CreateStmt, context);
  else if ('CreateForeignTableStmt' in node && node.CreateForeignTableStmt.base !== undefined) checkCreate(node.CreateForeignTableStmt.base, context);
}

interface Target {
  readonly info: TableInfo | undefined;
  readonly schema: string | undefined;
  readonly table: string;
}

function target(relation: RangeVar, context: AnalysisContext): Target {
  const info = context.relations.table(relation.schemaname, relation.relname ?? '');
  return { info, schema: info?.schema ?? relation.schemaname, table: info?.table ?? relation.relname ?? '' };
}

function columnRef(of: Target, column: string): ColumnRef {
  return { schema: of.schema ?? 'public', table: of.table, column };
}

function tableLabel(schema: string | undefined, table: string): string {
  return schema === undefined ? quoteIdentifier(table) : `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/** The policy file names the column (or its table / schema when those are omitted). */
function policyBinds(context: AnalysisContext, schema: string | undefined, table?: string, column?: string): boolean {
  return context.relations.schema.isPolicyBound?.(schema, table, column) ?? false;
}

/** Its values are protected now (catalog) or will be once the catalog shows it (policy names it). */
function columnGuarded(of: Target, column: string | undefined, context: AnalysisContext): boolean {
  if (column === undefined) return false;
  return of.info?.columns.some((candidate) => candidate.ref.column === column && candidate.protected) === true
    || policyBinds(context, of.schema, of.table, column);
}

/**
 * Some column of the relation, of one of its ancestors or of one of its descendants, has a policy
 * (protected, or plaintext masked on read), or the policy file names the relation.
 */
function hasColumnPolicies(of: Target, context: AnalysisContext): boolean {
  if (tableBound(of, context) || of.info?.hasProtectedColumns === true) return true;
  return of.info?.columns.some((column) => column.protected || column.plaintext !== undefined
    || policyBinds(context, of.schema, of.table, column.ref.column)) === true;
}

/** The policy file names the table itself (without the optional method: it has protected columns). */
function tableBound(of: Target, context: AnalysisContext): boolean {
  const schema = context.relations.schema;
  if (schema.isPolicyBound === undefined) return of.info?.hasProtectedColumns === true;
  return schema.isPolicyBound(of.schema, of.table);
}

function checkRename(rename: RenameStmt, context: AnalysisContext): void {
  const type = rename.renameType ?? '';
  const newName = rename.newname ?? '';
  if (type === 'OBJECT_SCHEMA') {
    const old = rename.subname ?? '';
    if (policyBinds(context, old) || policyBinds(context, newName)) {
      rejectStatement(`pgveil refused the statement: ALTER SCHEMA … RENAME would move tables the policy file names (schema ${quoteIdentifier(policyBinds(context, old) ? old : newName)}), and policies name their columns by schema: ${AFTERWARDS}`, undefined);
    }
    return;
  }
  if (type === 'OBJECT_ATTRIBUTE' && rename.behavior === 'DROP_CASCADE' && rename.subname !== undefined
    && policyBinds(context, undefined, undefined, rename.subname)) {
    rejectStatement(`pgveil refused the statement: ALTER TYPE … RENAME ATTRIBUTE … CASCADE may rename protected column ${quoteIdentifier(rename.subname)} of a typed table: ${AFTERWARDS}`, undefined);
  }
  const relation = rename.relation;
  if (relation === undefined) return;
  if (type === 'OBJECT_COLUMN') {
    const of = target(relation, context);
    const old = rename.subname ?? '';
    // A view column follows its base column by position, whatever it is called.
    const viewOnly = rename.relationType === 'OBJECT_VIEW' || rename.relationType === 'OBJECT_MATVIEW';
    if (viewOnly ? policyBinds(context, of.schema, of.table, old) : columnGuarded(of, old, context)) {
      rejectColumn(columnRef(of, old), `RENAME COLUMN would rename it to ${quoteIdentifier(newName)}, and policies name columns: its data and later writes would lose their protection; ${AFTERWARDS}`, relation.location);
    }
    if (policyBinds(context, of.schema, of.table, newName)) {
      rejectColumn(columnRef(of, newName), `RENAME COLUMN would give its name, and its policy, to column ${quoteIdentifier(old)}, whose values pgveil did not protect; ${AFTERWARDS}`, relation.location);
    }
  } else if (RELATION_OBJECTS.has(type)) {
    checkRelationMove(relation, relation.schemaname, newName, 'RENAME', context);
  }
}

/** RENAME TO / SET SCHEMA of a relation: neither the old nor the new name may be one a policy names. */
function checkRelationMove(relation: RangeVar, newSchema: string | undefined, newTable: string, how: string, context: AnalysisContext): void {
  const of = target(relation, context);
  const destination: Target = { info: undefined, schema: newSchema ?? of.schema, table: newTable };
  if (tableBound(of, context)) {
    rejectStatement(`pgveil refused the statement: ALTER … ${how} would move table ${tableLabel(of.schema, of.table)} away from the name its column policies use: its protected columns would lose their protection; ${AFTERWARDS}`, relation.location);
  }
  if (policyBinds(context, destination.schema, destination.table)) {
    rejectStatement(`pgveil refused the statement: ALTER … ${how} would give ${tableLabel(of.schema, of.table)}, whose values pgveil did not protect, the name ${tableLabel(destination.schema, destination.table)} that column policies use; ${AFTERWARDS}`, relation.location);
  }
}

function checkAlterTable(alter: AlterTableStmt, context: AnalysisContext): void {
  const relation = alter.relation;
  if (relation === undefined) return;
  const commands = (alter.cmds ?? []).flatMap((node) => ('AlterTableCmd' in node ? [node.AlterTableCmd] : []));
  if (alter.objtype === 'OBJECT_TYPE') {
    // ALTER TYPE … ALTER/DROP ATTRIBUTE … CASCADE reaches the columns of typed tables.
    for (const command of commands) {
      if (command.behavior === 'DROP_CASCADE' && command.name !== undefined && policyBinds(context, undefined, undefined, command.name)) {
        rejectStatement(`pgveil refused the statement: ALTER TYPE … CASCADE may change protected column ${quoteIdentifier(command.name)} of a typed table: ${AFTERWARDS}`, relation.location);
      }
    }
    return;
  }
  const of = target(relation, context);
  for (const command of commands) checkAlterCommand(command, of, relation, context);
}

function checkAlterCommand(command: AlterTableCmd, of: Target, relation: RangeVar, context: AnalysisContext): void {
  const name = command.name;
  const definition = command.def;
  switch (command.subtype) {
    case 'AT_AlterColumnType':
      if (name !== undefined && columnGuarded(of, name, context)) {
        const using = definition !== undefined && 'ColumnDef' in definition && definition.ColumnDef.raw_default !== undefined;
        rejectColumn(columnRef(of, name), using
          ? 'ALTER COLUMN … TYPE … USING would rewrite its stored tokens'
          : `ALTER COLUMN … TYPE would retype it under its policy, which was checked for its present type; ${AFTERWARDS} (\`pgveil policy check\` first)`, relation.location);
      }
      return;
    case 'AT_ColumnDefault':
      if (definition !== undefined && columnGuarded(of, name, context)) {
        rejectColumn(columnRef(of, name ?? ''), 'ALTER TABLE … SET DEFAULT would store a plaintext default in it', relation.location);
      }
      return;
    case 'AT_SetExpression':
    case 'AT_AddIdentity':
      if (columnGuarded(of, name, context)) {
        rejectColumn(columnRef(of, name ?? ''), 'a generated value would be stored in it by the server, in plaintext', relation.location);
      }
      return;
    case 'AT_AddColumn':
      if (definition !== undefined && 'ColumnDef' in definition) checkColumnDefinition(definition.ColumnDef, of, [], context, relation.location);
      return;
    case 'AT_AddInherit':
    case 'AT_AttachPartition': {
      // INHERIT names the parent; ATTACH PARTITION is run on the parent and names the child.
      const inherit = command.subtype === 'AT_AddInherit';
      const parent = inherit ? relationOf(definition) : relation;
      const child = inherit ? relation : partitionOf(definition);
      const parentTarget = parent === undefined ? undefined : target(parent, context);
      if (parentTarget !== undefined && (parentTarget.info?.hasProtectedColumns === true || tableBound(parentTarget, context))) {
        rejectStatement(`pgveil refused the statement: ${inherit ? 'INHERIT' : 'ATTACH PARTITION'} would put the rows of ${tableLabel(child?.schemaname, child?.relname ?? '')}, which pgveil did not protect, under the column policies of ${tableLabel(parentTarget.schema, parentTarget.table)}; create the table with PARTITION OF / INHERITS and load it through pgveil instead`, relation.location);
      }
      // A parent shows (and UPDATE, DELETE and, when partitioned, INSERT reach) its children's rows
      // under its own name, and policies follow a parent to its children, never a child to its parent.
      const childTarget = child === undefined ? undefined : target(child, context);
      if (childTarget !== undefined && parentTarget !== undefined && hasColumnPolicies(childTarget, context)) {
        rejectStatement(`pgveil refused the statement: ${inherit ? 'INHERIT' : 'ATTACH PARTITION'} would put ${tableLabel(childTarget.schema, childTarget.table)}, which has column policies, under ${tableLabel(parentTarget.schema, parentTarget.table)}, whose name reads and writes its rows without them; ${AFTERWARDS}`, relation.location);
      }
      return;
    }
    case 'AT_DropInherit':
    case 'AT_DetachPartition':
    case 'AT_DetachPartitionFinalize': {
      const parent = command.subtype === 'AT_DropInherit' ? relationOf(definition) : relation;
      const parentTarget = parent === undefined ? of : target(parent, context);
      if (parentTarget.info?.hasProtectedColumns === true || tableBound(parentTarget, context)) {
        rejectStatement(`pgveil refused the statement: ${command.subtype === 'AT_DropInherit' ? 'NO INHERIT' : 'DETACH PARTITION'} would take a table out from under the column policies of ${tableLabel(parentTarget.schema, parentTarget.table)}, leaving its tokens and later writes unprotected; ${AFTERWARDS}`, relation.location);
      }
      return;
    }
    default:
  }
}

function relationOf(definition: Node | undefined): RangeVar | undefined {
  return definition !== undefined && 'RangeVar' in definition ? definition.RangeVar : undefined;
}

function partitionOf(definition: Node | undefined): RangeVar | undefined {
  return definition !== undefined && 'PartitionCmd' in definition ? definition.PartitionCmd.name : undefined;
}

/** CREATE TABLE (also PARTITION OF / INHERITS): no default or generated value into a guarded column. */
function checkCreate(create: CreateStmt, context: AnalysisContext): void {
  if (create.relation === undefined) return;
  const of: Target = { info: undefined, schema: create.relation.schemaname, table: create.relation.relname ?? '' };
  const parents = (create.inhRelations ?? []).flatMap((node) => ('RangeVar' in node ? [target(node.RangeVar, context)] : []));
  for (const element of create.tableElts ?? []) {
    if ('ColumnDef' in element) checkColumnDefinition(element.ColumnDef, of, parents, context, create.relation.location);
  }
}

/** A column definition whose default or generation expression the server would store in plaintext. */
function checkColumnDefinition(column: ColumnDef, of: Target, parents: readonly Target[], context: AnalysisContext, position: number | undefined): void {
  const name = column.colname;
  if (name === undefined || !storesServerValue(column)) return;
  if (columnGuarded(of, name, context) || parents.some((parent) => columnGuarded(parent, name, context))) {
    rejectColumn(columnRef(of, name), 'a DEFAULT or generated value would be stored in it by the server, in plaintext', position);
  }
}

function storesServerValue(column: ColumnDef): boolean {
  if (column.raw_default !== undefined) return true;
  return (column.constraints ?? []).some((node) => {
    if (!('Constraint' in node)) return false;
    const { contype, raw_expr: expression } = node.Constraint;
    if (contype === 'CONSTR_GENERATED' || contype === 'CONSTR_IDENTITY') return true;
    return contype === 'CONSTR_DEFAULT' && expression !== undefined && !('A_Const' in expression && expression.A_Const.isnull === true);
  });
}
