/**
 * What a statement does to the session state that name resolution depends on: the search_path,
 * the current role (`$user` in the path names the current user's schema), and the transaction
 * boundaries that undo SET / SET LOCAL. Pure: read from the parse tree only. Whether the change
 * happens is the server's word (the caller applies an effect once the statement completed).
 *
 * Code pgveil cannot see (DO blocks, CALL, `set_config` with a computed argument or in a clause
 * that may run it any number of times) makes the path and role unknown: the caller then falls
 * back to its conservative reading until the session sets them again with constants.
 */
import type { FuncCall, Node, SelectStmt, TransactionStmt, VariableSetStmt } from 'libpg-query';
import { forEachChild, stringList, stripCasts } from './parseTree.js';
import { pinnedSettingName } from './pinnedSettingName.js';
import { parseSearchPath, searchPathFromSetArguments, type SetArgument } from './searchPathValue.js';

export type TransactionAction = 'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollback-to' | 'prepare';

export type SessionEffect =
  /** `SET [LOCAL] search_path …`, `set_config('search_path', …)`: the schema names, in order. */
  | { readonly kind: 'set-path'; readonly names: readonly string[]; readonly local: boolean }
  /** RESET search_path, SET search_path TO DEFAULT, RESET ALL: back to the session's initial value. */
  | { readonly kind: 'reset-path'; readonly local: boolean }
  /** SET ROLE name (null: NONE). */
  | { readonly kind: 'set-role'; readonly role: string | null; readonly local: boolean }
  /** RESET ROLE, SET ROLE DEFAULT. */
  | { readonly kind: 'reset-role'; readonly local: boolean }
  /** SET SESSION AUTHORIZATION name (null: DEFAULT, the login user); it also clears SET ROLE. */
  | { readonly kind: 'set-session-user'; readonly user: string | null; readonly local: boolean }
  /** DISCARD ALL: path reset, role and session user back to the login user. */
  | { readonly kind: 'discard-all' }
  /** The statement may change path or role in a way pgveil cannot read. */
  | { readonly kind: 'unknown' }
  | { readonly kind: 'transaction'; readonly action: TransactionAction; readonly savepoint?: string; readonly chain?: boolean };

const NO_EFFECTS: readonly SessionEffect[] = [];
const UNKNOWN: readonly SessionEffect[] = [{ kind: 'unknown' }];
/** Settings whose change moves name resolution. */
const RESOLUTION_SETTINGS = new Set(['search_path', 'role', 'session_authorization']);

/** The session effects of one top-level statement; `text` is the statement's own text. */
export function sessionEffectsOf(node: Node | undefined, text: string): readonly SessionEffect[] {
  if (node === undefined) return NO_EFFECTS;
  if ('VariableSetStmt' in node) return variableSetEffects(node.VariableSetStmt);
  if ('TransactionStmt' in node) return transactionEffects(node.TransactionStmt);
  if ('DiscardStmt' in node) return node.DiscardStmt.target === 'DISCARD_ALL' ? [{ kind: 'discard-all' }] : NO_EFFECTS;
  if ('DoStmt' in node || 'CallStmt' in node) return UNKNOWN;
  // set_config can hide anywhere an expression can; a quoted or escaped name still holds these letters.
  if (!/set_config|u&/i.test(text)) return NO_EFFECTS;
  return setConfigEffects(node);
}

/** Unparsed text the server may still run: whatever it does to the path is unknown. */
export function unknownSessionEffects(): readonly SessionEffect[] {
  return UNKNOWN;
}

function variableSetEffects(statement: VariableSetStmt): readonly SessionEffect[] {
  const local = statement.is_local === true;
  if (statement.kind === 'VAR_RESET_ALL') return [{ kind: 'reset-path', local: false }];
  const name = (statement.name ?? '').toLowerCase();
  if (!RESOLUTION_SETTINGS.has(name) || statement.kind === 'VAR_SET_CURRENT' || statement.kind === 'VAR_SET_MULTI') return NO_EFFECTS;
  const reset = statement.kind === 'VAR_RESET' || statement.kind === 'VAR_SET_DEFAULT';
  if (name === 'search_path') {
    if (reset) return [{ kind: 'reset-path', local }];
    const args = setArguments(statement.args);
    const names = args === undefined ? undefined : searchPathFromSetArguments(args);
    return names === undefined ? UNKNOWN : [{ kind: 'set-path', names, local }];
  }
  const value = reset ? null : singleString(statement.args);
  if (value === undefined) return UNKNOWN;
  if (name === 'role') {
    return value === null ? [{ kind: 'reset-role', local }] : [{ kind: 'set-role', role: value === 'none' ? null : value, local }];
  }
  return [{ kind: 'set-session-user', user: value, local }];
}

function setArguments(args: readonly Node[] | undefined): SetArgument[] | undefined {
  const values: SetArgument[] = [];
  for (const arg of args ?? []) {
    if (!('A_Const' in arg)) return undefined;
    const constant = arg.A_Const;
    if (constant.sval !== undefined) values.push({ string: constant.sval.sval ?? '' });
    else if (constant.ival !== undefined) values.push({ number: String(constant.ival.ival ?? 0) });
    else if (constant.fval !== undefined) values.push({ number: constant.fval.fval ?? '0' });
    else return undefined;
  }
  return values;
}

