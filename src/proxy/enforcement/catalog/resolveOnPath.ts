import type { ResolvedTable } from '../../sql/index.js';
import type { CatalogRelation, CatalogSnapshot } from './catalogSnapshot.js';
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
  const choice = chooseRelation(candidatesOnPath(table, scope, snapshot), hasPolicies);
  if (choice.kind === 'none') return undefined;
  if (choice.kind === 'ambiguous') {
    const names = choice.relations.map((relation) => `${relation.schema}.${relation.table}`).join(', ');
    return {
      ...policies.describeRelation(choice.relations[0] as CatalogRelation),
      refusal: `pgveil refused the statement: "${table}" may denote ${names}, which have column policies, and pgveil cannot tell which one this session's search_path selects (it was set in a way pgveil cannot follow); qualify the name with its schema, or SET search_path to constants`,
    };
  }
  const relation = choice.relation;
  const resolved = policies.describeRelation(relation);
  // Another search_path could make the name denote a different relation with policies.
  const pathDependent = (snapshot.byBareName.get(table) ?? []).some((other) => other !== relation && hasPolicies(other));
  return pathDependent ? { ...resolved, pathDependent } : resolved;
}
