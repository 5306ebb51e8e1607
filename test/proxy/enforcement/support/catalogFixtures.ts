/** Catalog snapshots built in memory, for tests that need pgveil's view of a database without one. */
import {
  nameKey, type CatalogColumn, type CatalogRelation, type CatalogSnapshot,
} from '../../../../src/proxy/enforcement/catalog/catalogSnapshot.js';

const INT4 = 23;
const TEXT = 25;

/** A plain table; by default its columns are `id int4, ssn text`. */
export function relationOf(oid: number, schema: string, table: string, columns: readonly CatalogColumn[] = [
  { attnum: 1, name: 'id', typeOid: INT4, typmod: -1 },
  { attnum: 2, name: 'ssn', typeOid: TEXT, typmod: -1 },
]): CatalogRelation {
  return {
    oid, schema, table, relkind: 'r', columns, byAttnum: new Map(columns.map((column) => [column.attnum, column])),
    parents: [], origins: new Map(), computed: new Map(),
  };
}

/** The snapshot of these relations, as the session's login `app` sees them. */
export function snapshotOf(relations: readonly CatalogRelation[], extra: Partial<CatalogSnapshot> = {}): CatalogSnapshot {
  const byBareName = new Map<string, CatalogRelation[]>();
  for (const item of relations) byBareName.set(item.table, [...(byBareName.get(item.table) ?? []), item]);
  return {
    relations: new Map(relations.map((item) => [item.oid, item])),
    byName: new Map(relations.map((item) => [nameKey(item.schema, item.table), item])),
    byBareName, currentUser: 'app', ...extra,
  };
}
