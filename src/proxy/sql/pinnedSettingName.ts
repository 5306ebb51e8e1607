/**
 * pg_dump (since the fix for CVE-2024-7348) starts with
 * `SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings WHERE name = 'restrict_nonsystem_relation_kind'`:
 * set_config's setting is a column, but the WHERE pins that column to one constant, so the
 * setting is known. Only this exact shape is read; anything else stays unknown (fail closed).
 */
import type { FuncCall, Node } from 'libpg-query';
import { stringList, stripCasts } from './parseTree.js';

/** The name of an unqualified column reference (`name`, not `s.name`). */
function bareColumnName(node: Node | undefined): string | undefined {
  if (node === undefined || !('ColumnRef' in node)) return undefined;
  const fields = node.ColumnRef.fields ?? [];
  const only = fields[0];
  return fields.length === 1 && only !== undefined && 'String' in only ? only.String.sval : undefined;
}

function stringConstant(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  const inner = stripCasts(node);
  return 'A_Const' in inner ? inner.A_Const.sval?.sval : undefined;
}

/** The setting `call` names when `statement` is `SELECT set_config(name, …) FROM pg_settings WHERE name = '…'`. */
export function pinnedSettingName(call: FuncCall, statement: Node | undefined): string | undefined {
  if (statement === undefined || !('SelectStmt' in statement)) return undefined;
  const select = statement.SelectStmt;
  const targets = select.targetList ?? [];
  const only = targets[0];
  if (targets.length !== 1 || only === undefined || !('ResTarget' in only) || only.ResTarget.val === undefined) return undefined;
  const value = stripCasts(only.ResTarget.val);
  if (!('FuncCall' in value) || value.FuncCall !== call) return undefined;
  if (bareColumnName(call.args?.[0]) !== 'name') return undefined;
  const from = select.fromClause ?? [];
  const source = from[0];
  if (from.length !== 1 || source === undefined || !('RangeVar' in source)) return undefined;
  const { relname, schemaname } = source.RangeVar;
  if (relname !== 'pg_settings' || (schemaname !== undefined && schemaname !== 'pg_catalog')) return undefined;
  if (select.withClause !== undefined || select.op !== 'SETOP_NONE' || select.groupClause !== undefined || select.havingClause !== undefined) return undefined;
  const where = select.whereClause;
  if (where === undefined || !('A_Expr' in where)) return undefined;
  const { kind, name, lexpr, rexpr } = where.A_Expr;
  if (kind !== 'AEXPR_OP' || stringList(name).join('.') !== '=') return undefined;
  if (bareColumnName(lexpr) !== 'name') return undefined;
  return stringConstant(rexpr);
}
