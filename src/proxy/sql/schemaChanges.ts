/**
 * What each statement of a text does to the shape of relations, as far as pgveil's catalog cache
 * is concerned: which relations it creates, drops, renames or moves, and whose column list it
 * changes. The proxy's catalog cannot see DDL until it commits, so the session keeps these facts
 * meanwhile and refuses statements that would be analysed against a stale column list of a
 * relation with protected columns. Unknown DDL counts as changing anything (fail closed).
 */
import type { AlterTableCmd, AlterTableStmt, CreateStmt, DropStmt, Node, RenameStmt } from 'libpg-query';
import { nodeType, stringList } from './parseTree.js';
import { mentionedRelations, relationNameOf, type RelationName } from './relationMentions.js';
import { parseSql, SqlSyntaxError } from './sqlParser.js';

export type { RelationName } from './relationMentions.js';

export type SchemaChange =
  /** Columns dropped, reordered or of unknown effect: the cached column list is no longer right. */
  | { readonly kind: 'columnsChanged'; readonly relation: RelationName }
  /** Columns appended: existing positions hold, only these names are new. */
  | { readonly kind: 'columnsAdded'; readonly relation: RelationName; readonly columns: readonly string[] }
  /** A relation (newly) bearing this name: created, or renamed or moved here. */
  | {
    readonly kind: 'created';
    readonly relation: RelationName;
    /** INHERITS / PARTITION OF parents. */
    readonly parents: readonly RelationName[];
    /** A view: the relations its query reads (writes through it reach them). */
    readonly viewOf: readonly RelationName[] | undefined;
    /** A rename or SET SCHEMA: the relation it was (which no longer bears that name). */
    readonly renamedFrom: RelationName | undefined;
  }
  /** Dropped, or renamed or moved away. */
  | { readonly kind: 'removed'; readonly relation: RelationName }
  /** Every relation of the schema (dropped or renamed schema). */
  | { readonly kind: 'schemaChanged'; readonly schema: string }
  /** Any relation may have changed (CASCADE, DO blocks, extensions, DDL pgveil does not know). */
  | { readonly kind: 'anything' };

export interface StatementSchemaFacts {
  /** The parse node name (`InsertStmt`, `AlterTableStmt`…). */
  readonly type: string;
  /** Relations the statement reads, writes or alters (not those it defines). */
  readonly mentions: readonly RelationName[];
  readonly cteNames: ReadonlySet<string>;
  readonly changes: readonly SchemaChange[];
}

/** Statements that leave every relation's name and column list as they were. */
const SHAPE_PRESERVING = new Set([
  'SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CopyStmt', 'TransactionStmt',
  'VariableSetStmt', 'VariableShowStmt', 'ExplainStmt', 'ExecuteStmt', 'PrepareStmt', 'DeallocateStmt',
  'DeclareCursorStmt', 'FetchStmt', 'ClosePortalStmt', 'ListenStmt', 'NotifyStmt', 'UnlistenStmt',
  'LockStmt', 'DiscardStmt', 'CallStmt', 'CheckPointStmt', 'VacuumStmt', 'TruncateStmt', 'IndexStmt',
  'CommentStmt', 'GrantStmt', 'GrantRoleStmt', 'CreateFunctionStmt', 'AlterFunctionStmt', 'CreateTrigStmt',
  'CreateSeqStmt', 'AlterSeqStmt', 'CreateEnumStmt', 'AlterEnumStmt', 'CompositeTypeStmt', 'CreateDomainStmt',
  'AlterDomainStmt', 'CreateRoleStmt', 'AlterRoleStmt', 'AlterRoleSetStmt', 'DropRoleStmt', 'AlterOwnerStmt',
  'AlterDefaultPrivilegesStmt', 'CreatePolicyStmt', 'AlterPolicyStmt', 'CreateStatsStmt', 'AlterStatsStmt',
  'ReindexStmt', 'ClusterStmt', 'RefreshMatViewStmt', 'CreatedbStmt', 'DropdbStmt', 'AlterDatabaseStmt',
  'AlterDatabaseSetStmt', 'AlterSystemStmt', 'CreateTableSpaceStmt', 'DropTableSpaceStmt',
  'AlterTableSpaceOptionsStmt', 'RuleStmt', 'CreateCastStmt', 'SecLabelStmt', 'ConstraintsSetStmt',
  'LoadStmt', 'DropOwnedStmt', 'ReassignOwnedStmt', 'CreateSchemaStmt', 'Empty',
]);

