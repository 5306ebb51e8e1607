/**
 * DDL this session sent that pgveil's catalog cannot see yet: uncommitted (the catalog is read
 * over a connection of its own) or not yet answered (pipelined). Until the session is idle again,
 * a statement is analysed against column lists that may be wrong, so it is refused when it names
 *  - a relation with protected columns whose columns or name that DDL changed (dropped or
 *    re-created, columns dropped, a column added that a policy names…), or
 *  - a relation that DDL created, renamed or moved and that may have protected columns (it
 *    inherits from, is a partition of, or is a view over such a relation, or a policy names it).
 *
 * Why this design, rather than failing closed on every write after any DDL in a transaction:
 * migrations that create, alter and fill other tables inside one transaction keep working
 * unchanged; only statements on relations that policies govern wait for the commit. Renames,
 * moves and retypes of protected objects never get here: the analyser refuses them outright
 * (schemaChangeGuard), because policies are bound to names and a committed rename would
 * un-protect the column just as well.
 */
import type { RelationName, SchemaChange, StatementSchemaFacts } from '../../sql/index.js';
import type { CatalogRelation } from '../catalog/catalogSnapshot.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';

/** Statements that put no value into any column, whatever the columns are now. */
const NO_VALUES = new Set([
  'DropStmt', 'GrantStmt', 'CommentStmt', 'TruncateStmt', 'LockStmt', 'VacuumStmt', 'ClusterStmt', 'ReindexStmt',
  'TransactionStmt', 'IndexStmt', 'RenameStmt', 'AlterObjectSchemaStmt', 'RefreshMatViewStmt', 'AlterOwnerStmt',
  'CreateTrigStmt',
]);
/** Also checked by names, not by the cached column list (schemaChangeGuard): a stale list cannot mislead them. */
const NAME_CHECKED = new Set([...NO_VALUES, 'AlterTableStmt', 'CreateStmt', 'CreateForeignTableStmt']);

interface CreatedRelation {
  readonly name: RelationName;
  mayBeProtected: boolean;
}

function sameName(a: RelationName, b: RelationName): boolean {
  return a.table === b.table && (a.schema === undefined || b.schema === undefined || a.schema === b.schema);
}

function label(name: RelationName): string {
  return name.schema === undefined ? name.table : `${name.schema}.${name.table}`;
}

/** What the pending DDL changed; copied to try a text's statements without recording them. */
class PendingState {
  anything = false;
  readonly staleSchemas = new Set<string>();
  readonly staleNames: RelationName[] = [];
  /** Names no longer borne by the relation that bore them (dropped, renamed or moved away). */
  readonly removedNames: RelationName[] = [];
  readonly created: CreatedRelation[] = [];

  copy(): PendingState {
    const copy = new PendingState();
    copy.anything = this.anything;
    for (const schema of this.staleSchemas) copy.staleSchemas.add(schema);
    copy.staleNames.push(...this.staleNames);
    copy.removedNames.push(...this.removedNames);
    copy.created.push(...this.created.map((entry) => ({ ...entry })));
    return copy;
  }

  get isEmpty(): boolean {
    return !this.anything && this.staleSchemas.size === 0 && this.staleNames.length === 0 && this.removedNames.length === 0 && this.created.length === 0;
  }

  refusalFor(statement: StatementSchemaFacts, policies: ColumnPolicies, unsure: boolean): PolicyRefusal | undefined {
    const refusal = this.mentionRefusal(statement, policies, unsure);
    // Statements checked by names (schemaChangeGuard) and those putting no values anywhere are left to the rules above.
    if (refusal !== undefined || NAME_CHECKED.has(statement.type)) return refusal;
    for (const mention of statement.mentions) {
      if (mention.schema === undefined && !statement.cteNames.has(mention.table) && this.mayResolveElsewhere(mention.table, policies)) {
        return unsupportedRefusal(`pgveil refused the statement: DDL of this session that pgveil cannot see yet (not committed, or not yet answered) dropped, renamed or moved a relation named ${mention.table}, so the unqualified name may now denote another relation of that name, one with column policies; commit the DDL first, or qualify the name with its schema`);
      }
    }
    return undefined;
  }

  private mentionRefusal(statement: StatementSchemaFacts, policies: ColumnPolicies, unsure: boolean): PolicyRefusal | undefined {
    for (const mention of statement.mentions) {
      const created = this.findCreated(mention);
      if (created !== undefined) {
        if (created.mayBeProtected && !NO_VALUES.has(statement.type)) {
          return unsupportedRefusal(`pgveil refused the statement: relation ${label(mention)} was created, renamed or moved by DDL that pgveil cannot see yet (not committed, or not yet answered), and it may have protected columns (it inherits from, shows or replaces a table with column policies, or the policy file names it); commit the DDL first, then send the statement`);
        }
        continue;
      }
      const relation = catalogRelation(mention, policies);
      if (relation === undefined) {
        if (mention.schema === undefined && statement.cteNames.has(mention.table)) continue;
        if (unsure && !NO_VALUES.has(statement.type)) {
          return unsupportedRefusal(`pgveil refused the statement: it names relation ${label(mention)}, which pgveil cannot see yet (DDL of this session not yet committed or answered); send it after the DDL commits`);
        }
        continue;
      }
      if (!NAME_CHECKED.has(statement.type) && this.isStale(relation) && policies.bindings.governs(relation)) {
        return unsupportedRefusal(`pgveil refused the statement: table ${relation.schema}.${relation.table} has protected columns, and DDL of this session that pgveil cannot see yet (not committed, or not yet answered) changed its columns or its name; commit the DDL first, then send the statement`);
      }
    }
    return undefined;
  }

