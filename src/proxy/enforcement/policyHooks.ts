/**
 * Column policies as session hooks: `createPolicyHooks` builds the proxy-wide services (catalog
 * cache, SQL analysis cache, metrics) once, and returns the factory that gives each session its
 * hooks. Pass `hooks: policyHooks.factory` in the proxy options.
 */
import type { Logger } from 'pino';
import { NO_AUDIT, type AuditLog } from '../../audit/index.js';
import type { ColumnPolicy, PolicySet, PolicyStore } from '../../policy/index.js';
import type { Engine, EngineWithValueProtection, ValueProtection } from '../../engine/index.js';
import type { UpstreamOptions } from '../proxyOptions.js';
import type { ReplyTracker } from '../session/protocolState.js';
import type { ErrorFields } from '../protocol/messages.js';
import type { SessionContext, SessionHooks, SessionHooksFactory } from '../session/sessionHooks.js';
import type { ExpectedReply } from './expectedReplies.js';
import { loadSqlParser, SqlAnalysisCache } from '../sql/index.js';
import { BackendPolicy } from './backendPolicy.js';
import { CatalogCache } from './catalog/catalogCache.js';
import { coalesceEngineCalls } from './writePath/coalescedEngine.js';
import type { CatalogSnapshot } from './catalog/catalogSnapshot.js';
import { ColumnPolicies } from './catalog/columnPolicies.js';
import { boundValueLength, DEFAULT_MAX_PROTECTED_VALUE_BYTES } from './writePath/valueProtector.js';
import { refuseGenuineToken, refuseGenuineTokens } from './writePath/genuineTokens.js';
import { FrontendPolicy } from './frontendPolicy.js';
import { createPolicyMetrics, type PolicyMetrics } from './policyMetrics.js';
import { PolicySessionState, type PolicyServices } from './policySessionState.js';
import { upstreamCatalogLoader, type CatalogLoader } from './catalog/upstreamCatalogReader.js';

export interface PolicyHooksOptions {
  readonly policies: Pick<PolicyStore, 'current' | 'onChange'>;
  readonly engine: Engine;
  /** The proxy's upstream: the catalog is read over a connection of its own with these credentials. */
  readonly upstream: UpstreamOptions;
  readonly logger: Logger;
  /** Reads a database's catalog (default: over `upstream`). */
  readonly catalogLoader?: CatalogLoader;
  /** Where reveals and refusals are recorded; nowhere by default. */
  readonly audit?: AuditLog;
  /** The longest value protected on the write path, in UTF-8 bytes (default 4096); longer ones are refused. */
  readonly maxValueBytes?: number;
}

export interface PolicyHooks {
  readonly factory: SessionHooksFactory;
  readonly metrics: PolicyMetrics;
  close(): void;
}

/** Client → server types the hooks look at, and server → client ones. */
const FRONTEND_TYPES = 'QPCFdcf';
/**
 * Bind: read in place when it is forwarded as sent (a statement pgveil is sure of, nothing to
 * protect), else seen whole. Describe and Execute: of the portal a Bind just bound, read in place
 * (FrontendPolicy.wantsWhole); else seen whole. Sync: followed in place, seen whole only while a
 * COPY FROM STDIN may be starting.
 */
const FRONTEND_ON_DEMAND_TYPES = 'BDES';
const BACKEND_TYPES = 'tnIsEGHcS';
/** Types the hooks follow by their header alone: ParseComplete, BindComplete, CloseComplete, ReadyForQuery. */
const BACKEND_HEADER_TYPES = '123Z';
/**
 * DataRow and CopyData, seen whole only within a result the read path rewrites; NoticeResponse
 * only while rows are held, so that it leaves after the rows PostgreSQL sent before it.
 * RowDescription and CommandComplete: followed in place (a description read before, a command of
 * no DDL, no rows held); else seen whole.
 */
const BACKEND_ON_DEMAND_TYPES = 'DdNTC';
/** DataRows that follow one another come to the read path together: one call per chunk, not per row. */
const BACKEND_RUN_TYPES = 'D';

/** A reload took from the session's roles what its prepared statements or cursors may still use. */
function narrowedSession(taken: string): ErrorFields {
  return {
    severity: 'FATAL', code: '57P01',
    message: `terminating connection because a policy reload took from this session what statements or cursors it holds may use: ${taken}`,
    hint: 'Connect again: the new session is checked under the policies in force.',
  };
}

