import type { Logger } from 'pino';
import { createApiAuthoriser } from '../api/authorisation.js';
import { createAuditLog, type AuditDestination } from '../audit/index.js';
import { startApiServer, type RunningApi } from '../api/server.js';
import { AccountStore } from '../auth/accountStore.js';
import { AuthService } from '../auth/authService.js';
import { systemClock, type Clock } from '../auth/clock.js';
import type { AccountConfig, PgveilConfig } from '../config/configTypes.js';
import type { Env } from '../config/envOverrides.js';
import { loadKeyMaterial } from '../config/keySource.js';
import { createEngine } from '../engine/engine.js';
import type { Engine } from '../engine/engineTypes.js';
import { Keyring } from '../keys/keyring.js';
import { openPolicyStore, type PolicyStore } from '../policy/index.js';
import { startConfiguredProxy } from '../proxy/policy/configuredProxy.js';

export interface ServicesOptions {
  logger: Logger;
  env?: Env;
  clock?: Clock;
}

/** Everything `pgveil serve` runs, sharing one engine and one AuthService. */
export interface RunningServices {
  engine: Engine;
  auth: AuthService;
  /** Absent when api.enabled is false. */
  api?: RunningApi;
  /** Applies a reloaded configuration's accounts (the rest needs a restart). */
  applyConfig(config: PgveilConfig): Promise<void>;
  close(): Promise<void>;
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
  const audit = createAuditLog(auditDestination(config));
  let accountsInForce: readonly AccountConfig[] = config.accounts;
  let checkAccounts: (accounts: readonly AccountConfig[]) => Promise<void> = async () => undefined;
  let api: RunningApi | undefined;
  try {
    // The proxy first: its policy store (checked against the catalog) also decides the API's rights.
    let policies: PolicyStore | undefined;
    if (config.proxy) {
      const proxy = await startConfiguredProxy({
        config: config.proxy, policiesFile: config.policies, engine, auth, logger, audit, accounts: () => accountsInForce, ...(opts.env === undefined ? {} : { env: opts.env }),
      });
      checkAccounts = (next) => proxy.checkAccounts(next);
      closers.push(() => proxy.close());
      policies = proxy.policies;
      logger.info({ port: proxy.port }, 'Postgres proxy listening');
    }
    if (config.api.enabled) {
      if (policies === undefined && config.policies !== undefined) {
        const store = await openPolicyStore({
          file: config.policies,
          onError: (error) => logger.error({ err: { message: (error as Error).message } }, 'policy reload refused; the previous policies stay in force'),
        });
        closers.push(async () => store.close());
        policies = store;
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
    async applyConfig(next) {
      try {
        await checkAccounts(next.accounts);
      } catch (error) {
        logger.error(`configuration not reloaded; the previous accounts stay:\n${(error as Error).message}`);
        return;
      }
      accountsInForce = next.accounts;
      accounts.replaceAll(next.accounts);
      logger.info({ accounts: next.accounts.length }, 'configuration reloaded: accounts applied');
    },
    async close() {
      for (const close of closers.reverse()) await close();
    },
  };
  if (api) services.api = api;
  return services;
}
