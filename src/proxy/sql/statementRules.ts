/**
 * Which statement rules a statement meets, read from its parse tree: code and derived objects,
 * server-side files and programs, role switches, other sessions' query text, and DDL outside the
 * short list of statements every role may run. Pure; whether a finding is a refusal depends on
 * the session (its roles' plaintext and privileges), which the policy layer decides.
 *
 * pgveil cannot see through code that runs inside PostgreSQL (functions, triggers, rules, DO,
 * SQL in strings), so the rules are about creating and running such code at all, not about what
 * it does. Node types and function names come from PostgreSQL's own parser: quoting, case and
 * schema qualification cannot hide them.
 */
import type { Node } from 'libpg-query';
import { forEachChild, nodeType, stringList } from './parseTree.js';
import { pinnedSettingName } from './pinnedSettingName.js';
import type { RelationLookup } from './relationLookup.js';
import type { RuleFinding } from './sqlAnalysisTypes.js';
import { SQL_TEXT_FUNCTIONS } from './sqlTextFunctions.js';

/** Statement kinds any role may run (their values and names are analysed elsewhere). */
const PLAIN_STATEMENTS = new Set([
  'SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CopyStmt', 'ExplainStmt', 'TransactionStmt',
  'VariableSetStmt', 'VariableShowStmt', 'DiscardStmt', 'ListenStmt', 'UnlistenStmt', 'NotifyStmt', 'LockStmt',
  'DeclareCursorStmt', 'FetchStmt', 'ClosePortalStmt', 'PrepareStmt', 'ExecuteStmt', 'DeallocateStmt', 'CallStmt',
  'VacuumStmt', 'TruncateStmt', 'CreateStmt', 'IndexStmt', 'AlterTableStmt', 'DropStmt', 'RenameStmt', 'CommentStmt',
  'CreateSeqStmt', 'AlterSeqStmt', 'CreateSchemaStmt', 'GrantStmt', 'ReindexStmt', 'ClusterStmt', 'CreateEnumStmt',
  'AlterEnumStmt', 'CompositeTypeStmt', 'CreateDomainStmt', 'CreateStatsStmt', 'ConstraintsSetStmt', 'CheckPointStmt',
  'Empty', 'Unparsed',
]);

/** Creating or changing code pgveil cannot analyse. */
const CODE_STATEMENTS: Readonly<Record<string, string>> = {
  CreateFunctionStmt: 'CREATE FUNCTION/PROCEDURE', AlterFunctionStmt: 'ALTER FUNCTION', DoStmt: 'DO',
  CreateTrigStmt: 'CREATE TRIGGER', RuleStmt: 'CREATE RULE', CreateEventTrigStmt: 'CREATE EVENT TRIGGER',
  AlterEventTrigStmt: 'ALTER EVENT TRIGGER', CreateExtensionStmt: 'CREATE EXTENSION', AlterExtensionStmt: 'ALTER EXTENSION',
  AlterExtensionContentsStmt: 'ALTER EXTENSION', CreatePLangStmt: 'CREATE LANGUAGE', DefineStmt: 'CREATE AGGREGATE/OPERATOR/TYPE',
  CreateCastStmt: 'CREATE CAST', CreateTransformStmt: 'CREATE TRANSFORM', CreatePolicyStmt: 'CREATE POLICY',
  AlterPolicyStmt: 'ALTER POLICY', CreateFdwStmt: 'CREATE FOREIGN DATA WRAPPER', AlterFdwStmt: 'ALTER FOREIGN DATA WRAPPER',
  CreateForeignServerStmt: 'CREATE SERVER', AlterForeignServerStmt: 'ALTER SERVER', CreateForeignTableStmt: 'CREATE FOREIGN TABLE',
  ImportForeignSchemaStmt: 'IMPORT FOREIGN SCHEMA', CreateUserMappingStmt: 'CREATE USER MAPPING', AlterUserMappingStmt: 'ALTER USER MAPPING',
  CreateConversionStmt: 'CREATE CONVERSION', CreateOpClassStmt: 'CREATE OPERATOR CLASS', AlterOperatorStmt: 'ALTER OPERATOR',
  LoadStmt: 'LOAD', AlterSystemStmt: 'ALTER SYSTEM', CreateSubscriptionStmt: 'CREATE SUBSCRIPTION',
  AlterSubscriptionStmt: 'ALTER SUBSCRIPTION',
};

/**
 * Of those, the ones that bring in code or another route to the tables for every role: an
 * extension's scripts and functions, a language, a foreign server or table (postgres_fdw and
 * dblink can reach this very database under a name pgveil does not know).
 */
