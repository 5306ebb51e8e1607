/**
 * Which relation an unqualified name denotes, the way PostgreSQL looks it up
 * (recomputeNamespacePath, RelnameGetRelid): the session's temporary schema first unless pg_temp
 * is listed, pg_catalog implicitly before the listed schemas unless listed, `$user` as the current
 * user's schema, schemas the user may not use (no USAGE) skipped, and the first schema holding a
 * relation of that name wins.
 *
 * Where pgveil cannot be sure — the path is unknown, `$user` or the privileges are someone
 * else's, the temporary schema may or may not be this session's — every relation the name might
 * denote is a candidate. The caller then errs on the protected side (see `chooseRelation`).
 *
 * pg_catalog and information_schema relations are not in the snapshot: a name they would take is
 * resolved to a user relation instead, which can only add protection, never remove it.
 */
import { parseSearchPath } from '../../sql/searchPathValue.js';
import { nameKey, type CatalogRelation, type CatalogSnapshot } from './catalogSnapshot.js';
import type { PathSettings, UserValue } from './searchPathSettings.js';

export type PathEntry =
  | { readonly kind: 'schema'; readonly name: string }
  /** The session's temporary schema (pg_temp_N, N unknown to pgveil). */
  | { readonly kind: 'temp' }
  /** `$user` when the current user is unknown: any schema. */
  | { readonly kind: 'any-user' };

export interface PathScope {
  /** The schemas searched, in order; undefined when the session's path is unknown. */
  readonly entries: readonly PathEntry[] | undefined;
  /** True when the snapshot's USAGE privileges are the current user's (the catalog reader's role). */
  readonly privilegesKnown: boolean;
}

/** What the snapshot tells about the session's starting point (see catalogSnapshot.ts). */
export interface SessionDefaults {
  /** The upstream role sessions log in as (undefined: not known, so `$user` is not either). */
  readonly loginUser: string | undefined;
  /** The session's default search_path, when pgveil can vouch for it (undefined: unknown). */
  readonly defaultPath: string | undefined;
}

export const UNKNOWN_SCOPE: PathScope = { entries: undefined, privilegesKnown: false };

function userName(user: UserValue, loginUser: string | undefined): string | undefined {
  if (user.kind === 'login') return loginUser;
  return user.kind === 'named' ? user.name : undefined;
}

/** The schemas a session with these settings searches. */
export function pathScope(settings: PathSettings, defaults: SessionDefaults, readerUser: string): PathScope {
  const names = settings.path.kind === 'names'
    ? settings.path.names
    : settings.path.kind === 'default' && defaults.defaultPath !== undefined ? parseSearchPath(defaults.defaultPath) : undefined;
  const user = userName(settings.role ?? settings.sessionUser, defaults.loginUser);
  const privilegesKnown = user !== undefined && user === readerUser;
  if (names === undefined) return { entries: undefined, privilegesKnown };
  const entries: PathEntry[] = [];
  const listed = new Set<string>();
  let tempListed = false;
  for (const name of names) {
    if (name === 'pg_temp') {
      if (!tempListed) entries.push({ kind: 'temp' });
      tempListed = true;
    } else if (name === '$user') {
      if (user === undefined) entries.push({ kind: 'any-user' });
      else if (!listed.has(user)) entries.push({ kind: 'schema', name: user });
      if (user !== undefined) listed.add(user);
    } else if (!listed.has(name)) {
      listed.add(name);
      entries.push({ kind: 'schema', name });
    }
  }
  if (!tempListed) entries.unshift({ kind: 'temp' });
  return { entries, privilegesKnown };
}

export interface PathCandidates {
  /** Relations the name may denote, in search order (`certain` last when there is one). */
  readonly possible: readonly CatalogRelation[];
  /** The relation it denotes for sure, unless one of the others before it is the session's. */
  readonly certain: CatalogRelation | undefined;
}

/** The relations an unqualified `table` may denote in a session searching `scope`. */
export function candidatesOnPath(table: string, scope: PathScope, snapshot: CatalogSnapshot): PathCandidates {
  const everywhere = snapshot.byBareName.get(table) ?? [];
  if (scope.entries === undefined) return { possible: everywhere, certain: undefined };
  const possible: CatalogRelation[] = [];
  const add = (relation: CatalogRelation): void => {
    if (!possible.includes(relation)) possible.push(relation);
  };
  for (const entry of scope.entries) {
    if (entry.kind === 'temp') {
      for (const relation of everywhere) if (relation.schema.startsWith('pg_temp_')) add(relation);
    } else if (entry.kind === 'any-user') {
      for (const relation of everywhere) add(relation);
    } else {
      const relation = snapshot.byName.get(nameKey(entry.name, table));
      if (relation === undefined) continue;
      const usable = !(snapshot.schemasWithoutUsage?.has(entry.name) ?? false);
      if (scope.privilegesKnown && !usable) continue; // the server skips it too
      add(relation);
      if (scope.privilegesKnown) return { possible, certain: relation };
    }
  }
  return { possible, certain: undefined };
}

export type RelationChoice =
  | { readonly kind: 'relation'; readonly relation: CatalogRelation }
  | { readonly kind: 'none' }
  /** Several candidates carry column policies: pgveil cannot tell which one the server will use. */
  | { readonly kind: 'ambiguous'; readonly relations: readonly CatalogRelation[] };

/**
 * Errs on the protected side: among the candidates, the one with column policies is taken even
 * when another comes first (its values then get protected; at worst a token lands in a plain
 * table, never a plaintext in a protected one). Two or more with policies cannot be told apart.
 */
export function chooseRelation(candidates: PathCandidates, hasPolicies: (relation: CatalogRelation) => boolean): RelationChoice {
  const withPolicies = candidates.possible.filter(hasPolicies);
  if (withPolicies.length > 1) return { kind: 'ambiguous', relations: withPolicies };
  const relation = withPolicies[0] ?? candidates.certain ?? candidates.possible[0];
  return relation === undefined ? { kind: 'none' } : { kind: 'relation', relation };
}
