/**
 * Which names the policy file binds, for checks on DDL: policies name `schema.table.column`, and a
 * partition or inheritance child follows its parent's policy for a column of the same name, so a
 * column is bound when the file names it on the table, an ancestor or a descendant — whether or
 * not the catalog (which cannot see uncommitted DDL) shows that column yet.
 */
import type { PolicySet } from '../../policy/index.js';
import { nameKey, type CatalogRelation, type CatalogSnapshot } from './catalog/catalogSnapshot.js';

const MAX_DEPTH = 16;

export class PolicyBindings {
  private children: Map<number, CatalogRelation[]> | undefined;

  constructor(
    private readonly snapshot: CatalogSnapshot,
    private readonly policies: PolicySet,
    private readonly hasProtectedColumns: (relation: CatalogRelation) => boolean,
  ) {}

  /** See ProtectedSchema.isPolicyBound. */
  isPolicyBound(schema: string | undefined, table?: string, column?: string): boolean {
    const named = this.policies.columns.some((policy) => (schema === undefined || policy.schema === schema)
      && (table === undefined || policy.table === table) && (column === undefined || policy.column === column));
    if (named || table === undefined || column === undefined) return named;
    const relations = schema === undefined
      ? this.snapshot.byBareName.get(table) ?? []
      : [this.snapshot.byName.get(nameKey(schema, table))].filter((relation) => relation !== undefined);
    return relations.some((relation) => this.bindsColumn(relation, column));
  }

  /** The file names `column` on the relation, one of its ancestors or one of its descendants. */
  bindsColumn(relation: CatalogRelation, column: string): boolean {
    return [relation, ...this.ancestors(relation), ...this.descendants(relation)]
      .some((member) => this.policies.get(member.schema, member.table, column) !== undefined);
  }

  /** Values written to the relation fall under a policy: protected columns now, or named by the file (itself or an ancestor). */
  governs(relation: CatalogRelation): boolean {
    return this.hasProtectedColumns(relation)
      || [relation, ...this.ancestors(relation)].some((member) => this.policies.table(member.schema, member.table) !== undefined);
  }

  ancestors(relation: CatalogRelation): CatalogRelation[] {
    const found: CatalogRelation[] = [];
    const walk = (current: CatalogRelation, depth: number): void => {
      if (depth > MAX_DEPTH) return;
      for (const oid of current.parents) {
        const parent = this.snapshot.relations.get(oid);
        if (parent === undefined || found.includes(parent)) continue;
        found.push(parent);
        walk(parent, depth + 1);
      }
    };
    walk(relation, 0);
    return found;
  }

  /** Partitions and inheritance children, at any depth. */
  descendants(relation: CatalogRelation): CatalogRelation[] {
    const children = this.childrenByParent();
    const found: CatalogRelation[] = [];
    const walk = (current: CatalogRelation, depth: number): void => {
      if (depth > MAX_DEPTH) return;
      for (const child of children.get(current.oid) ?? []) {
        if (found.includes(child)) continue;
        found.push(child);
        walk(child, depth + 1);
      }
    };
    walk(relation, 0);
    return found;
  }

  private childrenByParent(): Map<number, CatalogRelation[]> {
    if (this.children === undefined) {
      const children = new Map<number, CatalogRelation[]>();
      for (const relation of this.snapshot.relations.values()) {
        for (const parent of relation.parents) children.set(parent, [...(children.get(parent) ?? []), relation]);
      }
      this.children = children;
    }
    return this.children;
  }
}
