/**
 * `pgveil serve`'s proxy: the configuration's proxy section turned into proxy options, the policy
 * file opened (checked against the upstream catalog when the upstream database is known, and
 * reloaded on change or SIGHUP), and the policy hooks plugged into every session.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { AccountAuthenticator } from '../../auth/accountAuthenticator.js';
import type { ProxyConfig } from '../../config/configTypes.js';
import type { Engine } from '../../engine/engineTypes.js';
import { connectCatalog, openPolicyStore, type CatalogConnection, type PolicyStore } from '../../policy/index.js';
import { startProxy, type RunningProxy } from '../index.js';
import type { ProxyOptions } from '../proxyOptions.js';
import { createPolicyHooks, type PolicyHooks } from './policyHooks.js';

export interface ConfiguredProxyOptions {
  readonly config: ProxyConfig;
  /** The policy file; without one, sessions are relayed untouched (a warning says so). */
  readonly policiesFile: string | undefined;
  readonly engine: Engine;
  readonly auth: AccountAuthenticator;
  readonly logger: Logger;
}

export interface ConfiguredProxy {
  readonly port: number;
  readonly hooks: PolicyHooks | undefined;
  /** The column policies in force (undefined without a policy file), shared with the API's authorisation. */
  readonly policies: PolicyStore | undefined;
  close(): Promise<void>;
}

async function proxyOptions(config: ProxyConfig, auth: AccountAuthenticator, logger: Logger): Promise<ProxyOptions> {
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
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    upstream: {
      host: upstream.host, port: upstream.port, user: upstream.user, sslmode: upstream.sslmode,
      ...(upstream.password === undefined ? {} : { password: upstream.password }),
      ...(upstream.database === undefined ? {} : { database: upstream.database }),
      ...(upstream.ca === undefined ? {} : { ca: await readFile(upstream.ca) }),
    },
    databases: config.databases,
    authenticator: auth,
    logger,
  };
}

export async function startConfiguredProxy(options: ConfiguredProxyOptions): Promise<ConfiguredProxy> {
  const { config, logger } = options;
  const base = await proxyOptions(config, options.auth, logger);
  let catalog: CatalogConnection | undefined;
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
      store = await openPolicyStore({
        file: options.policiesFile,
        ...(catalog === undefined ? {} : { catalog: catalog.query }),
        onReload: (set) => logger.info({ columns: set.columns.length }, 'policies reloaded'),
        onError: (error) => logger.error({ err: { message: (error as Error).message } }, 'policy reload refused; the previous policies stay in force'),
      });
      hooks = await createPolicyHooks({ policies: store, engine: options.engine, upstream: base.upstream, logger });
    }
    proxy = await startProxy(hooks === undefined ? base : { ...base, hooks: hooks.factory });
  } catch (error) {
    store?.close();
    hooks?.close();
    await catalog?.close().catch(() => undefined);
    throw error;
  }
  return {
    port: proxy.port,
    hooks,
    policies: store,
    close: async () => {
      await proxy.close();
      hooks?.close();
      store?.close();
      await catalog?.close().catch(() => undefined);
    },
  };
}
