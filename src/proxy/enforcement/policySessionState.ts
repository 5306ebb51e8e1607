/**
 * Everything one session's policy hooks share between the client → server and server → client
 * directions, plus the proxy-wide services they use.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/index.js';
import type { AuthenticatedAccount } from '../../auth/index.js';
import type { PolicyRefusal } from './policyRefusal.js';
import type { ColumnPolicy, PolicySet, PolicyStore } from '../../policy/index.js';
import type { Engine, UnprotectInPlace, ValueProtection } from '../../engine/index.js';
import type { SqlAnalysisCache } from '../sql/index.js';
import type { DatabaseCatalog, CatalogCache } from './catalog/catalogCache.js';
import type { CatalogSnapshot } from './catalog/catalogSnapshot.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';
import { ConfirmedNames } from './writePath/confirmedNames.js';
import type { CopyInRewriter } from './writePath/copyInRewriter.js';
import type { BinaryCopyInRewriter } from './writePath/binaryCopyInRewriter.js';
import { PendingSchemaChanges } from './writePath/pendingSchemaChanges.js';
import type { PolicyMetrics } from './policyMetrics.js';
import { messageTypeOf, settleUnanswered, type ExpectedReply, type PortalInfo, type StatementInfo } from './expectedReplies.js';
import type { ReplyTracker } from '../session/protocolState.js';
import { ReadActions } from './readPath/resultPlan.js';
import type { SessionDefaults } from './catalog/searchPathResolution.js';
import { hasPathDependentNames, SessionRelations } from './catalog/sessionRelations.js';
import { SessionMissPacing } from './catalog/missPacing.js';
import { SessionSearchPath } from './catalog/sessionSearchPath.js';
import { SessionSettings } from './catalog/sessionSettings.js';
import { initialPathSettings } from './catalog/startupSearchPath.js';
import { narrowing, sessionGrant, type SessionGrant } from './sessionGrant.js';
import { sessionRights, type SessionRights } from './statementRuleGuard.js';
import type { StatementContext } from './writePath/statementRewriter.js';
import type { DateStyle } from './valueCodecs/dateStyle.js';

/** What the session's login says about its search_path (see initialPathSettings). */
export interface SessionLogin {
  /** The upstream role the session logs in as (the proxy's upstream user). */
  readonly loginUser?: string;
  /** The client's startup parameters passed on upstream. */
  readonly startupParameters?: ReadonlyMap<string, string>;
  /** search_path from the login's ParameterStatus (PostgreSQL 18+ reports it). */
  readonly reportedPath?: string;
}

/** Proxy-wide: one of each per running proxy. */
export interface PolicyServices {
  readonly engine: Engine;
  /**
   * The column's protection of one value at a time, when the engine offers one that costs bounded
   * work (a Bind of few values is then rewritten inline); undefined: use `engine`.
   */
  inlineProtection(policy: ColumnPolicy): ValueProtection | undefined;
  /** The column's unprotect of result fields in place over their bytes, where its kind and method have one. */
  unprotectInPlace(policy: ColumnPolicy): UnprotectInPlace | undefined;
  /** proxy.maxProtectedValueBytes: the engine refuses longer values; binary COPY holds no longer field. */
  readonly maxValueBytes: number;
  readonly store: Pick<PolicyStore, 'current'>;
  readonly catalogs: CatalogCache;
  readonly analysisCache: SqlAnalysisCache;
  readonly metrics: PolicyMetrics;
  readonly logger: Logger;
  readonly audit: AuditLog;
  /** Bumped on each policy reload (part of the analysis cache key). */
  policyGeneration(): number;
  /** The resolver of one (snapshot, policy set) pair, shared by the sessions that use it. */
  columnPolicies(snapshot: CatalogSnapshot, policies: PolicySet): ColumnPolicies;
}

export interface CopyInState {
  /** undefined: a COPY into columns that need no rewriting. */
  readonly rewriter: CopyInRewriter | BinaryCopyInRewriter | undefined;
  /** Data is dropped until the client ends the COPY (after a refusal or a server error). */
  failed: boolean;
  /** The COPY was already failed upstream (by a CopyFail or the server's own error). */
  failSent: boolean;
  /** Why it is failed, when pgveil fails it (else: it did not expect the COPY). */
  readonly refusal?: PolicyRefusal;
}

/** Everything a StatementContext is built from, besides what never changes in a session. */
interface ContextBasis {
  readonly policies: ColumnPolicies;
  readonly policyGeneration: number;
  readonly catalogGeneration: number;
  /** SessionSearchPath.revision and .forgets: the settings `trackerFor` gives. */
  readonly pathRevision: number;
  readonly pathForgotten: boolean;
  readonly defaultPath: string | undefined;
  readonly dateStyle: DateStyle;
}

/**
 * A refusal's message names rules and columns, but a parser error inside it may quote the client's
 * text (`syntax error at or near "…"`): the audit log keeps no quoted text of the statement.
 */
function withoutQuotedText(message: string): string {
  return message.replace(/ at or near "(?:[^"]|"")*"/g, ' at or near "…"').replace(/'(?:[^']|'')*'/g, "'…'");
}