/** ALTER TABLE subcommands that change neither column names, order, types that matter, nor lineage. */
const SHAPE_PRESERVING_COMMANDS = new Set([
  'AT_AddConstraint', 'AT_DropConstraint', 'AT_ValidateConstraint', 'AT_AlterConstraint', 'AT_AddIndex',
  'AT_AddIndexConstraint', 'AT_SetNotNull', 'AT_DropNotNull', 'AT_SetStatistics', 'AT_SetOptions',
  'AT_ResetOptions', 'AT_SetStorage', 'AT_SetCompression', 'AT_ChangeOwner', 'AT_ClusterOn', 'AT_DropCluster',
  'AT_SetLogged', 'AT_SetUnLogged', 'AT_SetRelOptions', 'AT_ResetRelOptions', 'AT_ReplaceRelOptions',
  'AT_SetTableSpace', 'AT_SetAccessMethod', 'AT_EnableTrig', 'AT_EnableAlwaysTrig', 'AT_EnableReplicaTrig',
  'AT_DisableTrig', 'AT_EnableTrigAll', 'AT_DisableTrigAll', 'AT_EnableTrigUser', 'AT_DisableTrigUser',
  'AT_EnableRule', 'AT_EnableAlwaysRule', 'AT_EnableReplicaRule', 'AT_DisableRule', 'AT_EnableRowSecurity',
  'AT_DisableRowSecurity', 'AT_ForceRowSecurity', 'AT_NoForceRowSecurity', 'AT_ReplicaIdentity',
  'AT_GenericOptions', 'AT_ColumnDefault', 'AT_CookedColumnDefault', 'AT_AddIdentity', 'AT_SetIdentity',
  'AT_DropIdentity', 'AT_DropExpression', 'AT_SetExpression', 'AT_AlterColumnGenericOptions',
  'AT_AlterColumnType', 'AT_AddOf', 'AT_DropOf',
]);

const RELATION_OBJECTS = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE']);

/** The facts of each statement of `sql`, in order; [] for text the parser rejects. */
export function schemaFactsOf(sql: string): readonly StatementSchemaFacts[] {
  let statements;
  try {
    statements = parseSql(sql).stmts ?? [];
  } catch (error) {
    if (error instanceof SqlSyntaxError) return [];
    throw error;
  }
  return statements.map((raw) => {
    const mentions = mentionedRelations(raw.stmt);
    return {
      type: nodeType(raw.stmt) ?? 'Empty',
      mentions: mentions.relations,
      cteNames: mentions.cteNames,
      changes: changesOf(raw.stmt, mentions.relations, mentions.cteNames),
    };
  });
}

function changesOf(node: Node | undefined, mentions: readonly RelationName[], cteNames: ReadonlySet<string>): SchemaChange[] {
  if (node === undefined) return [];
  if ('AlterTableStmt' in node) return alterTableChanges(node.AlterTableStmt);
  if ('RenameStmt' in node) return renameChanges(node.RenameStmt);
  if ('AlterObjectSchemaStmt' in node) {
    const { objectType, relation, newschema } = node.AlterObjectSchemaStmt;
    if (relation === undefined || !RELATION_OBJECTS.has(objectType ?? '')) return [];
    return moved(relationNameOf(relation), { schema: newschema, table: relation.relname ?? '' });
  }
  if ('DropStmt' in node) return dropChanges(node.DropStmt);
  if ('CreateStmt' in node) return createChanges(node.CreateStmt);
  if ('CreateForeignTableStmt' in node) return node.CreateForeignTableStmt.base === undefined ? [] : createChanges(node.CreateForeignTableStmt.base);
  if ('CreateTableAsStmt' in node) return createdOnly(node.CreateTableAsStmt.into?.rel);
  if ('SelectStmt' in node) return createdOnly(node.SelectStmt.intoClause?.rel);
  if ('ViewStmt' in node) {
    const view = node.ViewStmt.view;
    if (view === undefined) return [];
    const sources = mentions.filter((name) => name.schema !== undefined || !cteNames.has(name.table));
    return [{ kind: 'created', relation: relationNameOf(view), parents: [], viewOf: sources, renamedFrom: undefined }];
  }
  if ('CreateSchemaStmt' in node) return schemaElementChanges(node.CreateSchemaStmt.schemaname, node.CreateSchemaStmt.schemaElts);
  return SHAPE_PRESERVING.has(nodeType(node) ?? '') ? [] : [{ kind: 'anything' }];
}

