/**
 * `pgveil serve`'s proxy: the configuration's proxy section turned into proxy options, the policy
 * file opened (checked against the upstream catalog when the upstream database is known, and
 * reloaded on change or SIGHUP), and the policy hooks plugged into every session.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/index.js';
import type { AccountAuthenticator } from '../auth/index.js';
import type { Engine } from '../engine/index.js';
import {
  connectCatalog, openPolicyStore, readUpstreamRoleFacts, upstreamPrivilegeReport,
  type AccountLogin, type CatalogConnection, type PolicySet, type PolicyStore, type ReloadOutcome,
} from '../policy/index.js';
import type { AccountConfig, ProxyConfig } from '../config/index.js';
import { upstreamLoginFor } from './upstream/upstreamLogins.js';
import { startProxy, type RunningProxy } from './proxyServer.js';
import type { CancelRoutingOptions, ProxyOptions, UpstreamLogin } from './proxyOptions.js';
import { createPolicyHooks, type PolicyHooks } from './enforcement/policyHooks.js';

export interface ConfiguredProxyOptions {
  readonly config: ProxyConfig;
  /** The accounts in force (their roles decide each session's upstream login). */
  readonly accounts: () => readonly AccountConfig[];
  /** Where reveals and refusals are recorded. */
  readonly audit?: AuditLog;
  /** Where `passwordEnv` settings are read. */
  readonly env?: NodeJS.ProcessEnv;
  /** The policy file; without one, sessions are relayed untouched (a warning says so). */
  readonly policiesFile: string | undefined;
  readonly engine: Engine;
  readonly auth: AccountAuthenticator;
  readonly logger: Logger;
  /** Told of every policy reload, put in force or refused (for the audit log). */
  readonly onPolicyReload?: (outcome: ReloadOutcome) => void;
  /** This process as one of several proxy workers: its slot, and how a cancel reaches another worker. */
  readonly worker?: { readonly slot: number; readonly workers: number; readonly toWorker: NonNullable<CancelRoutingOptions['toWorker']> };
}

export interface ConfiguredProxy {
  readonly port: number;
  readonly hooks: PolicyHooks | undefined;
  /** The column policies in force (undefined without a policy file), shared with the API's authorisation. */
  readonly policies: PolicyStore | undefined;
  /** Runs the cancel of a session of this process when the key matches (relayed from another worker). */
  cancelHere(processId: number, secretKey: Buffer): boolean;
  /** Checks the upstream logins of reloaded accounts under the policies in force; throws to refuse them. */
  checkAccounts(accounts: readonly AccountConfig[]): Promise<void>;
  close(): Promise<void>;
}

function upstreamLogins(config: ProxyConfig, env: NodeJS.ProcessEnv): Map<string, UpstreamLogin> {
  const logins = new Map<string, UpstreamLogin>();
  for (const [role, login] of Object.entries(config.upstreamRoles)) {
    let password = login.password;
    if (login.passwordEnv !== undefined) {
      password = env[login.passwordEnv];
      if (password === undefined) throw new Error(`proxy.upstreamRoles.${role}.passwordEnv: the environment variable ${login.passwordEnv} is not set`);
    }
    logins.set(role, password === undefined ? { user: login.user } : { user: login.user, password });
  }
  return logins;
}

async function proxyOptions(
  config: ProxyConfig, auth: AccountAuthenticator, logger: Logger, env: NodeJS.ProcessEnv, audit: AuditLog | undefined,
): Promise<ProxyOptions> {
  const tls: ProxyOptions['tls'] = { mode: config.tls.mode };
  if (config.tls.cert !== undefined && config.tls.key !== undefined) {
    tls.cert = await readFile(config.tls.cert);
    tls.key = await readFile(config.tls.key);
  }
  const { upstream } = config;
  return {
    host: config.listen.host,
    port: config.listen.port,
    tls,
    allowCleartextFromLoopback: config.allowCleartextFromLoopback,
    maxClientConnections: config.maxClientConnections,
    maxPendingLogins: config.maxPendingLogins,
    loginTimeoutSeconds: config.loginTimeoutSeconds,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    nativeSocketIo: config.nativeSocketIo,
    upstream: {
      host: upstream.host, port: upstream.port, user: upstream.user, sslmode: upstream.sslmode,
      ...(upstream.password === undefined ? {} : { password: upstream.password }),
      ...(upstream.database === undefined ? {} : { database: upstream.database }),
      ...(upstream.ca === undefined ? {} : { ca: await readFile(upstream.ca) }),
    },
    databases: config.databases,
    upstreamLogins: upstreamLogins(config, env),
    ...(audit === undefined ? {} : { audit }),
    authenticator: auth,
    logger,
  };
}