const UNANALYSABLE_CODE_STATEMENTS = new Set([
  'CreateExtensionStmt', 'AlterExtensionStmt', 'AlterExtensionContentsStmt', 'CreatePLangStmt', 'CreateFdwStmt', 'AlterFdwStmt',
  'CreateForeignServerStmt', 'AlterForeignServerStmt', 'CreateForeignTableStmt', 'ImportForeignSchemaStmt',
  'CreateUserMappingStmt', 'AlterUserMappingStmt',
  // A shared library loaded into the server, its settings (preload libraries), or rows replicated
  // straight into the tables from another server.
  'LoadStmt', 'AlterSystemStmt', 'CreateSubscriptionStmt', 'AlterSubscriptionStmt',
]);

/**
 * DDL that makes or changes logins and role memberships: a login made through pgveil can connect
 * to the database without it. Every role needs the `ddl` privilege for it.
 */
const ROLE_STATEMENTS: Readonly<Record<string, string>> = {
  CreateRoleStmt: 'CREATE ROLE', AlterRoleStmt: 'ALTER ROLE', AlterRoleSetStmt: 'ALTER ROLE … SET', GrantRoleStmt: 'GRANT … TO (a role)',
};

const DERIVED_STATEMENTS: Readonly<Record<string, string>> = {
  ViewStmt: 'CREATE VIEW', CreateTableAsStmt: 'CREATE TABLE AS / MATERIALIZED VIEW', RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
};

const CODE_SUBCOMMANDS = new Set([
  'AT_EnableTrig', 'AT_EnableAlwaysTrig', 'AT_EnableReplicaTrig', 'AT_DisableTrig', 'AT_EnableTrigAll', 'AT_DisableTrigAll',
  'AT_EnableTrigUser', 'AT_DisableTrigUser', 'AT_EnableRule', 'AT_EnableAlwaysRule', 'AT_EnableReplicaRule', 'AT_DisableRule',
  'AT_EnableRowSecurity', 'AT_DisableRowSecurity', 'AT_ForceRowSecurity', 'AT_NoForceRowSecurity',
]);

/** Functions that read or write the server's files, or start programs. */
const FILE_FUNCTIONS = new Set([
  'pg_read_file', 'pg_read_binary_file', 'pg_ls_dir', 'pg_ls_logdir', 'pg_ls_waldir', 'pg_ls_tmpdir', 'pg_ls_archive_statusdir',
  'pg_ls_logicalsnapdir', 'pg_ls_logicalmapdir', 'pg_ls_replslotdir', 'pg_stat_file', 'lo_import', 'lo_export',
  'pg_file_write', 'pg_file_rename', 'pg_file_unlink', 'pg_file_sync', 'pg_logdir_ls',
]);

/**
 * Views and functions that show other sessions' query text, and the planner's statistics: ANALYZE
 * samples column values (most common values, histogram bounds) into pg_statistic as they are
 * stored, the plaintext of a passthrough column included, with no table column to mask them by.
 */
const STATISTICS_RELATIONS = ['pg_statistic', 'pg_stats', 'pg_statistic_ext_data', 'pg_stats_ext', 'pg_stats_ext_exprs'];
const MONITOR_RELATIONS = new Set(['pg_stat_activity', 'pg_stat_statements', 'pg_stat_statements_info', ...STATISTICS_RELATIONS]);
const MONITOR_FUNCTIONS = new Set(['pg_stat_get_activity', 'pg_stat_get_backend_activity', 'pg_stat_statements', 'pg_mcv_list_items']);
/** Statements whose target relation is a bare RangeVar (no node wrapper): RETURNING or COPY TO reads it. */
const TARGET_STATEMENTS = ['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CopyStmt'] as const;

const ROLE_SETTINGS = new Set(['role', 'session_authorization']);

/** Every function and relation name a rule looks for in a statement's expressions (lowercase). */
export const RULE_EXPRESSION_NAMES: ReadonlySet<string> = new Set([
  ...FILE_FUNCTIONS, ...SQL_TEXT_FUNCTIONS, ...MONITOR_RELATIONS, ...MONITOR_FUNCTIONS, 'set_config',
]);

/** Languages whose bodies pgveil reads for dynamic SQL; any other is unanalysable. */
const READ_LANGUAGES = new Set(['sql', 'plpgsql']);
/** Dynamic SQL in a body: plpgsql EXECUTE, or a call of a function that runs SQL text. */
const DYNAMIC_SQL = new RegExp(`\\bexecute\\b|\\b(${[...SQL_TEXT_FUNCTIONS].join('|')})\\b`, 'i');

