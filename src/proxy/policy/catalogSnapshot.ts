/**
 * One reading of the upstream catalog: every user relation with its live columns (attnum order,
 * domain types resolved to their base type), which tables inherit from which (partitions too),
 * and for views which base column each plain view column shows. Immutable once read.
 */
import type { CatalogQuery, CatalogRow } from '../../policy/index.js';
import { viewColumnOrigins } from './viewRuleOrigins.js';

export interface CatalogColumn {
  readonly attnum: number;
  readonly name: string;
  /** The base type when the column's type is a domain. */
  readonly typeOid: number;
  readonly typmod: number;
}

export interface CatalogRelation {
  readonly oid: number;
  readonly schema: string;
  readonly table: string;
  /** r table, p partitioned, v view, m materialized view, f foreign table. */
  readonly relkind: string;
  readonly columns: readonly CatalogColumn[];
  readonly byAttnum: ReadonlyMap<number, CatalogColumn>;
  /** Direct parents (inheritance and partitioning). */
  readonly parents: readonly number[];
  /** Views: view attnum → the base relation column it shows unchanged. */
  readonly origins: ReadonlyMap<number, { readonly oid: number; readonly attnum: number }>;
}

export interface CatalogSnapshot {
  readonly relations: ReadonlyMap<number, CatalogRelation>;
  /** `schema\0table` → relation. */
  readonly byName: ReadonlyMap<string, CatalogRelation>;
  /** Bare table name → relations of that name in any schema. */
  readonly byBareName: ReadonlyMap<string, readonly CatalogRelation[]>;
  readonly currentUser: string;
}

export function nameKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

const RELATIONS_SQL = `
SELECT c.oid::int8 AS oid, n.nspname AS schema_name, c.relname AS table_name, c.relkind::text AS relkind,
       a.attnum AS attnum, a.attname AS column_name,
       COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)::int8 AS type_oid,
       CASE WHEN t.typbasetype <> 0 AND a.atttypmod < 0 THEN t.typtypmod ELSE a.atttypmod END AS typmod
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\\_toast%'
 ORDER BY c.oid, a.attnum`;

const INHERITS_SQL = 'SELECT inhrelid::int8 AS child, inhparent::int8 AS parent FROM pg_catalog.pg_inherits ORDER BY inhseqno';

const VIEW_RULES_SQL = `
SELECT r.ev_class::int8 AS view_oid, r.ev_action::text AS action
  FROM pg_catalog.pg_rewrite r
  JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE r.rulename = '_RETURN' AND c.relkind IN ('v', 'm')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')`;

function num(row: CatalogRow, key: string): number {
  return Number(row[key]);
}

function str(row: CatalogRow, key: string): string {
  const value = row[key];
  return typeof value === 'string' ? value : String(value ?? '');
}

interface MutableRelation {
  oid: number;
  schema: string;
  table: string;
  relkind: string;
  columns: CatalogColumn[];
  byAttnum: Map<number, CatalogColumn>;
  parents: number[];
  origins: Map<number, { oid: number; attnum: number }>;
}

export async function readCatalogSnapshot(query: CatalogQuery): Promise<CatalogSnapshot> {
  const [rows, inherits, rules, users] = [
    await query(RELATIONS_SQL, []),
    await query(INHERITS_SQL, []),
    await query(VIEW_RULES_SQL, []),
    await query('SELECT current_user::text AS name', []),
  ];
  const relations = new Map<number, MutableRelation>();
  for (const row of rows) {
    const oid = num(row, 'oid');
    let relation = relations.get(oid);
    if (relation === undefined) {
      relation = {
        oid, schema: str(row, 'schema_name'), table: str(row, 'table_name'), relkind: str(row, 'relkind'),
        columns: [], byAttnum: new Map(), parents: [], origins: new Map(),
      };
      relations.set(oid, relation);
    }
    const column: CatalogColumn = {
      attnum: num(row, 'attnum'), name: str(row, 'column_name'), typeOid: num(row, 'type_oid'), typmod: num(row, 'typmod'),
    };
    relation.columns.push(column);
    relation.byAttnum.set(column.attnum, column);
  }
  for (const row of inherits) relations.get(num(row, 'child'))?.parents.push(num(row, 'parent'));
  for (const row of rules) {
    const view = relations.get(num(row, 'view_oid'));
    if (view === undefined) continue;
    for (const [attnum, origin] of viewColumnOrigins(str(row, 'action'))) view.origins.set(attnum, origin);
  }
  const byName = new Map<string, CatalogRelation>();
  const byBareName = new Map<string, CatalogRelation[]>();
  for (const relation of relations.values()) {
    byName.set(nameKey(relation.schema, relation.table), relation);
    const same = byBareName.get(relation.table) ?? [];
    same.push(relation);
    byBareName.set(relation.table, same);
  }
  return { relations, byName, byBareName, currentUser: str(users[0] ?? {}, 'name') };
}
