import type { ResolvedTable } from '../../sql/index.js';
import type { CatalogRelation, CatalogSnapshot } from './catalogSnapshot.js';
import type { PathEntry } from './searchPathResolution.js';
import { candidatesOnPath, chooseRelation, type PathScope } from './searchPathResolution.js';

/** What resolveOnPath needs of the catalog's column policies (ColumnPolicies). */
export interface PathRelations {
  readonly snapshot: CatalogSnapshot;
  hasColumnPolicies(relation: CatalogRelation): boolean;
  describeRelation(relation: CatalogRelation): ResolvedTable;
}

/**
 * What an unqualified `table` denotes for a session searching `scope`, erring on the protected
 * side where the scope leaves a choice (chooseRelation); `refusal` when it cannot be told.
 */
export function resolveOnPath(policies: PathRelations, table: string, scope: PathScope): ResolvedTable | undefined {
  const snapshot = policies.snapshot;
  const hasPolicies = (relation: CatalogRelation): boolean => policies.hasColumnPolicies(relation);
  const candidates = candidatesOnPath(table, scope, snapshot);
  const choice = chooseRelation(candidates, hasPolicies);
  if (choice.kind === 'none') return undefined;
  if (choice.kind === 'ambiguous') {
    const names = choice.relations.map((relation) => `${relation.schema}.${relation.table}`).join(', ');
    return {
      ...policies.describeRelation(choice.relations[0] as CatalogRelation),
      refusal: `pgveil refused the statement: "${table}" may denote ${names}, which have column policies, and pgveil cannot tell which one this session's search_path selects (it was set in a way pgveil cannot follow); qualify the name with its schema, or SET search_path to constants`,
    };
  }
  const relation = hasPolicies(choice.relation) ? choice.relation : shadowedRelation(table, scope, snapshot, hasPolicies) ?? choice.relation;
  if (Array.isArray(relation)) {
    const names = relation.map((shadowed) => `${shadowed.schema}.${shadowed.table}`).join(', ');
    return {
      ...policies.describeRelation(relation[0] as CatalogRelation),
      refusal: `pgveil refused the statement: "${table}" denotes ${choice.relation.schema}.${choice.relation.table} on this session's search_path, but also names ${names}, which have column policies and which the server would take if that relation went away while the statement waits; qualify the name with its schema`,
    };
  }
  const described = policies.describeRelation(relation);
  // The server may look the name up as another relation: its columns are not this relation's data.
  const standIn = relation !== choice.relation || candidates.possible.some((other) => other !== relation);
  const resolved: ResolvedTable = standIn ? { ...described, standIn } : described;
  // Another search_path could make the name denote a different relation with policies.
  const pathDependent = (snapshot.byBareName.get(table) ?? []).some((other) => other !== relation && hasPolicies(other));
  return pathDependent ? { ...resolved, pathDependent } : resolved;
}

/**
 * The relations with column policies an unqualified `table` would denote if the relations before
 * them on the path went away: the one, or all of them when several (undefined: none). Another
 * session can drop, rename or move the relation the name denotes now, or revoke USAGE on its schema,
 * between pgveil's analysis and the server's lookup (a statement waiting for a lock held by that
 * DDL looks the name up again once it commits; a pipelined one is parsed only when its turn comes),
 * and pgveil cannot see that session's uncommitted DDL. So a name that shadows a relation with
 * column policies on the path is taken as that relation (its values protected, its masked columns
 * guarded), as for a temporary table; the shadowing relation stays reachable by its qualified name.
 */
function shadowedRelation(
  table: string, scope: PathScope, snapshot: CatalogSnapshot, hasPolicies: (relation: CatalogRelation) => boolean,
): CatalogRelation | CatalogRelation[] | undefined {
  const entries: readonly PathEntry[] = scope.entries ?? [{ kind: 'any-user' }];
  const anySchema = entries.some((entry) => entry.kind === 'any-user');
  const listed = new Set(entries.flatMap((entry) => (entry.kind === 'schema' ? [entry.name] : [])));
  const found = (snapshot.byBareName.get(table) ?? [])
    .filter((relation) => hasPolicies(relation) && (anySchema || listed.has(relation.schema)));
  if (found.length <= 1) return found[0];
  return found;
}
