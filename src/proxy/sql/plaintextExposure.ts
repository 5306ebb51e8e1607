/**
 * Where a column stored in plaintext (policy method passthrough, masked on read for some roles)
 * may reach the client other than as a bare result column. The read path masks a result column
 * only when RowDescription names its table column, which PostgreSQL does for a bare column
 * reference — through aliases, joins, subqueries in FROM and CTEs — but not for an expression,
 * a cast, a set operation, a whole-row value, a COPY of a query, nor for data written into another
 * column (or a new table) and read back later. Those uses are recorded as exposures; whether they
 * are refused depends on the session's roles (the proxy's policy layer decides).
 */
import type { FuncCall, Node } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { plaintextOfRow, type OutputColumn, type Scope } from './nameScope.js';
import { forEachChild, lastName, nodeLocation } from './parseTree.js';
import { columnName, sameStoredColumn } from './relationLookup.js';
import type { ColumnRef, PlaintextSource } from './sqlAnalysisTypes.js';
import { SQL_TEXT_FUNCTIONS } from './sqlTextFunctions.js';
import { operatorUse, volatileFunction, volatileOperator } from './volatileCalls.js';

/**
 * Built-ins that hand an argument on outside the result, where a later statement reads it back:
 * a setting, a notification, a large object's data or OID, a sequence's value, an advisory lock's
 * key (pg_locks), a replication origin's name, a backup label, a restore point. Kept beside the
 * catalog's volatility (checkFunctionCall): it holds without a catalog, and names the route.
 */
const SIDE_CHANNEL_FUNCTIONS = new Set([
  'set_config', 'pg_notify', 'pg_logical_emit_message', 'lo_from_bytea', 'lo_put', 'pg_file_write',
  'lowrite', 'lo_create', 'lo_truncate', 'lo_truncate64', 'lo_lseek', 'lo_lseek64', 'setval',
  'pg_advisory_lock', 'pg_advisory_lock_shared', 'pg_advisory_xact_lock', 'pg_advisory_xact_lock_shared',
  'pg_try_advisory_lock', 'pg_try_advisory_lock_shared', 'pg_try_advisory_xact_lock', 'pg_try_advisory_xact_lock_shared',
  'pg_replication_origin_create', 'pg_backup_start', 'pg_start_backup', 'pg_create_restore_point',
]);

/** The function names whose calls the exposure analysis looks at (lowercase). */
export const EXPOSURE_FUNCTION_NAMES: ReadonlySet<string> = new Set([...SIDE_CHANNEL_FUNCTIONS, ...SQL_TEXT_FUNCTIONS]);

function isQueryNode(node: Node): boolean {
  return 'SelectStmt' in node || 'InsertStmt' in node || 'UpdateStmt' in node || 'DeleteStmt' in node || 'MergeStmt' in node;
}

/**
 * The first plaintext-at-rest column whose value the result of `node` may carry. Conservative:
 * any reference counts, except where only a truth value or a count comes out (IS NULL, EXISTS,
 * IN (subquery), count()) and inside a subquery's own clauses (only its result counts).
 */
export function plaintextIn(node: Node | undefined, scope: Scope, context: AnalysisContext): ColumnRef | undefined {
  if (node === undefined) return undefined;
  if ('ColumnRef' in node) {
    const resolution = scope.resolve(node.ColumnRef.fields);
    if (resolution.kind === 'column') return resolution.shows?.column;
    if (resolution.kind === 'wholeRow') return plaintextOfRow(resolution.item.columns);
    return undefined;
  }
  if ('NullTest' in node) return undefined;
  if ('FuncCall' in node) {
    // Ordering, FILTER and window clauses decide which values, not what comes out.
    if (lastName(node.FuncCall.funcname) === 'count') return undefined;
    return firstPlaintext(node.FuncCall.args ?? [], scope, context);
  }
  if ('SubLink' in node) {
    const { subLinkType, subselect } = node.SubLink;
    const yieldsValues = subLinkType === 'EXPR_SUBLINK' || subLinkType === 'ARRAY_SUBLINK' || subLinkType === 'MULTIEXPR_SUBLINK';
    return yieldsValues && subselect !== undefined ? plaintextOfRow(context.subquery(subselect, scope)) : undefined;
  }
  if (isQueryNode(node)) return plaintextOfRow(context.subquery(node, scope));
  let found: ColumnRef | undefined;
  forEachChild(node, (child) => {
    found ??= plaintextIn(child, scope, context);
  });
  return found;
}

