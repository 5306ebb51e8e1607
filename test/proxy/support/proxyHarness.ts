/** Starts the proxy in-process in front of a test PostgreSQL, and opens clients both ways. */
import pg from 'pg';
import pino from 'pino';
import { startProxy, type ProxyOptions, type RunningProxy } from '../../../src/proxy/index.js';
import type { TestPostgres } from '../../support/postgres.js';
import { ANALYST, testAuthenticator } from './testAccounts.js';

export const CLIENT_DATABASE = 'app';

export async function proxyOptionsFor(database: TestPostgres, overrides: Partial<ProxyOptions> = {}): Promise<ProxyOptions> {
  return {
    host: '127.0.0.1',
    port: 0,
    tls: { mode: 'allow' },
    allowCleartextFromLoopback: true,
    maxClientConnections: 100,
    idleTimeoutSeconds: 0,
    upstream: {
      host: database.host,
      port: database.port,
      user: database.user,
      password: database.password,
      database: database.database,
      sslmode: 'disable',
    },
    databases: { [CLIENT_DATABASE]: database.database },
    authenticator: await testAuthenticator(),
    logger: pino({ level: process.env.PGVEIL_TEST_LOG ?? 'silent' }),
    ...overrides,
  };
}

export async function startTestProxy(database: TestPostgres, overrides: Partial<ProxyOptions> = {}): Promise<RunningProxy> {
  return startProxy(await proxyOptionsFor(database, overrides));
}

/** pg client settings for the proxy, logged in as an account. */
export function viaProxy(proxy: RunningProxy, extra: pg.ClientConfig = {}): pg.ClientConfig {
  return {
    host: '127.0.0.1',
    port: proxy.port,
    user: ANALYST.email,
    password: ANALYST.password,
    database: CLIENT_DATABASE,
    ...extra,
  };
}

/** pg client settings for the same database, directly. */
export function direct(database: TestPostgres, extra: pg.ClientConfig = {}): pg.ClientConfig {
  return { connectionString: database.url, ...extra };
}

export async function connected(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  // A session the proxy ends at teardown must not surface as an unhandled error.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Connects expecting a refusal; returns the error (code, message, detail) PostgreSQL or pgveil sent. */
export async function connectError(config: pg.ClientConfig): Promise<{ code?: string; message: string; detail?: string }> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    return error as { code?: string; message: string; detail?: string };
  }
  await client.end();
  throw new Error('connected, but a refusal was expected');
}
