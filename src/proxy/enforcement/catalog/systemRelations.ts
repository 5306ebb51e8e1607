/**
 * Names of PostgreSQL's own relations (pg_catalog, information_schema). The snapshot leaves them
 * out, so a statement naming one — psql's \d, pg_dump, DBeaver, every driver's metadata queries —
 * would look like a relation created since the last reading and wait for a catalog refresh. A name
 * that certainly denotes a system relation needs none: none has column policies, and no session
 * can add one to those schemas.
 */
import type { CatalogSnapshot } from './catalogSnapshot.js';
import type { PathScope } from './searchPathResolution.js';

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

/**
 * True when a missed name (`schema\0table`, or `\0table` unqualified) denotes a system relation:
 * qualified with its system schema, or unqualified where the session's search_path is known and
 * searches pg_catalog before every schema but the session's temporary one (implicitly, or listed
 * first). The temporary schema comes first for relations, but only this session's own DDL can put
 * a table there, and the write path already holds back statements after DDL it has not seen answered.
 */
export function namesSystemRelation(key: string, snapshot: CatalogSnapshot, scope: PathScope): boolean {
  const cut = key.indexOf('\u0000');
  const schema = key.slice(0, cut);
  const table = key.slice(cut + 1);
  if (schema !== '') return SYSTEM_SCHEMAS.has(schema) && snapshot.systemRelations?.get(schema)?.has(table) === true;
  if (snapshot.systemRelations?.get('pg_catalog')?.has(table) !== true || scope.entries === undefined) return false;
  const listed = scope.entries.findIndex((entry) => entry.kind === 'schema' && entry.name === 'pg_catalog');
  if (listed < 0) return true;
  // Listed: only the temporary schema may come before it (it holds this session's own tables).
  return scope.entries.slice(0, listed).every((entry) => entry.kind === 'temp');
}
