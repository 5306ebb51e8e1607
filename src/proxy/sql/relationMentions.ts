/**
 * Which relations one statement names — every table, view or CTE reference it reads, writes or
 * alters — straight from the parse tree, without resolving anything. Relations the statement
 * defines (CREATE TABLE's own name, CREATE TABLE AS / SELECT INTO targets, CREATE VIEW's name) are
 * not mentions: they do not exist yet when it runs.
 */
import type { Node } from 'libpg-query';

/** A relation as written: `schema` undefined when unqualified. */
export interface RelationName {
  readonly schema: string | undefined;
  readonly table: string;
}

export interface RelationMentions {
  readonly relations: readonly RelationName[];
  /** Names of the statement's CTEs: an unqualified mention of one may be the CTE, not a relation. */
  readonly cteNames: ReadonlySet<string>;
}

/** Fields holding the relation a statement defines, per node type (not mentions). */
const DEFINED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  CreateStmt: ['relation'],
  CreateTableAsStmt: ['into'],
  SelectStmt: ['intoClause'],
  ViewStmt: ['view'],
};

export function relationNameOf(record: { readonly schemaname?: string; readonly relname?: string }): RelationName {
  return { schema: record.schemaname, table: record.relname ?? '' };
}

export function mentionedRelations(statement: Node | undefined): RelationMentions {
  const relations: RelationName[] = [];
  const cteNames = new Set<string>();
  const visit = (value: unknown, type: string | undefined): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, undefined);
      return;
    }
    const record = value as Record<string, unknown>;
    // RangeVar, wrapped ({ RangeVar: … }) in FROM lists and bare in INSERT, ALTER TABLE, COPY…
    if (typeof record['relname'] === 'string') {
      relations.push(relationNameOf(record as { schemaname?: string; relname?: string }));
      return;
    }
    if (type === 'CommonTableExpr' && typeof record['ctename'] === 'string') cteNames.add(record['ctename']);
    const skipped = type === undefined ? undefined : DEFINED_FIELDS[type];
    for (const key in record) {
      if (skipped?.includes(key)) continue;
      const child = record[key];
      if (isNodeWrapper(key)) {
        visit(child, key);
      } else if (type === 'CreateForeignTableStmt' && key === 'base') {
        visit(child, 'CreateStmt'); // CREATE FOREIGN TABLE: a CreateStmt inside
      } else {
        visit(child, undefined);
      }
    }
  };
  visit(statement, undefined);
  return { relations, cteNames };
}

/** Node wrappers are the only keys that start with a capital letter (`SelectStmt`, `RangeVar`…). */
function isNodeWrapper(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 65 && first <= 90;
}