  apply(change: SchemaChange, policies: ColumnPolicies): void {
    switch (change.kind) {
      case 'anything':
        this.anything = true;
        return;
      case 'schemaChanged':
        this.staleSchemas.add(change.schema);
        return;
      case 'columnsChanged':
        this.markStale(change.relation, policies);
        return;
      case 'columnsAdded':
        this.columnsAdded(change.relation, change.columns, policies);
        return;
      case 'removed':
        this.removedNames.push(change.relation);
        this.forgetCreated(change.relation);
        this.markStale(change.relation, policies);
        return;
      case 'created': {
        const mayBeProtected = policies.isPolicyBound(change.relation.schema, change.relation.table)
          || change.parents.some((parent) => this.mayBeProtected(parent, policies))
          || (change.viewOf ?? []).some((source) => this.mayBeProtected(source, policies))
          || (change.renamedFrom !== undefined && this.mayBeProtected(change.renamedFrom, policies));
        if (change.renamedFrom !== undefined) {
          this.removedNames.push(change.renamedFrom);
          this.forgetCreated(change.renamedFrom);
          this.markStale(change.renamedFrom, policies);
        }
        this.forgetCreated(change.relation);
        // The catalog may still hold a dropped relation of that name, with its old columns.
        this.markStale(change.relation, policies);
        this.created.push({ name: change.relation, mayBeProtected });
        return;
      }
    }
  }

  /** Appended columns move no existing one: stale only when a policy names a new one (through inheritance too). */
  private columnsAdded(name: RelationName, columns: readonly string[], policies: ColumnPolicies): void {
    const created = this.findCreated(name);
    if (created !== undefined) {
      if (columns.some((column) => policies.isPolicyBound(name.schema, name.table, column))) created.mayBeProtected = true;
      return;
    }
    const relation = catalogRelation(name, policies);
    const bound = relation === undefined
      ? columns.some((column) => policies.isPolicyBound(name.schema, name.table, column))
      : columns.some((column) => policies.bindings.bindsColumn(relation, column));
    if (bound) this.markStale(name, policies);
  }

  private markStale(name: RelationName, policies: ColumnPolicies): void {
    this.staleNames.push(name);
    const relation = catalogRelation(name, policies);
    // Column changes reach partitions and inheritance children too.
    if (relation !== undefined) {
      for (const child of policies.bindings.descendants(relation)) this.staleNames.push({ schema: child.schema, table: child.table });
    }
  }

  private mayBeProtected(name: RelationName, policies: ColumnPolicies): boolean {
    const created = this.findCreated(name);
    if (created !== undefined) return created.mayBeProtected;
    const relation = catalogRelation(name, policies);
    // A relation pgveil cannot see at all may be anything.
    return relation === undefined || policies.bindings.governs(relation);
  }

  /**
   * An unqualified name whose relation pending DDL removed (dropped, renamed or moved away, or its
   * schema dropped or renamed) resolves to the next relation of that name on the path, which the
   * catalog cannot tell yet: it matters when some relation of that name has column policies.
   */
  private mayResolveElsewhere(table: string, policies: ColumnPolicies): boolean {
    const relations = policies.snapshot.byBareName.get(table) ?? [];
    if (!relations.some((relation) => policies.bindings.governs(relation))) return false;
    return this.anything || this.removedNames.some((name) => name.table === table) || relations.some((relation) => this.staleSchemas.has(relation.schema));
  }

  private isStale(relation: CatalogRelation): boolean {
    return this.anything || this.staleSchemas.has(relation.schema)
      || this.staleNames.some((name) => sameName(name, { schema: relation.schema, table: relation.table }));
  }

  private findCreated(name: RelationName): CreatedRelation | undefined {
    for (let index = this.created.length - 1; index >= 0; index--) {
      const entry = this.created[index] as CreatedRelation;
      if (sameName(entry.name, name)) return entry;
    }
    return undefined;
  }

  private forgetCreated(name: RelationName): void {
    for (let index = this.created.length - 1; index >= 0; index--) {
      if (sameName((this.created[index] as CreatedRelation).name, name)) this.created.splice(index, 1);
    }
  }
}

function catalogRelation(name: RelationName, policies: ColumnPolicies): CatalogRelation | undefined {
  const resolved = policies.resolveTable(name.schema, name.table);
  return resolved === undefined ? undefined : policies.relationOf(resolved);
}

export class PendingSchemaChanges {
  private state = new PendingState();

  get isEmpty(): boolean {
    return this.state.isEmpty;
  }

  /**
   * The refusal for a text, statement by statement: each is checked against the pending DDL and
   * the DDL before it in the text. `unsure`: DDL of this session may be invisible to the catalog
   * (then relations it does not know are refused too). Records nothing.
   */
  check(facts: readonly StatementSchemaFacts[], policies: ColumnPolicies, unsure: boolean): PolicyRefusal | undefined {
    const trial = this.state.copy();
    let mayBeInvisible = unsure || !trial.isEmpty;
    for (const statement of facts) {
      const refusal = trial.refusalFor(statement, policies, mayBeInvisible);
      if (refusal !== undefined) return refusal;
      for (const change of statement.changes) trial.apply(change, policies);
      if (statement.changes.length > 0) mayBeInvisible = true;
    }
    return undefined;
  }

  /** The text is forwarded: its DDL is pending until the session is idle with nothing in flight. */
  record(facts: readonly StatementSchemaFacts[], policies: ColumnPolicies): void {
    for (const statement of facts) {
      for (const change of statement.changes) this.state.apply(change, policies);
    }
  }

  /** DDL pgveil cannot read ran (a prepared statement of unknown text): any relation may have changed. */
  recordUnknown(): void {
    this.state.anything = true;
  }

  /** The session is idle and nothing is in flight: the catalog will show everything committed. */
  clear(): void {
    if (!this.state.isEmpty) this.state = new PendingState();
  }
}
