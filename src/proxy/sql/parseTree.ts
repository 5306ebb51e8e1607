/**
 * Small helpers over libpg-query's JSON parse tree. Node types come from `@pgsql/types` (re-exported
 * by libpg-query); fields equal to 0/false/empty are omitted from the JSON, so every field is
 * optional and `location` defaults to 0.
 */
import type { Node } from 'libpg-query';

/** The wrapper key of a node (`SelectStmt`, `ColumnRef`…); undefined for the empty `{}` node. */
export function nodeType(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  for (const key in node) return key;
  return undefined;
}

/** The payload inside a node wrapper, as a plain record for generic walks. */
function payloadOf(node: Node): Record<string, unknown> | undefined {
  const key = nodeType(node);
  if (key === undefined) return undefined;
  const value = (node as Record<string, unknown>)[key];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/**
 * Byte offset of a node in the text, for error positions. A location of 0 is omitted from the
 * JSON, so a missing one is reported as unknown (exact offsets of constants use `A_Const` itself).
 */
export function nodeLocation(node: Node | undefined): number | undefined {
  if (node === undefined) return undefined;
  const location = payloadOf(node)?.['location'];
  return typeof location === 'number' && location >= 0 ? location : undefined;
}

/** The `sval`s of a list of String nodes (qualified names, operator names, column lists). */
export function stringList(nodes: readonly Node[] | undefined): string[] {
  const names: string[] = [];
  for (const node of nodes ?? []) {
    if ('String' in node) names.push(node.String.sval ?? '');
  }
  return names;
}

/** The last name of a qualified name (`pg_catalog.lower` → `lower`, operator `=`). */
export function lastName(nodes: readonly Node[] | undefined): string {
  const names = stringList(nodes);
  return names[names.length - 1] ?? '';
}

/** Removes `::type` / `CAST(… AS type)` wrappers: a plain cast keeps the value it casts. */
export function stripCasts(node: Node): Node {
  let current = node;
  while ('TypeCast' in current && current.TypeCast.arg !== undefined) current = current.TypeCast.arg;
  return current;
}

function isNodeWrapper(value: object): value is Node {
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const key = keys[0] as string;
  const first = key.charCodeAt(0);
  return first >= 65 && first <= 90 && typeof (value as Record<string, unknown>)[key] === 'object';
}

/**
 * Calls `visit` for every node directly below `node`, looking through plain structs (TypeName,
 * WindowDef, Alias…) that are not node wrappers. Used for node types without a dedicated rule.
 */
export function forEachChild(node: Node, visit: (child: Node) => void): void {
  const payload = payloadOf(node);
  if (payload !== undefined) visitFields(payload, visit);
}

function visitFields(record: Record<string, unknown>, visit: (child: Node) => void): void {
  for (const key in record) {
    const value = record[key];
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) visitValue(item, visit);
    } else {
      visitValue(value, visit);
    }
  }
}

function visitValue(value: unknown, visit: (child: Node) => void): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) visitValue(item, visit);
  } else if (isNodeWrapper(value)) {
    visit(value);
  } else {
    visitFields(value as Record<string, unknown>, visit);
  }
}
