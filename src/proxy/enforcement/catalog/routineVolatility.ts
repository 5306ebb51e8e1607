/**
 * Which functions and operators PostgreSQL marks volatile, by schema and name (pg_proc.provolatile;
 * an operator by its function, pg_operator.oprcode). A volatile function may do anything with its
 * arguments — store them in a setting, a sequence, a large object, a lock — so a value it receives
 * may reach the client later, out of the read path's sight. Overloads are not told apart: pgveil
 * does not resolve argument types, so a name is volatile when any overload of it is. Read once per
 * catalog reading; names only, a Set per schema.
 */
import type { CatalogRow } from '../../../policy/index.js';
import type { SlicedCatalogReading } from './slicedCatalogReading.js';

/** The names of one kind of routine in one schema. */
export interface RoutineNames {
  /** Every name with at least one routine. */
  readonly known: ReadonlySet<string>;
  /** Names with a volatile one. */
  readonly volatile: ReadonlySet<string>;
}

export interface RoutineVolatility {
  /** By schema name: functions, aggregates, window functions and procedures. */
  readonly functions: ReadonlyMap<string, RoutineNames>;
  /** By schema name: operators. */
  readonly operators: ReadonlyMap<string, RoutineNames>;
}

/**
 * PostgreSQL marks every aggregate immutable, whatever its support functions do (CREATE AGGREGATE
 * takes no volatility): an aggregate counts as volatile when one of them is.
 */
const FUNCTIONS_SQL = `
SELECT n.nspname AS schema_name, p.proname AS name,
       bool_or(p.provolatile = 'v' OR EXISTS (
         SELECT 1 FROM pg_catalog.pg_aggregate a
           JOIN pg_catalog.pg_proc s ON s.oid IN (a.aggtransfn::oid, a.aggfinalfn::oid, a.aggcombinefn::oid, a.aggserialfn::oid,
                                                  a.aggdeserialfn::oid, a.aggmtransfn::oid, a.aggminvtransfn::oid, a.aggmfinalfn::oid)
          WHERE a.aggfnoid = p.oid AND s.provolatile = 'v')) AS volatile
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
 GROUP BY n.nspname, p.proname`;

/** A shell operator (no function yet) counts as volatile: it cannot run, but pgveil need not know why. */
const OPERATORS_SQL = `
SELECT n.nspname AS schema_name, o.oprname AS name, bool_or(COALESCE(p.provolatile, 'v') = 'v') AS volatile
  FROM pg_catalog.pg_operator o
  JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
  LEFT JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
 GROUP BY n.nspname, o.oprname`;

interface MutableNames {
  readonly known: Set<string>;
  readonly volatile: Set<string>;
}

/** Adds one row (schema, name, volatile) to the names by schema. */
function addRoutine(schemas: Map<string, MutableNames>, row: CatalogRow): void {
  const schema = String(row['schema_name'] ?? '');
  const name = String(row['name'] ?? '');
  let names = schemas.get(schema);
  if (names === undefined) {
    names = { known: new Set(), volatile: new Set() };
    schemas.set(schema, names);
  }
  names.known.add(name);
  const flag = row['volatile'];
  if (flag === true || flag === 't') names.volatile.add(name);
}

/** Read in slices, as the rest of the snapshot: a database can hold tens of thousands of functions. */
export async function readRoutineVolatility(reading: SlicedCatalogReading): Promise<RoutineVolatility> {
  const functions = new Map<string, MutableNames>();
  await reading.forEachRow(FUNCTIONS_SQL, (row) => addRoutine(functions, row));
  const operators = new Map<string, MutableNames>();
  await reading.forEachRow(OPERATORS_SQL, (row) => addRoutine(operators, row));
  return { functions, operators };
}

/** What a name denotes in the schemas searched. */
export type RoutineAnswer = 'volatile' | 'unknown' | 'not volatile';

/**
 * Volatile when a schema searched has a volatile routine of that name; unknown when none has one
 * (created since the reading, or a name PostgreSQL will reject). `schemas` undefined: every schema.
 */
export function routineVolatility(names: ReadonlyMap<string, RoutineNames>, name: string, schemas: Iterable<string> | undefined): RoutineAnswer {
  let known = false;
  const check = (entry: RoutineNames | undefined): boolean => {
    if (entry === undefined || !entry.known.has(name)) return false;
    known = true;
    return entry.volatile.has(name);
  };
  if (schemas === undefined) {
    for (const entry of names.values()) if (check(entry)) return 'volatile';
  } else {
    for (const schema of schemas) if (check(names.get(schema))) return 'volatile';
  }
  return known ? 'not volatile' : 'unknown';
}
