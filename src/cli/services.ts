import type { Logger } from 'pino';
import { timingSafeEqual } from 'node:crypto';
import { createApiAuthoriser, startApiServer, type RunningApi } from '../api/index.js';
import {
  accountChanges, createAuditLog, policyReloadAudit, recordUnlessUnwritable, type AuditDestination, type AuditEvent, type AuditLog, type PolicyReloadAudit,
} from '../audit/index.js';
import { AccountStore, AuthService, revocationsOnly, systemClock, type Clock } from '../auth/index.js';
import { ConfigError, loadKeyMaterial, type AccountConfig, type Env, type KeyMaterial, type PgveilConfig } from '../config/index.js';
import { createEngine, nativeDigestsStatus, nativeFf1Status, type Engine } from '../engine/index.js';
import { Keyring, parseMasterKey, type KeyVersionInput } from '../keys/index.js';
import { openPolicyStore, type PolicyStore, type ReloadOutcome } from '../policy/index.js';
import { socketIoStatus, startConfiguredProxy } from '../proxy/index.js';

export interface ServicesOptions {
  logger: Logger;
  env?: Env;
  clock?: Clock;
  /**
   * This process is one of several proxy workers (`proxy.workers`): it serves the proxy only (the
   * primary serves the API), tags its audit lines, and hands cancels for other workers' sessions on.
   */
  proxyWorker?: ProxyWorkerRole;
  /** This process is the primary of proxy workers: it serves the API only. */
  withoutProxy?: boolean;
}

export interface ProxyWorkerRole {
  readonly slot: number;
  readonly workers: number;
  readonly toWorker: (workerSlot: number, processId: number, secretKey: Buffer) => void;
}

/** Everything `pgveil serve` runs, sharing one engine and one AuthService. */
export interface RunningServices {
  engine: Engine;
  auth: AuthService;
  /** Absent when api.enabled is false. */
  api?: RunningApi;
  /** Runs the cancel of a proxy session of this process when the key matches; false without a proxy. */
  cancelHere(processId: number, secretKey: Buffer): boolean;
  /** Applies a reloaded configuration's accounts (the rest needs a restart). */
  applyConfig(config: PgveilConfig): Promise<void>;
  /** A changed configuration file did not load: nothing of it applies (recorded in the audit log). */
  configRefused(): void;
  close(): Promise<void>;
}

/** Versions only: the audit log never holds a key or anything derived from one. */
function versionsOf(keys: KeyMaterial): number[] {
  return [keys.keyVersion, ...keys.previousKeys.map((key) => key.version)];
}

function sameKeys(a: KeyMaterial, b: KeyMaterial): boolean {
  const same = (x: KeyVersionInput['key'], y: KeyVersionInput['key']): boolean => {
    const [p, q] = [parseMasterKey(x), parseMasterKey(y)];
    return p.length === q.length && timingSafeEqual(p, q);
  };
  if (a.keyVersion !== b.keyVersion || !same(a.masterKey, b.masterKey) || a.previousKeys.length !== b.previousKeys.length) return false;
  const previous = new Map(a.previousKeys.map((key) => [key.version, key.key]));
  return b.previousKeys.every((key) => {
    const other = previous.get(key.version);
    return other !== undefined && same(other, key.key);
  });
}

/**
 * The keys are read at start only (the engine and the session tokens derive from them): a reload
 * that names other keys, or keys that cannot be read, is reported and leaves the keys in force.
 */
/** A reload's audit line; one that cannot be written is logged, not thrown (the reload happened). */
function recordReload(audit: AuditLog, logger: Logger, event: AuditEvent): void {
  if (!recordUnlessUnwritable(audit, event)) logger.error({ event: event.event }, 'cannot write the audit line of a reload: disclosures fail until the audit destination takes lines again');
}

async function checkReloadedKeys(inForce: KeyMaterial, next: PgveilConfig, env: Env, logger: Logger, audit: AuditLog): Promise<void> {
  const versions = { keyVersion: inForce.keyVersion, versions: versionsOf(inForce) };
  let requested: KeyMaterial;
  try {
    requested = await loadKeyMaterial(next, env);
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : 'cannot read the keys';
    logger.error(`configuration reloaded without its keys; the keys in force stay:\n${message}`);
    recordReload(audit, logger, { event: 'keys.reload', outcome: 'failed', ...versions, requestedKeyVersion: next.keys.keyVersion, requestedVersions: [next.keys.keyVersion, ...next.keys.previousKeys.map((key) => key.version)] });
    return;
  }
  if (sameKeys(inForce, requested)) return;
  logger.warn({ keyVersion: inForce.keyVersion, requestedKeyVersion: requested.keyVersion }, 'the reloaded configuration names other keys: they take effect at the next start');
  recordReload(audit, logger, { event: 'keys.reload', outcome: 'restart_required', ...versions, requestedKeyVersion: requested.keyVersion, requestedVersions: versionsOf(requested) });
}

function auditDestination(config: PgveilConfig): AuditDestination {
  const { audit } = config;
  if (audit.destination === 'file') return { kind: 'file', path: audit.file };
  return { kind: audit.destination };
}

/**
 * Starts the front doors of one configuration. The engine and the auth keys come from the same
 * master keys, so every instance started with the same configuration and keys is interchangeable.
 */