export class PolicySessionState {
  /** Named statements and portals, as the server confirmed them (see ConfirmedNames). */
  readonly statements = new ConfirmedNames<StatementInfo>();
  readonly portals = new ConfirmedNames<PortalInfo>();
  /** Counts Sync-delimited batches of frontend messages (a Query is a batch of its own). */
  batch = 0;
  readonly settings = new SessionSettings();
  readonly actions: ReadActions;
  readonly catalog: DatabaseCatalog;
  /** When this session's misses may have the catalog read again. */
  readonly missPacing = new SessionMissPacing();
  copyIn: CopyInState | undefined;
  /** Dropping frontend messages until Sync, after forwarding a message that fails in their place. */
  discarding = false;
  /** DDL forwarded and not yet answered by ReadyForQuery. */
  ddlPending = false;
  /** DDL ran inside the open transaction: the catalog connection cannot see it yet. */
  uncommittedDdl = false;
  /** A CommandComplete of DDL arrived since the last ReadyForQuery. */
  ddlCompleted = false;
  /** What that DDL changed, until the catalog can see it (relations to refuse meanwhile). */
  readonly pendingSchema = new PendingSchemaChanges();
  /** The session's search_path and role, followed from its statements (the write path's name resolution). */
  readonly searchPath: SessionSearchPath;
  /** Catalog readings started before the login (later ones may show a newer default). */
  private readonly readsBeforeLogin: number;
  /** The default search_path of the last catalog reading before the login (see sessionDefaults). */
  private readonly defaultBeforeLogin: string | undefined;
  /** The default this session logged in with, once settled ({ path: undefined }: not known). */
  private loginDefault: { readonly path: string | undefined } | undefined;
  private askedNewerDefault = false;
  private waiters: (() => void)[] = [];

  private rightsOf: { readonly set: PolicySet; readonly rights: SessionRights } | undefined;
  /** What the policies in force when last asked (regranted) grant this session's roles. */
  private grant: SessionGrant;
  private lastContext: { readonly basis: ContextBasis; readonly context: StatementContext } | undefined;
  private lastPolicies: { readonly snapshot: CatalogSnapshot; readonly set: PolicySet; readonly resolver: ColumnPolicies } | undefined;

  /** Numbers this process's sessions, for the audit log. */
  private static sessions = 0;
  readonly session = ++PolicySessionState.sessions;
  private readonly roles: readonly string[];

  /**
   * `replies`: the session's record of the replies PostgreSQL owes; this session's entries carry
   * what the enforcement expects of each.
   */
  constructor(
    readonly services: PolicyServices, readonly account: AuthenticatedAccount, database: string,
    readonly replies: ReplyTracker<ExpectedReply>, private readonly login: SessionLogin = {},
  ) {
    replies.onUnanswered(settleUnanswered);
    this.roles = account.roles;
    this.actions = new ReadActions(account.roles);
    this.grant = sessionGrant(services.store.current, account.roles);
    this.catalog = services.catalogs.of(database);
    this.searchPath = new SessionSearchPath(initialPathSettings(login.startupParameters, login.reportedPath), login.reportedPath);
    this.readsBeforeLogin = this.catalog.readsStarted;
    const before = this.catalog.latest;
    this.defaultBeforeLogin = before === undefined ? undefined : this.readDefault(before);
  }

  /** The default a reading shows for this session's role, if pgveil can vouch for it. */
  private readDefault(snapshot: CatalogSnapshot): string | undefined {
    // Same role, same database: the reading's default is the session's — unless the reader's own
    // startup options set it (the snapshot then leaves it undefined).
    return this.login.loginUser !== undefined && snapshot.currentUser === this.login.loginUser ? snapshot.defaultSearchPath : undefined;
  }

  /**
   * The default search_path this session logged in with (server, database or role default).
   * ALTER ROLE/DATABASE … SET applies at login and can run at any time, so one reading does not
   * say what a session got: pgveil takes the default as known only when the last reading before
   * the login and the first one after it agree (no change across the login; a change and its
   * reversal between the two would go unseen), and keeps it for the session's life. Otherwise —
   * including sessions that logged in before pgveil's first reading of their database — the
   * session's path counts as unknown until it sets one, and unqualified names resolve
   * conservatively (fail closed). Not followed: a server-wide default changed in postgresql.conf
   * and reloaded while sessions run.
   */
  private sessionDefaults(snapshot: CatalogSnapshot): SessionDefaults {
    return { loginUser: this.login.loginUser, defaultPath: this.defaultPathOf(snapshot) };
  }

  /** The session's default path as far as `snapshot` settles it (see sessionDefaults). */
  private defaultPathOf(snapshot: CatalogSnapshot): string | undefined {
    if (this.loginDefault === undefined && (snapshot.readSequence ?? 0) > this.readsBeforeLogin) {
      const after = this.readDefault(snapshot);
      this.loginDefault = { path: after !== undefined && after === this.defaultBeforeLogin ? after : undefined };
    }
    return this.loginDefault?.path;
  }