/**
 * Refuses (throws) when an account that does not see every protected column in plaintext would
 * reach the database as a superuser, a reader of the server's files or programs, or a BYPASSRLS
 * role; logs the risky but allowed cases as warnings.
 */
async function checkUpstreamLogins(
  set: PolicySet, accounts: readonly AccountConfig[], options: ProxyOptions, catalog: CatalogConnection, logger: Logger,
): Promise<void> {
  const logins: AccountLogin[] = [];
  const errors: string[] = [];
  for (const account of accounts.filter((a) => a.enabled)) {
    try {
      const login = upstreamLoginFor(account.roles, options);
      const mapped = account.roles.find((role) => options.upstreamLogins?.has(role));
      logins.push({ email: account.email, roles: account.roles, user: login.user, setting: mapped === undefined ? 'proxy.upstream.user' : `proxy.upstreamRoles.${mapped}` });
    } catch (error) {
      errors.push(`${account.email}: ${(error as Error).message}`);
    }
  }
  const facts = await readUpstreamRoleFacts(catalog.query, [...new Set(logins.map((login) => login.user))], set);
  const report = upstreamPrivilegeReport(set, logins, facts);
  for (const warning of report.warnings) logger.warn(`proxy: ${warning}`);
  errors.push(...report.errors);
  if (errors.length > 0) throw new Error(`pgveil refuses these upstream logins:\n  ${errors.join('\n  ')}`);
}

export async function startConfiguredProxy(options: ConfiguredProxyOptions): Promise<ConfiguredProxy> {
  const { config, logger } = options;
  const base: ProxyOptions = {
    ...await proxyOptions(config, options.auth, logger, options.env ?? process.env, options.audit),
    cancelRouting: {
      peerId: config.peerId,
      peers: config.peers,
      workerSlot: options.worker?.slot ?? 0,
      ...(options.worker === undefined ? {} : { workers: options.worker.workers, toWorker: options.worker.toWorker }),
    },
  };
  let catalog: CatalogConnection | undefined;
  let rolesCatalog: CatalogConnection | undefined;
  let store: PolicyStore | undefined;
  let hooks: PolicyHooks | undefined;
  let proxy: RunningProxy;
  try {
    if (options.policiesFile === undefined) {
      logger.warn('proxy: no policy file configured; sessions are relayed without column protection');
    } else {
      if (config.upstream.database !== undefined) {
        catalog = await connectCatalog({ upstream: config.upstream, database: config.upstream.database });
      }
      // Roles are the cluster's: any database the proxy serves can tell them.
      rolesCatalog = catalog ?? await connectCatalog({ upstream: config.upstream, database: Object.values(config.databases)[0] ?? 'postgres' });
      const roles = rolesCatalog;
      store = await openPolicyStore({
        file: options.policiesFile,
        // A worker reloads on its primary's word (as on SIGHUP): the primary watches for the instance.
        watchFile: options.worker === undefined,
        ...(catalog === undefined ? {} : { catalog: catalog.query }),
        check: (set) => checkUpstreamLogins(set, options.accounts(), base, roles, logger),
        onReload: (set) => {
          logger.info({ columns: set.columns.length }, 'policies reloaded');
          options.onPolicyReload?.({ ok: true, policies: set });
        },
        onError: (error) => {
          logger.error({ err: { message: (error as Error).message } }, 'policy reload refused; the previous policies stay in force');
          options.onPolicyReload?.({ ok: false, error });
        },
      });
      hooks = await createPolicyHooks({
        policies: store, engine: options.engine, upstream: base.upstream, logger, maxValueBytes: config.maxProtectedValueBytes, ...(options.audit === undefined ? {} : { audit: options.audit }),
      });
    }
    proxy = await startProxy(hooks === undefined ? base : { ...base, hooks: hooks.factory });
  } catch (error) {
    store?.close();
    hooks?.close();
    await catalog?.close().catch(() => undefined);
    if (rolesCatalog !== catalog) await rolesCatalog?.close().catch(() => undefined);
    throw error;
  }
  return {
    port: proxy.port,
    hooks,
    policies: store,
    cancelHere: (processId, secretKey) => proxy.cancelHere(processId, secretKey),
    checkAccounts: async (accounts) => {
      if (store !== undefined && rolesCatalog !== undefined) await checkUpstreamLogins(store.current, accounts, base, rolesCatalog, logger);
    },
    close: async () => {
      await proxy.close();
      hooks?.close();
      store?.close();
      await catalog?.close().catch(() => undefined);
      if (rolesCatalog !== catalog) await rolesCatalog?.close().catch(() => undefined);
    },
  };
}