function lastName(names: readonly Node[] | undefined): string {
  return (stringList(names).at(-1) ?? '').toLowerCase();
}

/** The body and language of CREATE FUNCTION or DO, from their option lists. */
function codeBody(options: readonly Node[] | undefined, defaultLanguage: string): { language: string; body: string } {
  let language = defaultLanguage;
  let body = '';
  for (const option of options ?? []) {
    if (!('DefElem' in option)) continue;
    const { defname, arg } = option.DefElem;
    if (defname === 'language' && arg !== undefined && 'String' in arg) language = (arg.String.sval ?? '').toLowerCase();
    if (defname === 'as' && arg !== undefined) {
      if ('String' in arg) body = arg.String.sval ?? '';
      else if ('List' in arg) body = stringList(arg.List.items).join('\n');
    }
  }
  return { language, body };
}

function bodyIsUnanalysable(language: string, body: string): boolean {
  return !READ_LANGUAGES.has(language) || DYNAMIC_SQL.test(body);
}

function constantText(node: Node | undefined): string | undefined {
  if (node !== undefined && 'A_Const' in node) return node.A_Const.sval?.sval;
  if (node !== undefined && 'TypeCast' in node) return constantText(node.TypeCast.arg);
  return undefined;
}

/** Every rule one top-level statement meets; `relations` tells which tables have column policies. */
export function statementRuleFindings(node: Node | undefined, relations: RelationLookup): RuleFinding[] {
  const findings: RuleFinding[] = [];
  if (node === undefined) return findings;
  topLevel(node, relations, findings);
  walkExpressions(node, findings);
  return findings;
}

function hasProtectedColumns(relations: RelationLookup, schema: string | undefined, table: string | undefined): boolean {
  if (table === undefined) return false;
  try {
    return relations.table(schema, table)?.hasProtectedColumns === true;
  } catch {
    return true; // a name pgveil cannot resolve safely counts as protected
  }
}

