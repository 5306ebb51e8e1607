/**
 * One reading of the upstream catalog: every user relation with its live columns (attnum order,
 * domain types resolved to their base type), which tables inherit from which (partitions too),
 * and for views which base column each plain view column shows and which base columns each
 * computed one reads; and which function and operator names PostgreSQL marks volatile. Immutable
 * once read.
 */
import type { CatalogQuery, CatalogRow } from '../../../policy/index.js';
import { inReadOnlyTransaction } from './catalogCursor.js';
import {
  COLUMNS_SQL, INHERITS_SQL, RELATIONS_SQL, SCHEMAS_WITHOUT_USAGE_SQL, SESSION_DEFAULTS_SQL, SYSTEM_RELATIONS_SQL, VIEW_DEPENDENCIES_SQL, VIEW_RULES_SQL,
} from './catalogSnapshotSql.js';
import { forEachInSlices } from './eventLoopSlices.js';
import { readRoutineVolatility, type RoutineVolatility } from './routineVolatility.js';
import { SlicedCatalogReading } from './slicedCatalogReading.js';
import { viewColumnOrigins, viewComputedSources, type AttributeRef } from './viewRuleOrigins.js';

export interface CatalogColumn {
  readonly attnum: number;
  readonly name: string;
  /** The base type when the column's type is a domain. */
  readonly typeOid: number;
  readonly typmod: number;
  /** A generated column: COPY without a column list leaves it out of the stream. */
  readonly generated?: boolean;
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
  /** Views: view attnum of a computed column → the columns it reads (attnum 0: the whole row). */
  readonly computed: ReadonlyMap<number, readonly AttributeRef[]>;
}

export interface CatalogSnapshot {
  readonly relations: ReadonlyMap<number, CatalogRelation>;
  /** `schema\0table` → relation. */
  readonly byName: ReadonlyMap<string, CatalogRelation>;
  /** Bare table name → relations of that name in any schema. */
  readonly byBareName: ReadonlyMap<string, readonly CatalogRelation[]>;
  readonly currentUser: string;
  /**
   * The search_path a session of `currentUser` on this database starts with when its login sets
   * none (server, database or role default); undefined when this connection's own login options
   * set it, so it says nothing about the sessions'.
   */
  readonly defaultSearchPath?: string;
  /** Schemas `currentUser` may not use (no USAGE): name lookup skips them. */
  readonly schemasWithoutUsage?: ReadonlySet<string>;
  /** Relations of pg_catalog and information_schema, by schema (names only: none has column policies). */
  readonly systemRelations?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Function and operator names, and which are volatile (absent: every name counts as unknown). */
  readonly routines?: RoutineVolatility;
  /** The number of the reading (DatabaseCatalog.readsStarted when it started), set by the catalog cache. */
  readonly readSequence?: number;
}

export function nameKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

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
  computed: Map<number, readonly AttributeRef[]>;
}

/** View rule text (nodeToString) characters tokenised per slice unit: a rule costs about what its length says. */
const RULE_CHARACTERS_PER_UNIT = 50;
/** Rules per FETCH: one is often kilobytes, so a slice's worth of rows would be megabytes for the driver to parse in one turn. */
const RULES_PER_BATCH = 50;

function columnOf(row: CatalogRow): CatalogColumn {
  const attnum = num(row, 'attnum');
  const name = str(row, 'column_name');
  const typeOid = num(row, 'type_oid');
  const typmod = num(row, 'typmod');
  return str(row, 'generated') === '' ? { attnum, name, typeOid, typmod } : { attnum, name, typeOid, typmod, generated: true };
}

/**
 * Reads the snapshot in one read-only transaction, building it as the rows arrive and yielding to
 * the event loop between slices of rows (SlicedCatalogReading): the other sessions of the process
 * run between slices. Nothing is handed out before the whole snapshot is built.
 */
export async function readCatalogSnapshot(query: CatalogQuery): Promise<CatalogSnapshot> {
  return inReadOnlyTransaction(query, () => buildSnapshot(new SlicedCatalogReading(query)));
}