/** Per column policy (the same object until a reload), the engine's held protection for its options (genuine tokens refused), if it gives one. */
function heldProtections(engine: Engine): (policy: ColumnPolicy) => ValueProtection | undefined {
  if (!('valueProtection' in engine)) return () => undefined;
  const held = engine as EngineWithValueProtection;
  const protections = new WeakMap<ColumnPolicy, ValueProtection | null>();
  return (policy) => {
    let protection = protections.get(policy);
    if (protection === undefined) {
      try {
        protection = refuseGenuineToken(held.valueProtection(policy.kind, policy.engineOptions));
      } catch {
        protection = null; // options the engine refuses: the batch call refuses them in its own words
      }
      protections.set(policy, protection);
    }
    return protection ?? undefined;
  };
}

export async function createPolicyHooks(options: PolicyHooksOptions): Promise<PolicyHooks> {
  await loadSqlParser();
  const metrics = createPolicyMetrics();
  const catalogs = new CatalogCache(options.catalogLoader ?? upstreamCatalogLoader(options.upstream), 250);
  let generation = 0;
  const resolvers = new WeakMap<CatalogSnapshot, { set: PolicySet; resolver: ColumnPolicies }>();
  /** Open sessions, each with how to end it. */
  const sessions = new Map<PolicySessionState, SessionContext['end']>();
  const unsubscribe = options.policies.onChange((set) => {
    generation++;
    catalogs.markAllStale();
    for (const [state, end] of sessions) {
      const taken = state.regranted(set);
      if (taken !== undefined) end(narrowedSession(taken));
    }
  });
  const maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_PROTECTED_VALUE_BYTES;
  const protectionOf = heldProtections(options.engine);
  const services: PolicyServices = {
    engine: coalesceEngineCalls(boundValueLength(refuseGenuineTokens(options.engine), maxValueBytes)),
    inlineProtection: (policy) => {
      const protection = protectionOf(policy);
      return protection?.immediate === true ? protection : undefined;
    },
    unprotectInPlace: (policy) => protectionOf(policy)?.unprotectInPlace,
    maxValueBytes,
    store: options.policies,
    catalogs,
    analysisCache: new SqlAnalysisCache(),
    metrics,
    logger: options.logger,
    audit: options.audit ?? NO_AUDIT,
    policyGeneration: () => generation,
    columnPolicies(snapshot, set) {
      const known = resolvers.get(snapshot);
      if (known !== undefined && known.set === set) return known.resolver;
      const resolver = new ColumnPolicies(snapshot, set);
      resolvers.set(snapshot, { set, resolver });
      return resolver;
    },
  };
  const factory: SessionHooksFactory = (context) => {
    // Only these hooks attach payloads to this session's replies: every one is an ExpectedReply.
    const replies = context.replies as ReplyTracker<ExpectedReply>;
    const state = new PolicySessionState(services, context.account, context.upstreamDatabase, replies, {
      loginUser: context.upstreamUser ?? options.upstream.user,
      ...(context.startupParameters === undefined ? {} : { startupParameters: context.startupParameters }),
      ...(context.serverParameters.has('search_path') ? { reportedPath: context.serverParameters.get('search_path') } : {}),
    });
    for (const [name, value] of context.serverParameters) state.settings.update(name, value);
    sessions.set(state, context.end);
    const frontend = new FrontendPolicy(state);
    const backend = new BackendPolicy(state);
    const hooks: SessionHooks = {
      frontendTypes: FRONTEND_TYPES,
      frontendOnDemandTypes: FRONTEND_ON_DEMAND_TYPES,
      backendTypes: BACKEND_TYPES,
      backendHeaderTypes: BACKEND_HEADER_TYPES,
      backendOnDemandTypes: BACKEND_ON_DEMAND_TYPES,
      backendRunTypes: BACKEND_RUN_TYPES,
      wantsBackendMessage: (type, chunk, start, end) => backend.wantsWhole(type, chunk, start, end),
      wantsFrontendMessage: (type, chunk, start, end, session) => frontend.wantsWhole(type, chunk, start, end, session.state.upstreamSkippingUntilSync),
      onFrontendMessage: (message, session) => frontend.handle(message, session.state.upstreamSkippingUntilSync),
      onBackendMessage: (message) => backend.handle(message),
      onBackendHeader: (type, firstBodyByte) => backend.header(type, firstBodyByte),
      onClose: () => {
        sessions.delete(state);
        state.backendEvent();
      },
    };
    return hooks;
  };
  return { factory, metrics, close: unsubscribe };
}
