/**
 * What a statement does to the session's prepared statements, which SQL `PREPARE` / `EXECUTE` /
 * `DEALLOCATE` share with the protocol's named statements (Parse / Bind / Close). Pure: read from
 * the parse tree only; whether it happens is the server's word (the caller applies an effect once
 * the statement completed).
 */
import type { Node } from 'libpg-query';
import { constantValue } from './constantValues.js';
import { forEachChild, nodeLocation, stripCasts } from './parseTree.js';
import type { SqlText } from './sqlText.js';

/**
 * An argument of `EXECUTE name(args)` as pgveil can protect it: a constant (plain casts looked
 * through) at byte range [start, end) with its value as PostgreSQL reads it, NULL, or anything else.
 */
export type ExecuteArgument =
  | { readonly kind: 'constant'; readonly start: number; readonly end: number; readonly value: string }
  | { readonly kind: 'null' }
  | { readonly kind: 'other'; readonly location: number | undefined };

export interface ExecuteUse {
  readonly name: string;
  readonly argumentCount: number;
  readonly arguments: readonly ExecuteArgument[];
}

export type PreparedNameEffect =
  /** `PREPARE name AS …`: defines `name` (it fails when the name is taken). */
  | { readonly kind: 'prepare'; readonly name: string }
  /** `DEALLOCATE [PREPARE] name`. */
  | { readonly kind: 'deallocate'; readonly name: string }
  /** `DEALLOCATE ALL`, `DISCARD ALL`: every prepared statement goes. */
  | { readonly kind: 'deallocate-all' };

export interface PreparedNameUse {
  /** Definitions and removals, in the order the statement makes them. */
  readonly effects: readonly PreparedNameEffect[];
  /** Names the statement runs with `EXECUTE name(args)`, wherever it nests (EXPLAIN, CREATE TABLE AS). */
  readonly executes: readonly ExecuteUse[];
}

function executeArgument(node: Node, text: SqlText | undefined): ExecuteArgument {
  const inner = stripCasts(node);
  if (!('A_Const' in inner)) return { kind: 'other', location: nodeLocation(inner) };
  const decoded = constantValue(inner.A_Const);
  if (decoded.kind === 'null') return { kind: 'null' };
  const start = inner.A_Const.location ?? 0;
  let end: number | undefined;
  try {
    end = text?.constantEnd(start);
  } catch {
    end = undefined;
  }
  if (decoded.kind !== 'value' || end === undefined) return { kind: 'other', location: start };
  return { kind: 'constant', start, end, value: decoded.value };
}

const NONE: PreparedNameUse = { effects: [], executes: [] };

/** `text`: the statement's text, to locate EXECUTE's constant arguments (without it, none is). */
export function preparedNameUseOf(node: Node | undefined, text?: SqlText): PreparedNameUse {
  if (node === undefined) return NONE;
  const effects: PreparedNameEffect[] = [];
  const executes: ExecuteUse[] = [];
  if ('PrepareStmt' in node && node.PrepareStmt.name !== undefined) effects.push({ kind: 'prepare', name: node.PrepareStmt.name });
  if ('DeallocateStmt' in node) {
    const name = node.DeallocateStmt.name;
    effects.push(name === undefined || node.DeallocateStmt.isall === true ? { kind: 'deallocate-all' } : { kind: 'deallocate', name });
  }
  if ('DiscardStmt' in node && node.DiscardStmt.target === 'DISCARD_ALL') effects.push({ kind: 'deallocate-all' });
  const visit = (child: Node): void => {
    if ('ExecuteStmt' in child && child.ExecuteStmt.name !== undefined) {
      const params = child.ExecuteStmt.params ?? [];
      executes.push({ name: child.ExecuteStmt.name, argumentCount: params.length, arguments: params.map((param) => executeArgument(param, text)) });
    }
    forEachChild(child, visit);
  };
  visit(node);
  return effects.length === 0 && executes.length === 0 ? NONE : { effects, executes };
}
