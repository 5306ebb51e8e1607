/**
 * The ProtectedSchema the analyser asks for one session at one point of its statement stream:
 * the catalog's column policies (shared by every session), with unqualified names resolved on
 * this session's search_path, role and privileges. After a statement that changes them (SET
 * search_path in the middle of a multi-statement text), `afterStatement` gives the schema for
 * the statements that follow. Every other question goes to the shared ColumnPolicies (forward
 * each optional ProtectedSchema member here, or the analyser silently goes without it).
 */
import type { ColumnRef, PlaintextSource, ProtectedSchema, ResolvedTable, SessionEffect } from '../../sql/index.js';
import type { ColumnPolicies } from './columnPolicies.js';
import { resolveOnPath } from './resolveOnPath.js';
import { pathScope, type PathScope, type SessionDefaults } from './searchPathResolution.js';
import type { PathSettingsTracker } from './searchPathSettings.js';

const pathDependence = new WeakMap<ColumnPolicies, boolean>();

/** True when some bare name of the catalog denotes several relations, one with column policies. */
export function hasPathDependentNames(policies: ColumnPolicies): boolean {
  let known = pathDependence.get(policies);
  if (known === undefined) {
    known = [...policies.snapshot.byBareName.values()]
      .some((relations) => relations.length > 1 && relations.some((relation) => policies.hasColumnPolicies(relation)));
    pathDependence.set(policies, known);
  }
  return known;
}

export class SessionRelations implements ProtectedSchema {
  private readonly resolved = new Map<string, ResolvedTable | null>();
  private scopeMemo: PathScope | undefined;
  private resolutionKeyMemo: string | undefined;

  constructor(
    readonly policies: ColumnPolicies,
    readonly tracker: PathSettingsTracker,
    private readonly defaults: SessionDefaults,
  ) {}

  get scope(): PathScope {
    this.scopeMemo ??= pathScope(this.tracker.settings, this.defaults, this.policies.snapshot.currentUser);
    return this.scopeMemo;
  }

  /** Names what unqualified names resolve to (two equal keys resolve every name alike). */
  get resolutionKey(): string {
    this.resolutionKeyMemo ??= JSON.stringify(this.scope);
    return this.resolutionKeyMemo;
  }

  resolveTable(schema: string | undefined, table: string): ResolvedTable | undefined {
    if (schema !== undefined) return this.policies.resolveTable(schema, table);
    const known = this.resolved.get(table);
    if (known !== undefined) return known ?? undefined;
    const result = resolveOnPath(this.policies, table, this.scope);
    if (result === undefined) this.policies.missed.add(`\u0000${table}`);
    this.resolved.set(table, result ?? null);
    return result;
  }

  isProtected(column: ColumnRef): boolean {
    return this.policies.isProtected(column);
  }

  protectedTableNames(): Iterable<string> {
    return this.policies.protectedTableNames();
  }

  plaintextSource(column: ColumnRef): PlaintextSource | undefined {
    return this.policies.plaintextSource(column);
  }

  plaintextTableNames(): Iterable<string> {
    return this.policies.plaintextTableNames();
  }

  isPolicyBound(schema: string | undefined, table?: string, column?: string): boolean {
    return this.policies.isPolicyBound(schema, table, column);
  }

  functionIsVolatile(name: string, schema?: string): boolean {
    return this.policies.routineIsVolatile('function', name, schema, this.scope);
  }

  operatorIsVolatile(name: string, schema?: string): boolean {
    return this.policies.routineIsVolatile('operator', name, schema, this.scope);
  }

  afterStatement(effects: readonly SessionEffect[]): SessionRelations {
    if (effects.length === 0) return this;
    return new SessionRelations(this.policies, this.tracker.clone().applyAll(effects), this.defaults);
  }
}