export async function startServices(config: PgveilConfig, opts: ServicesOptions): Promise<RunningServices> {
  const { logger } = opts;
  const keys = await loadKeyMaterial(config, opts.env ?? process.env);
  for (const warning of keys.warnings) logger.warn(warning);
  // The engine's own ceiling lets each front door apply its (possibly lower) bound with its own message.
  const maxValueBytes = Math.max(config.api.limits.maxElementBytes, config.proxy?.maxProtectedValueBytes ?? 0);
  const engine = createEngine({ masterKey: keys.masterKey, keyVersion: keys.keyVersion, previousKeys: keys.previousKeys, maxValueBytes });
  const keyring = new Keyring([{ version: keys.keyVersion, key: keys.masterKey }, ...keys.previousKeys], keys.keyVersion);
  const accounts = new AccountStore(config.accounts);
  const auth = new AuthService({ accounts, keyring, clock: opts.clock ?? systemClock, loginRateLimit: config.api.loginRateLimit });

  const closers: (() => Promise<void>)[] = [];
  const worker = opts.proxyWorker;
  const audit = createAuditLog(auditDestination(config), worker === undefined ? {} : { worker: worker.slot });
  let cancelHere: RunningServices['cancelHere'] = () => false;
  let policyAudit: PolicyReloadAudit | undefined;
  const onPolicyReload = (outcome: ReloadOutcome): void => {
    if (outcome.ok) policyAudit?.loaded(outcome.policies);
    else policyAudit?.failed();
  };
  let accountsInForce: readonly AccountConfig[] = config.accounts;
  let checkAccounts: (accounts: readonly AccountConfig[]) => Promise<void> = async () => undefined;
  let api: RunningApi | undefined;
  try {
    // The proxy first: its policy store (checked against the catalog) also decides the API's rights.
    let policies: PolicyStore | undefined;
    if (config.proxy && opts.withoutProxy !== true) {
      const proxy = await startConfiguredProxy({
        config: config.proxy, policiesFile: config.policies, engine, auth, logger, audit, onPolicyReload, accounts: () => accountsInForce,
        ...(opts.env === undefined ? {} : { env: opts.env }),
        ...(worker === undefined ? {} : { worker }),
      });
      cancelHere = (processId, secretKey) => proxy.cancelHere(processId, secretKey);
      checkAccounts = (next) => proxy.checkAccounts(next);
      closers.push(() => proxy.close());
      policies = proxy.policies;
      if (policies !== undefined) policyAudit = policyReloadAudit(audit, policies.current);
      // Whether the native addons run here (else the same results, on slower paths): an image or a
      // machine that could not build them says so at once.
      logger.info({ port: proxy.port, native: { ff1: nativeFf1Status, digests: nativeDigestsStatus, sockets: socketIoStatus(config.proxy.nativeSocketIo) } }, 'Postgres proxy listening');
    }
    if (config.api.enabled && worker === undefined) {
      if (policies === undefined && config.policies !== undefined) {
        const store = await openPolicyStore({
          file: config.policies,
          onReload: (set) => onPolicyReload({ ok: true, policies: set }),
          onError: (error) => {
            logger.error({ err: { message: (error as Error).message } }, 'policy reload refused; the previous policies stay in force');
            onPolicyReload({ ok: false, error });
          },
        });
        closers.push(async () => store.close());
        policies = store;
        policyAudit = policyReloadAudit(audit, store.current);
      }
      const store = policies;
      const authoriser = createApiAuthoriser(config.api.grants, () => store?.current);
      api = await startApiServer({ config: config.api, engine, auth, authoriser, audit, logger });
      closers.push(() => api?.close() ?? Promise.resolve());
      logger.info({ url: api.url }, 'protection API listening');
    }
  } catch (err) {
    for (const close of closers.reverse()) await close();
    throw err;
  }

  const services: RunningServices = {
    engine,
    auth,
    cancelHere: (processId, secretKey) => cancelHere(processId, secretKey),
    async applyConfig(next) {
      const changes = accountChanges(accountsInForce, next.accounts);
      try {
        await checkAccounts(next.accounts);
      } catch (error) {
        // What the file takes away (disabled, removed, new credentials) is in force all the same.
        const revoked = revocationsOnly(accountsInForce, next.accounts);
        if (revoked !== accountsInForce) {
          accountsInForce = revoked;
          accounts.replaceAll(revoked);
        }
        logger.error(`configuration not reloaded; the previous accounts stay, less what it disables or removes and those whose roles it changes other than by adding (disabled until a reload succeeds), with the passwords and API keys it gives them:\n${(error as Error).message}`);
        recordReload(audit, logger, { event: 'accounts.reload', outcome: 'failed', reason: 'upstream_login_refused', ...changes });
        return;
      }
      accountsInForce = next.accounts;
      accounts.replaceAll(next.accounts);
      logger.info({ accounts: next.accounts.length }, 'configuration reloaded: accounts applied');
      recordReload(audit, logger, { event: 'accounts.reload', outcome: 'ok', ...changes });
      await checkReloadedKeys(keys, next, opts.env ?? process.env, logger, audit);
    },
    configRefused() {
      recordReload(audit, logger, { event: 'accounts.reload', outcome: 'failed', reason: 'invalid_configuration' });
    },
    async close() {
      for (const close of closers.reverse()) await close();
    },
  };
  if (api) services.api = api;
  return services;
}
