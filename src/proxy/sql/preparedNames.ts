/**
 * What a statement does to the session's prepared statements, which SQL `PREPARE` / `EXECUTE` /
 * `DEALLOCATE` share with the protocol's named statements (Parse / Bind / Close). Pure: read from
 * the parse tree only; whether it happens is the server's word (the caller applies an effect once
 * the statement completed).
 */
import type { Node } from 'libpg-query';
import { forEachChild } from './parseTree.js';

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
  readonly executes: readonly { readonly name: string; readonly argumentCount: number }[];
}

const NONE: PreparedNameUse = { effects: [], executes: [] };

export function preparedNameUseOf(node: Node | undefined): PreparedNameUse {
  if (node === undefined) return NONE;
  const effects: PreparedNameEffect[] = [];
  const executes: { name: string; argumentCount: number }[] = [];
  if ('PrepareStmt' in node && node.PrepareStmt.name !== undefined) effects.push({ kind: 'prepare', name: node.PrepareStmt.name });
  if ('DeallocateStmt' in node) {
    const name = node.DeallocateStmt.name;
    effects.push(name === undefined || node.DeallocateStmt.isall === true ? { kind: 'deallocate-all' } : { kind: 'deallocate', name });
  }
  if ('DiscardStmt' in node && node.DiscardStmt.target === 'DISCARD_ALL') effects.push({ kind: 'deallocate-all' });
  const visit = (child: Node): void => {
    if ('ExecuteStmt' in child && child.ExecuteStmt.name !== undefined) {
      executes.push({ name: child.ExecuteStmt.name, argumentCount: child.ExecuteStmt.params?.length ?? 0 });
    }
    forEachChild(child, visit);
  };
  visit(node);
  return effects.length === 0 && executes.length === 0 ? NONE : { effects, executes };
}
