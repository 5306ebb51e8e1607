/**
 * Whether a function or operator name, as a statement writes it, may call a volatile routine in a
 * session searching `scope`. An unqualified name is looked up in pg_catalog and the schemas of the
 * search_path (never the temporary schema: PostgreSQL does not search it for functions and
 * operators); with the path unknown, or `$user` someone pgveil cannot name, in every schema.
 * `pg_temp.f` may be any session's temporary schema.
 */
import type { CatalogSnapshot } from './catalogSnapshot.js';
import { routineVolatility, type RoutineAnswer, type RoutineNames } from './routineVolatility.js';
import type { PathScope } from './searchPathResolution.js';

export type RoutineKind = 'function' | 'operator';

function searched(names: ReadonlyMap<string, RoutineNames>, schema: string | undefined, scope: PathScope): Iterable<string> | undefined {
  if (schema === 'pg_temp') return [...names.keys()].filter((name) => name.startsWith('pg_temp_'));
  if (schema !== undefined) return [schema];
  if (scope.entries === undefined) return undefined;
  const schemas = ['pg_catalog'];
  for (const entry of scope.entries) {
    if (entry.kind === 'any-user') return undefined;
    if (entry.kind === 'schema') schemas.push(entry.name);
  }
  return schemas;
}

/** 'unknown' as well when the snapshot holds no routines (a reading without them cannot vouch for any). */
export function routineOnPath(snapshot: CatalogSnapshot, kind: RoutineKind, name: string, schema: string | undefined, scope: PathScope): RoutineAnswer {
  const routines = snapshot.routines;
  if (routines === undefined) return 'unknown';
  const names = kind === 'function' ? routines.functions : routines.operators;
  return routineVolatility(names, name, searched(names, schema, scope));
}
