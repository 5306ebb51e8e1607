import { classifyColumnType, type ColumnType } from './columnType.js';
import type { TableName } from './policyTypes.js';

/** One result row, as a driver returns it (node-postgres: column name → parsed value). */
export type CatalogRow = Readonly<Record<string, unknown>>;

/**
 * Runs one parameterised query on the database the policies are for. Catalog validation needs
 * nothing else, so it works with any driver (and is easy to run in-process for the CLI).
 */
export type CatalogQuery = (sql: string, params: readonly unknown[]) => Promise<readonly CatalogRow[]>;

export interface CatalogColumn {
  readonly name: string;
  readonly type: ColumnType;
}

export interface CatalogTable {
  readonly schema: string;
  readonly table: string;
  /** pg_class.relkind: r table, p partitioned, v view, m materialized view, f foreign table. */
  readonly relkind: string;
  readonly columns: ReadonlyMap<string, CatalogColumn>;
}

const COLUMNS_SQL = `
SELECT n.nspname AS schema_name, c.relname AS table_name, c.relkind::text AS relkind,
       a.attname AS column_name, a.atttypid::text AS type_oid, a.atttypmod AS typmod,
       pg_catalog.format_type(a.atttypid, a.atttypmod) AS type_display
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN unnest($1::text[], $2::text[]) AS wanted(schema_name, table_name)
    ON wanted.schema_name = n.nspname AND wanted.table_name = c.relname
  LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY n.nspname, c.relname, a.attnum`;

const TYPES_SQL = `
SELECT t.oid::text AS oid, t.typname AS type_name, t.typtype::text AS type_type,
       t.typbasetype::text AS base_oid, t.typtypmod AS typmod, t.typcategory::text AS category
  FROM pg_catalog.pg_type t
 WHERE t.oid = ANY($1::oid[])`;

const SIMILAR_TABLES_SQL = `
SELECT n.nspname AS schema_name, c.relname AS table_name
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE lower(c.relname) = lower($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
 ORDER BY n.nspname, c.relname
 LIMIT 5`;

/** Domains over domains are followed this deep at most. */
const MAX_DOMAIN_DEPTH = 10;

function text(row: CatalogRow, key: string): string {
  const value = row[key];
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
}

function integer(row: CatalogRow, key: string): number {
  const value = Number(row[key]);
  return Number.isFinite(value) ? value : -1;
}

interface TypeRow {
  name: string;
  type: string;
  baseOid: string;
  typmod: number;
  category: string;
}

/** pg_type rows for `oids` and, for domains, their base types down to a non-domain. */
async function readTypes(query: CatalogQuery, oids: Iterable<string>): Promise<Map<string, TypeRow>> {
  const types = new Map<string, TypeRow>();
  let wanted = [...new Set(oids)];
  for (let depth = 0; wanted.length > 0 && depth <= MAX_DOMAIN_DEPTH; depth++) {
    const rows = await query(TYPES_SQL, [wanted]);
    for (const row of rows) {
      types.set(text(row, 'oid'), {
        name: text(row, 'type_name'), type: text(row, 'type_type'), baseOid: text(row, 'base_oid'),
        typmod: integer(row, 'typmod'), category: text(row, 'category'),
      });
    }
    wanted = [...types.values()].filter((t) => t.type === 'd' && !types.has(t.baseOid)).map((t) => t.baseOid);
  }
  return types;
}

/** Follows a domain to its base type; the first type modifier met along the way counts. */
function resolveType(types: Map<string, TypeRow>, oid: string, typmod: number, display: string): ColumnType {
  let row = types.get(oid);
  let mod = typmod;
  for (let depth = 0; row && row.type === 'd' && depth < MAX_DOMAIN_DEPTH; depth++) {
    if (mod < 0) mod = row.typmod;
    row = types.get(row.baseOid);
  }
  if (!row) return { display, family: 'other' };
  return classifyColumnType(display, row.name, mod, row.category);
}

export function tableKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

/** The tables among `tables` that exist, keyed by tableKey, with their columns and types. */
export async function readCatalogTables(query: CatalogQuery, tables: readonly TableName[]): Promise<Map<string, CatalogTable>> {
  const out = new Map<string, CatalogTable>();
  if (tables.length === 0) return out;
  const rows = await query(COLUMNS_SQL, [tables.map((t) => t.schema), tables.map((t) => t.table)]);
  const types = await readTypes(query, rows.map((r) => text(r, 'type_oid')).filter((oid) => oid !== ''));
  for (const row of rows) {
    const schema = text(row, 'schema_name');
    const table = text(row, 'table_name');
    const key = tableKey(schema, table);
    let entry = out.get(key);
    if (!entry) {
      entry = { schema, table, relkind: text(row, 'relkind'), columns: new Map() };
      out.set(key, entry);
    }
    const column = text(row, 'column_name');
    if (column === '') continue; // a relation without columns
    const type = resolveType(types, text(row, 'type_oid'), integer(row, 'typmod'), text(row, 'type_display'));
    (entry.columns as Map<string, CatalogColumn>).set(column, { name: column, type });
  }
  return out;
}

/** Tables whose name matches `table` ignoring case, in any schema: hints for a misspelt name. */
export async function findSimilarTables(query: CatalogQuery, table: string): Promise<TableName[]> {
  const rows = await query(SIMILAR_TABLES_SQL, [table]);
  return rows.map((r) => ({ schema: text(r, 'schema_name'), table: text(r, 'table_name') }));
}