  /**
   * True when a catalog reading after the login would settle the session's default path, and it
   * matters (a bare name of this catalog denotes relations in several schemas, one with column
   * policies). Asked once per session.
   */
  wantsNewerDefault(policies: ColumnPolicies): boolean {
    if (this.askedNewerDefault || this.loginDefault !== undefined || this.defaultBeforeLogin === undefined) return false;
    if ((policies.snapshot.readSequence ?? 0) > this.readsBeforeLogin || !hasPathDependentNames(policies)) return false;
    this.askedNewerDefault = true;
    return true;
  }

  /** The resolver for the current catalog and policies, if the catalog needs no load first. */
  policiesNow(): ColumnPolicies | undefined {
    const snapshot = this.catalog.current;
    return snapshot === undefined ? undefined : this.columnPoliciesOf(snapshot);
  }

  async policies(): Promise<ColumnPolicies> {
    return this.columnPoliciesOf(await this.catalog.fresh());
  }

  /**
   * `services.columnPolicies` for the policies in force: the same resolver for the same snapshot
   * and policy set, which the session keeps at hand (asked several times per message; a policy
   * set, once replaced, is never in force again).
   */
  private columnPoliciesOf(snapshot: CatalogSnapshot): ColumnPolicies {
    const set = this.services.store.current;
    const last = this.lastPolicies;
    if (last !== undefined && last.snapshot === snapshot && last.set === set) return last.resolver;
    const resolver = this.services.columnPolicies(snapshot, set);
    this.lastPolicies = { snapshot, set, resolver };
    return resolver;
  }

  /**
   * `domain`: the search_path failure domain of the message analysed (SessionSearchPath). The
   * context of the previous message is reused while nothing it was built from has changed.
   */
  statementContext(policies: ColumnPolicies, domain = this.searchPath.currentDomain): StatementContext {
    // Compared field by field with the last basis: a statement's context costs no object when it repeats.
    const policyGeneration = this.services.policyGeneration();
    const catalogGeneration = this.catalog.generation;
    const pathRevision = this.searchPath.revision;
    const pathForgotten = this.searchPath.forgets(domain);
    const defaultPath = this.defaultPathOf(policies.snapshot);
    const dateStyle = this.settings.dateStyle;
    const last = this.lastContext;
    if (last !== undefined) {
      const known = last.basis;
      if (known.policies === policies && known.policyGeneration === policyGeneration && known.catalogGeneration === catalogGeneration
        && known.pathRevision === pathRevision && known.pathForgotten === pathForgotten && known.defaultPath === defaultPath
        && known.dateStyle === dateStyle) return last.context;
    }
    const basis: ContextBasis = { policies, policyGeneration, catalogGeneration, pathRevision, pathForgotten, defaultPath, dateStyle };
    const tracker = this.searchPath.trackerFor(domain);
    const schema = new SessionRelations(policies, tracker, this.sessionDefaults(policies.snapshot));
    const context: StatementContext = {
      policies,
      schema,
      cache: this.services.analysisCache,
      // Analyses depend on the database's catalog, the policies and the session's path settings
      // (the whole tracker: a ROLLBACK later in the text returns to what it saved).
      schemaKey: `${basis.policyGeneration}:${basis.catalogGeneration}:${this.catalog.database}:${tracker.key()}:${schema.resolutionKey}`,
      engine: this.services.engine,
      actions: this.actions,
      dateStyle: basis.dateStyle,
    };
    this.lastContext = { basis, context };
    return context;
  }

  /** Attaches `reply` to the message about to be forwarded in its place. */
  expectReply(reply: ExpectedReply): void {
    this.replies.expect(messageTypeOf(reply), reply);
  }

  /** Counts and records a refusal pgveil answers in the server's place. */
  refused(refusal: PolicyRefusal): void {
    this.services.metrics.refusals++;
    this.services.audit.record({ event: 'proxy.refused', account: this.account.email, session: this.session, sqlstate: refusal.sqlState, reason: withoutQuotedText(refusal.message) });
  }

  /** Records plaintext of `columns` in `rows` rows about to be sent (before they are). */
  revealed(columns: readonly string[], rows: number): void {
    this.services.audit.record({ event: 'proxy.reveal', account: this.account.email, roles: this.roles, session: this.session, columns, rows });
  }

  /** What the statement rules let this session do under the policies in force. */
  rights(): SessionRights {
    const set = this.services.store.current;
    if (this.rightsOf?.set !== set) this.rightsOf = { set, rights: sessionRights(set, this.roles) };
    return this.rightsOf.rights;
  }

  /**
   * After a reload to `set`: what it took from this session's roles that statements or cursors the
   * session holds may still use (see sessionGrant.ts); undefined when it took nothing.
   */
  regranted(set: PolicySet): string | undefined {
    const after = sessionGrant(set, this.roles);
    const taken = narrowing(this.grant, after);
    this.grant = after;
    return taken;
  }

  /** Resolves when the server side next reports progress (a COPY starting, a reply completing). */
  nextBackendEvent(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  backendEvent(): void {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
