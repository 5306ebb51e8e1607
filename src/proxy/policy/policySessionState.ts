/**
 * Everything one session's policy hooks share between the client → server and server → client
 * directions, plus the proxy-wide services they use.
 */
import type { Logger } from 'pino';
import type { PolicySet, PolicyStore } from '../../policy/index.js';
import type { Engine } from '../../engine/engineTypes.js';
import type { SqlAnalysisCache } from '../sql/index.js';
import type { DatabaseCatalog, CatalogCache } from './catalogCache.js';
import type { CatalogSnapshot } from './catalogSnapshot.js';
import type { ColumnPolicies } from './columnPolicies.js';
import type { CopyInRewriter } from './copyInRewriter.js';
import type { PolicyMetrics } from './policyMetrics.js';
import { ReplyQueue, type PortalInfo, type StatementInfo } from './replyQueue.js';
import { ReadActions } from './resultPlan.js';
import { SessionSettings } from './sessionSettings.js';
import type { StatementContext } from './statementRewriter.js';

/** Proxy-wide: one of each per running proxy. */
export interface PolicyServices {
  readonly engine: Engine;
  readonly store: Pick<PolicyStore, 'current'>;
  readonly catalogs: CatalogCache;
  readonly analysisCache: SqlAnalysisCache;
  readonly metrics: PolicyMetrics;
  readonly logger: Logger;
  /** Bumped on each policy reload (part of the analysis cache key). */
  policyGeneration(): number;
  /** The resolver of one (snapshot, policy set) pair, shared by the sessions that use it. */
  columnPolicies(snapshot: CatalogSnapshot, policies: PolicySet): ColumnPolicies;
}

export interface CopyInState {
  /** undefined: a COPY into columns that need no rewriting. */
  readonly rewriter: CopyInRewriter | undefined;
  /** Data is dropped until the client ends the COPY (after a refusal or a server error). */
  failed: boolean;
  /** The COPY was already failed upstream (by a CopyFail or the server's own error). */
  failSent: boolean;
}

export class PolicySessionState {
  readonly queue = new ReplyQueue();
  readonly statements = new Map<string, StatementInfo>();
  readonly portals = new Map<string, PortalInfo>();
  readonly settings = new SessionSettings();
  readonly actions: ReadActions;
  readonly catalog: DatabaseCatalog;
  copyIn: CopyInState | undefined;
  /** Dropping frontend messages until Sync, after forwarding a message that fails in their place. */
  discarding = false;
  /** DDL forwarded and not yet answered by ReadyForQuery. */
  ddlPending = false;
  /** DDL ran inside the open transaction: the catalog connection cannot see it yet. */
  uncommittedDdl = false;
  /** A CommandComplete of DDL arrived since the last ReadyForQuery. */
  ddlCompleted = false;
  private waiters: (() => void)[] = [];

  constructor(readonly services: PolicyServices, roles: readonly string[], database: string) {
    this.actions = new ReadActions(roles);
    this.catalog = services.catalogs.of(database);
  }

  /** The resolver for the current catalog and policies, if the catalog needs no load first. */
  policiesNow(): ColumnPolicies | undefined {
    const snapshot = this.catalog.current;
    return snapshot === undefined ? undefined : this.services.columnPolicies(snapshot, this.services.store.current);
  }

  async policies(): Promise<ColumnPolicies> {
    const snapshot = await this.catalog.fresh();
    return this.services.columnPolicies(snapshot, this.services.store.current);
  }

  statementContext(policies: ColumnPolicies): StatementContext {
    return {
      policies,
      cache: this.services.analysisCache,
      // Analyses depend on the database's catalog and the policies: both are in the key.
      schemaKey: `${this.services.policyGeneration()}:${this.catalog.generation}:${this.catalog.database}`,
      engine: this.services.engine,
      actions: this.actions,
      dateStyle: this.settings.dateStyle,
    };
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