function singleString(args: readonly Node[] | undefined): string | undefined {
  const values = setArguments(args);
  const only = values?.length === 1 ? values[0] : undefined;
  return only !== undefined && 'string' in only ? only.string : undefined;
}

function transactionEffects(statement: TransactionStmt): readonly SessionEffect[] {
  const chain = statement.chain === true;
  const savepoint = statement.savepoint_name ?? '';
  switch (statement.kind) {
    case 'TRANS_STMT_BEGIN':
    case 'TRANS_STMT_START': return [{ kind: 'transaction', action: 'begin' }];
    case 'TRANS_STMT_COMMIT': return [{ kind: 'transaction', action: 'commit', chain }];
    case 'TRANS_STMT_ROLLBACK': return [{ kind: 'transaction', action: 'rollback', chain }];
    case 'TRANS_STMT_SAVEPOINT': return [{ kind: 'transaction', action: 'savepoint', savepoint }];
    case 'TRANS_STMT_RELEASE': return [{ kind: 'transaction', action: 'release', savepoint }];
    case 'TRANS_STMT_ROLLBACK_TO': return [{ kind: 'transaction', action: 'rollback-to', savepoint }];
    case 'TRANS_STMT_PREPARE': return [{ kind: 'transaction', action: 'prepare' }];
    default: return NO_EFFECTS; // COMMIT/ROLLBACK PREPARED end another transaction
  }
}

/**
 * `SELECT set_config('search_path', 'a, b', false)` — a plain SELECT list of calls with constant
 * arguments and no clause that decides how often it runs — is read exactly. Any other call that
 * may set search_path or the role makes both unknown.
 */
function setConfigEffects(node: Node): readonly SessionEffect[] {
  const calls: FuncCall[] = [];
  collectSetConfigCalls(node, calls);
  if (calls.length === 0) return NO_EFFECTS;
  const plain = 'SelectStmt' in node && runsTargetsOnce(node.SelectStmt) ? new Set(plainTargets(node.SelectStmt)) : new Set<FuncCall>();
  const effects: SessionEffect[] = [];
  for (const call of calls) {
    const effect = setConfigEffect(call, node);
    if (effect === 'irrelevant') continue;
    if (effect === undefined || !plain.has(call)) return UNKNOWN;
    effects.push(effect);
  }
  return effects;
}

function isSetConfig(call: FuncCall): boolean {
  const names = stringList(call.funcname);
  const last = names[names.length - 1];
  return last === 'set_config' && (names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog'));
}

function collectSetConfigCalls(node: Node, calls: FuncCall[]): void {
  if ('FuncCall' in node && isSetConfig(node.FuncCall)) calls.push(node.FuncCall);
  forEachChild(node, (child) => collectSetConfigCalls(child, calls));
}

function runsTargetsOnce(select: SelectStmt): boolean {
  return select.fromClause === undefined && select.whereClause === undefined && select.groupClause === undefined
    && select.havingClause === undefined && select.limitCount === undefined && select.limitOffset === undefined
    && select.withClause === undefined && select.valuesLists === undefined && select.op === 'SETOP_NONE'
    && select.windowClause === undefined && select.intoClause === undefined;
}

function plainTargets(select: SelectStmt): FuncCall[] {
  const calls: FuncCall[] = [];
  for (const target of select.targetList ?? []) {
    if (!('ResTarget' in target) || target.ResTarget.val === undefined) continue;
    const value = stripCasts(target.ResTarget.val);
    if ('FuncCall' in value) calls.push(value.FuncCall);
  }
  return calls;
}

/** One call's effect; 'irrelevant' for another setting; undefined when not readable. */
function setConfigEffect(call: FuncCall, statement: Node): SessionEffect | 'irrelevant' | undefined {
  const [constantName, valueArg, localArg] = (call.args ?? []).map((arg) => constantText(arg));
  const nameArg = constantName ?? pinnedSettingName(call, statement);
  if (call.args?.length !== 3 || nameArg === undefined) return undefined;
  const name = nameArg.toLowerCase();
  if (!RESOLUTION_SETTINGS.has(name)) return 'irrelevant';
  const local = localArg === undefined ? undefined : parseBoolean(localArg);
  if (valueArg === undefined || local === undefined) return undefined;
  if (name === 'search_path') {
    const names = parseSearchPath(valueArg);
    return names === undefined ? undefined : { kind: 'set-path', names, local };
  }
  if (name === 'role') return { kind: 'set-role', role: valueArg === 'none' ? null : valueArg, local };
  return undefined;
}

/** A string or boolean constant (through casts) as text; undefined for anything else. */
function constantText(node: Node): string | undefined {
  const inner = stripCasts(node);
  if (!('A_Const' in inner) || inner.A_Const.isnull === true) return undefined;
  const constant = inner.A_Const;
  if (constant.sval !== undefined) return constant.sval.sval ?? '';
  if (constant.boolval !== undefined) return constant.boolval.boolval === true ? 'true' : 'false';
  return undefined;
}

/** PostgreSQL's boolean input: true/false, yes/no (any prefix), on/off, 1/0; case-insensitive. */
function parseBoolean(text: string): boolean | undefined {
  const value = text.trim().toLowerCase();
  if (value === '') return undefined;
  if ('true'.startsWith(value) || 'yes'.startsWith(value) || value === 'on' || value === '1') return true;
  if ('false'.startsWith(value) || 'no'.startsWith(value) || value === 'off' || value === 'of' || value === '0') return false;
  return undefined;
}