function alterTableChanges(alter: AlterTableStmt): SchemaChange[] {
  const relation = alter.relation;
  // ALTER TYPE … CASCADE reaches the columns of typed tables pgveil cannot name.
  if (alter.objtype === 'OBJECT_TYPE') return (alter.cmds ?? []).length === 0 ? [] : [{ kind: 'anything' }];
  if (relation === undefined) return [];
  const name = relationNameOf(relation);
  const changes: SchemaChange[] = [];
  for (const node of alter.cmds ?? []) {
    if (!('AlterTableCmd' in node)) continue;
    changes.push(...commandChanges(node.AlterTableCmd, name));
  }
  return changes;
}

function commandChanges(command: AlterTableCmd, relation: RelationName): SchemaChange[] {
  const subtype = command.subtype ?? '';
  const definition = command.def;
  if (subtype === 'AT_AddColumn' || subtype === 'AT_AddColumnToView') {
    const column = definition !== undefined && 'ColumnDef' in definition ? definition.ColumnDef.colname : undefined;
    return column === undefined ? [{ kind: 'columnsChanged', relation }] : [{ kind: 'columnsAdded', relation, columns: [column] }];
  }
  if (subtype === 'AT_AttachPartition' || subtype === 'AT_DetachPartition' || subtype === 'AT_DetachPartitionFinalize') {
    const child = definition !== undefined && 'PartitionCmd' in definition ? definition.PartitionCmd.name : undefined;
    return child === undefined ? [{ kind: 'anything' }] : [{ kind: 'columnsChanged', relation: relationNameOf(child) }];
  }
  if (SHAPE_PRESERVING_COMMANDS.has(subtype)) return [];
  return [{ kind: 'columnsChanged', relation }];
}

function renameChanges(rename: RenameStmt): SchemaChange[] {
  const type = rename.renameType ?? '';
  if (type === 'OBJECT_SCHEMA') {
    return [rename.subname, rename.newname].flatMap((schema) => (schema === undefined ? [] : [{ kind: 'schemaChanged', schema } as const]));
  }
  // ALTER TYPE … RENAME ATTRIBUTE … CASCADE renames columns of typed tables.
  if (type === 'OBJECT_ATTRIBUTE') return rename.behavior === 'DROP_CASCADE' ? [{ kind: 'anything' }] : [];
  if (!RELATION_OBJECTS.has(type) || rename.relation === undefined) return [];
  const from = relationNameOf(rename.relation);
  return moved(from, { schema: from.schema, table: rename.newname ?? '' });
}

function moved(from: RelationName, to: RelationName): SchemaChange[] {
  return [{ kind: 'created', relation: to, parents: [], viewOf: undefined, renamedFrom: from }];
}

function dropChanges(drop: DropStmt): SchemaChange[] {
  // CASCADE may drop columns of other tables (a type, a function of a generated column…).
  if (drop.behavior === 'DROP_CASCADE') return [{ kind: 'anything' }];
  const type = drop.removeType ?? '';
  if (type === 'OBJECT_SCHEMA') {
    return (drop.objects ?? []).flatMap((object) => ('String' in object ? [{ kind: 'schemaChanged', schema: object.String.sval ?? '' } as const] : []));
  }
  if (!RELATION_OBJECTS.has(type)) return [];
  return (drop.objects ?? []).flatMap((object): SchemaChange[] => {
    const names = 'List' in object ? stringList(object.List.items) : [];
    const table = names[names.length - 1];
    if (table === undefined) return [];
    return [{ kind: 'removed', relation: { schema: names.length > 1 ? names[names.length - 2] : undefined, table } }];
  });
}

function createChanges(create: CreateStmt): SchemaChange[] {
  if (create.relation === undefined) return [];
  const parents = (create.inhRelations ?? []).flatMap((node) => ('RangeVar' in node ? [relationNameOf(node.RangeVar)] : []));
  return [{ kind: 'created', relation: relationNameOf(create.relation), parents, viewOf: undefined, renamedFrom: undefined }];
}

function createdOnly(relation: { schemaname?: string; relname?: string } | undefined): SchemaChange[] {
  if (relation === undefined) return [];
  return [{ kind: 'created', relation: relationNameOf(relation), parents: [], viewOf: undefined, renamedFrom: undefined }];
}

/** CREATE SCHEMA s CREATE TABLE t …: unqualified elements land in the new schema. */
function schemaElementChanges(schema: string | undefined, elements: readonly Node[] | undefined): SchemaChange[] {
  return (elements ?? []).flatMap((element) => {
    const facts = mentionedRelations(element);
    return changesOf(element, facts.relations, facts.cteNames).map((change): SchemaChange => {
      if (change.kind !== 'created' || change.relation.schema !== undefined) return change;
      return { ...change, relation: { schema, table: change.relation.table } };
    });
  });
}