function topLevel(node: Node, relations: RelationLookup, findings: RuleFinding[]): void {
  const type = nodeType(node) ?? 'Empty';
  if ('CreateTrigStmt' in node) {
    const relation = node.CreateTrigStmt.relation;
    const onProtected = hasProtectedColumns(relations, relation?.schemaname, relation?.relname);
    findings.push({ rule: 'code', what: onProtected ? `CREATE TRIGGER on ${relation?.relname ?? 'a table'}, a table with column policies` : 'CREATE TRIGGER', unanalysable: onProtected });
  } else if ('RuleStmt' in node) {
    const relation = node.RuleStmt.relation;
    const onProtected = hasProtectedColumns(relations, relation?.schemaname, relation?.relname);
    findings.push({ rule: 'code', what: onProtected ? `CREATE RULE on ${relation?.relname ?? 'a table'}, a table with column policies` : 'CREATE RULE', unanalysable: onProtected });
  } else if ('CreateFunctionStmt' in node) {
    const statement = node.CreateFunctionStmt;
    const { language, body } = codeBody(statement.options, 'sql');
    const unanalysable = bodyIsUnanalysable(language, body);
    findings.push({ rule: 'code', what: `CREATE ${statement.is_procedure === true ? 'PROCEDURE' : 'FUNCTION'}${unanalysable ? ` whose ${READ_LANGUAGES.has(language) ? 'body runs dynamic SQL' : `language ${language} pgveil does not read`}` : ''}`, unanalysable });
  } else if ('DoStmt' in node) {
    const { language, body } = codeBody(node.DoStmt.args, 'plpgsql');
    const unanalysable = bodyIsUnanalysable(language, body);
    findings.push({ rule: 'code', what: `DO${unanalysable ? ' with dynamic SQL or in a language pgveil does not read' : ''}`, unanalysable });
  } else if (type in CODE_STATEMENTS) {
    findings.push(UNANALYSABLE_CODE_STATEMENTS.has(type)
      ? { rule: 'code', what: CODE_STATEMENTS[type] as string, unanalysable: true }
      : { rule: 'code', what: CODE_STATEMENTS[type] as string });
  } else if (type in DERIVED_STATEMENTS) {
    findings.push({ rule: 'derived', what: DERIVED_STATEMENTS[type] as string });
  } else if ('SelectStmt' in node && node.SelectStmt.intoClause !== undefined) {
    findings.push({ rule: 'derived', what: 'SELECT INTO' });
  } else if ('CopyStmt' in node && (node.CopyStmt.filename !== undefined || node.CopyStmt.is_program === true)) {
    findings.push({ rule: 'server-files', what: node.CopyStmt.is_program === true ? 'COPY … PROGRAM' : 'COPY to or from a server file' });
    // A program can connect back (psql, a trusted local login) and reach the tables unseen, as dblink can.
    if (node.CopyStmt.is_program === true) findings.push({ rule: 'code', what: 'COPY … PROGRAM, which runs a program on the server', unanalysable: true });
  } else if ('VariableSetStmt' in node) {
    const { name, kind, args } = node.VariableSetStmt;
    const value = constantText(args?.[0])?.toLowerCase();
    if (ROLE_SETTINGS.has((name ?? '').toLowerCase()) && kind === 'VAR_SET_VALUE' && value !== 'none') {
      findings.push({ rule: 'role-switch', what: name === 'role' ? 'SET ROLE' : 'SET SESSION AUTHORIZATION' });
    }
  } else if ('CreateStmt' in node) {
    if (hasGeneratedColumn(node)) findings.push({ rule: 'derived', what: 'a generated column' });
  } else if ('AlterTableStmt' in node) {
    for (const command of node.AlterTableStmt.cmds ?? []) {
      if (!('AlterTableCmd' in command)) continue;
      const subtype = command.AlterTableCmd.subtype ?? '';
      if (CODE_SUBCOMMANDS.has(subtype)) findings.push({ rule: 'code', what: 'ALTER TABLE … ENABLE/DISABLE TRIGGER, RULE or ROW LEVEL SECURITY' });
      if (subtype === 'AT_SetExpression' || (command.AlterTableCmd.def !== undefined && hasGeneratedColumn(command.AlterTableCmd.def))) {
        findings.push({ rule: 'derived', what: 'a generated column' });
      }
    }
  } else if ('CreateSchemaStmt' in node) {
    for (const element of node.CreateSchemaStmt.schemaElts ?? []) topLevel(element, relations, findings);
    return;
  } else if ('ExplainStmt' in node && node.ExplainStmt.query !== undefined) {
    topLevel(node.ExplainStmt.query, relations, findings);
    return;
  }
  if (type in ROLE_STATEMENTS) {
    findings.push({ rule: 'ddl', what: `${ROLE_STATEMENTS[type] as string}, which makes or changes a login that can reach the database without pgveil`, everyRole: true });
  } else if (!PLAIN_STATEMENTS.has(type) && !(type in CODE_STATEMENTS) && !(type in DERIVED_STATEMENTS)) {
    findings.push({ rule: 'ddl', what: type.replace(/Stmt$/, '') });
  }
}

function hasGeneratedColumn(node: Node): boolean {
  let found = false;
  const visit = (child: Node): void => {
    if ('Constraint' in child && (child.Constraint.contype === 'CONSTR_GENERATED')) found = true;
    if (!found) forEachChild(child, visit);
  };
  visit(node);
  return found;
}

/** Function calls and relations anywhere in the statement. */
function walkExpressions(node: Node, findings: RuleFinding[]): void {
  const visit = (child: Node): void => {
    if ('FuncCall' in child) {
      const name = lastName(child.FuncCall.funcname);
      if (FILE_FUNCTIONS.has(name)) findings.push({ rule: 'server-files', what: `${name}()` });
      if (SQL_TEXT_FUNCTIONS.has(name)) findings.push({ rule: 'code', what: `${name}(), which runs SQL given as text`, unanalysable: true });
      if (MONITOR_FUNCTIONS.has(name)) findings.push({ rule: 'monitor', what: `${name}()` });
      if (name === 'set_config') {
        const setting = (constantText(child.FuncCall.args?.[0]) ?? pinnedSettingName(child.FuncCall, node))?.toLowerCase();
        if (setting === undefined || ROLE_SETTINGS.has(setting)) findings.push({ rule: 'role-switch', what: 'set_config of the role' });
      }
    } else if ('RangeVar' in child && MONITOR_RELATIONS.has((child.RangeVar.relname ?? '').toLowerCase())) {
      findings.push({ rule: 'monitor', what: child.RangeVar.relname ?? 'pg_stat_activity' });
    } else {
      for (const type of TARGET_STATEMENTS) {
        const relname = (child as Record<string, { relation?: { relname?: string } } | undefined>)[type]?.relation?.relname;
        if (relname !== undefined && MONITOR_RELATIONS.has(relname.toLowerCase())) findings.push({ rule: 'monitor', what: relname });
      }
    }
    forEachChild(child, visit);
  };
  visit(node);
}