function firstPlaintext(nodes: readonly Node[], scope: Scope, context: AnalysisContext): ColumnRef | undefined {
  for (const node of nodes) {
    const found = plaintextIn(node, scope, context);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * What an item of a select or RETURNING list shows: a bare column reference keeps what the column
 * shows (RowDescription follows it); anything else — casts included — is computed.
 */
export function targetShows(value: Node, scope: Scope, context: AnalysisContext): PlaintextSource | undefined {
  if ('ColumnRef' in value) {
    const resolution = scope.resolve(value.ColumnRef.fields);
    if (resolution.kind === 'column') return resolution.shows;
    if (resolution.kind !== 'wholeRow') return undefined;
  }
  const from = plaintextIn(value, scope, context);
  return from === undefined ? undefined : { column: from, computed: true };
}

/** Where a statement's result columns go: to the client (with RowDescription), or elsewhere. */
export type ResultDestination = 'client' | 'copy' | 'new table';

/** Records result columns that would leave unmasked: computed ones, or any when no RowDescription names them. */
export function exposeResultColumns(outputs: readonly OutputColumn[], destination: ResultDestination, context: AnalysisContext): void {
  outputs.forEach((output, index) => {
    const shows = output.shows;
    if (shows === undefined) return;
    const label = `result column ${index + 1}${output.name === undefined ? '' : ` (${output.name})`}`;
    if (destination === 'copy') {
      context.findings.addExposure(shows.column, `COPY (query) sends ${label} with no table column for pgveil to mask`, undefined);
    } else if (destination === 'new table') {
      context.findings.addExposure(shows.column, `${label} is stored into a new table, where it would be read unmasked`, undefined);
    } else if (shows.computed) {
      context.findings.addExposure(shows.column, `${label} is computed from it (an expression, cast, set operation or whole row), so no table column names it for pgveil to mask`, undefined);
    }
  });
}

/** A value from `from` written into `target`: stored elsewhere, it would be read back unmasked. */
export function exposeWrite(target: ColumnRef | undefined, from: ColumnRef | undefined, position: number | undefined, context: AnalysisContext): void {
  if (from === undefined || (target !== undefined && sameStoredColumn(target, from))) return;
  const where = target === undefined ? 'a column pgveil cannot see' : `column ${columnName(target)}`;
  context.findings.addExposure(from, `its value is written into ${where}, where it would be read unmasked`, position);
}

/** A FROM item computed by a function (or XMLTABLE, JSON_TABLE…) from it: its columns name no table column. */
export function exposeFunctionSource(node: Node, scope: Scope, context: AnalysisContext): void {
  const from = plaintextIn(node, scope, context);
  if (from !== undefined) context.findings.addExposure(from, 'it is passed to a function in FROM, whose result columns name no table column', nodeLocation(node));
}

/** The rule, and what lifts it for a function that stores nothing, for the refusal message. */
const NOT_MARKED_SAFE = 'PostgreSQL\'s catalog does not mark immutable or stable (pg_proc.provolatile) and so may hand the value on '
  + 'outside the result; in any clause, a masked column\'s value may only reach immutable or stable functions '
  + '(ALTER FUNCTION ... STABLE marks one that stores nothing)';

/**
 * Function calls anywhere (predicates included) that move a value out of sight or read SQL text:
 * the built-ins known to store an argument, and any other the catalog does not mark immutable or
 * stable. The ORDER BY of `WITHIN GROUP` holds an ordered-set aggregate's arguments.
 */
export function checkFunctionCall(call: FuncCall, scope: Scope, context: AnalysisContext): void {
  const name = lastName(call.funcname);
  if (SQL_TEXT_FUNCTIONS.has(name)) context.findings.addOpaqueRead(`function ${name}() reads data through SQL text or a cursor pgveil cannot analyse`);
  const sideChannel = SIDE_CHANNEL_FUNCTIONS.has(name);
  if (!sideChannel && context.relations.schema.functionIsVolatile === undefined) return;
  const from = firstPlaintext([...(call.args ?? []), ...(call.agg_order ?? [])], scope, context);
  if (from === undefined) return;
  if (sideChannel) {
    context.findings.addExposure(from, `it is passed to ${name}(), which hands the value on outside the result`, call.location);
    return;
  }
  const volatile = volatileFunction(call.funcname, context.relations.schema);
  if (volatile !== undefined) context.findings.addExposure(from, `it is passed to ${volatile}(), which ${NOT_MARKED_SAFE}`, call.location);
}

/** An operator (LIKE, IN, BETWEEN, `CASE x WHEN`, `ORDER BY … USING` too) receiving it whose function is not marked safe. */
export function checkOperatorUse(node: Node, scope: Scope, context: AnalysisContext): void {
  const schema = context.relations.schema;
  if (schema.operatorIsVolatile === undefined) return;
  const use = operatorUse(node);
  if (use === undefined) return;
  const from = firstPlaintext(use.operands, scope, context)
    ?? (use.subquery === undefined ? undefined : plaintextOfRow(context.subquery(use.subquery, scope)));
  if (from === undefined) return;
  const operator = volatileOperator(use, schema);
  if (operator !== undefined) {
    context.findings.addExposure(from, `it is passed to operator ${operator}, whose function (pg_operator.oprcode) ${NOT_MARKED_SAFE}`, nodeLocation(node));
  }
}