interface RelationNames {
  readonly schema: string;
  readonly table: string;
  readonly relkind: string;
}

async function buildSnapshot(reading: SlicedCatalogReading): Promise<CatalogSnapshot> {
  const names = new Map<number, RelationNames>();
  await reading.forEachRow(RELATIONS_SQL, (row) => {
    names.set(num(row, 'oid'), { schema: str(row, 'schema_name'), table: str(row, 'table_name'), relkind: str(row, 'relkind') });
  });
  // A relation is in the snapshot when it has a live column (as when both came in one query), in oid order.
  const relations = new Map<number, MutableRelation>();
  let relation: MutableRelation | undefined;
  await reading.forEachRow(COLUMNS_SQL, (row) => {
    const oid = num(row, 'oid');
    if (relation?.oid !== oid) relation = relations.get(oid);
    if (relation === undefined) {
      const named = names.get(oid);
      // Both queries see one transaction snapshot, so every column's relation is listed; never nameless.
      if (named === undefined) return;
      relation = {
        oid, schema: named.schema, table: named.table, relkind: named.relkind,
        columns: [], byAttnum: new Map(), parents: [], origins: new Map(), computed: new Map(),
      };
      relations.set(oid, relation);
    }
    const column = columnOf(row);
    relation.columns.push(column);
    relation.byAttnum.set(column.attnum, column);
  });
  await reading.forEachRow(INHERITS_SQL, (row) => relations.get(num(row, 'child'))?.parents.push(num(row, 'parent')));
  const dependsOn = new Map<number, AttributeRef[]>();
  await reading.forEachRow(VIEW_DEPENDENCIES_SQL, (row) => {
    const list = dependsOn.get(num(row, 'view_oid')) ?? [];
    list.push({ oid: num(row, 'ref_oid'), attnum: num(row, 'ref_attnum') });
    dependsOn.set(num(row, 'view_oid'), list);
  });
  await reading.forEachRow(VIEW_RULES_SQL, (row) => {
    const view = relations.get(num(row, 'view_oid'));
    if (view === undefined) return;
    const action = str(row, 'action');
    for (const [attnum, origin] of viewColumnOrigins(action)) view.origins.set(attnum, origin);
    // A computed column pgveil cannot trace is taken to read everything the view reads.
    for (const [attnum, sources] of viewComputedSources(action)) {
      view.computed.set(attnum, sources === 'unknown' ? dependsOn.get(view.oid) ?? [] : sources);
    }
  }, { batchRows: RULES_PER_BATCH, units: (row) => 1 + str(row, 'action').length / RULE_CHARACTERS_PER_UNIT });
  const byName = new Map<string, CatalogRelation>();
  const byBareName = new Map<string, CatalogRelation[]>();
  await forEachInSlices(relations.values(), reading.budget, (relation) => {
    byName.set(nameKey(relation.schema, relation.table), relation);
    const same = byBareName.get(relation.table) ?? [];
    same.push(relation);
    byBareName.set(relation.table, same);
  });
  const defaults = (await reading.rows(SESSION_DEFAULTS_SQL))[0] ?? {};
  const schemasWithoutUsage = new Set((await reading.rows(SCHEMAS_WITHOUT_USAGE_SQL)).map((row) => str(row, 'schema_name')));
  const systemRelations = new Map<string, Set<string>>();
  for (const row of await reading.rows(SYSTEM_RELATIONS_SQL)) {
    const names = systemRelations.get(str(row, 'schema_name')) ?? new Set<string>();
    names.add(str(row, 'table_name'));
    systemRelations.set(str(row, 'schema_name'), names);
  }
  const routines = await readRoutineVolatility(reading);
  // 'client': set by this connection's startup options (PGOPTIONS), not a default sessions share.
  const defaultSearchPath = str(defaults, 'search_path_source') === 'client' ? undefined : str(defaults, 'search_path');
  return {
    relations, byName, byBareName, currentUser: str(defaults, 'name'), schemasWithoutUsage, systemRelations, routines,
    ...(defaultSearchPath === undefined ? {} : { defaultSearchPath }),
  };
}
