import pg from 'pg';
import { connectQuietly, describeDatabaseUrl, upstreamSslOption } from './upstreamClient.js';
import type { UpstreamConfig } from '../config/index.js';
import type { CatalogQuery, CatalogRow } from './catalogReader.js';

/** A database connection used only to read pg_catalog. */
export interface CatalogConnection {
  readonly query: CatalogQuery;
  /** `host:port/database as user`, never the password: for messages. */
  readonly description: string;
  close(): Promise<void>;
}

export type CatalogTarget =
  | { readonly url: string }
  | { readonly upstream: UpstreamConfig; readonly database: string };

const CONNECT_TIMEOUT_MS = 10_000;
const APPLICATION_NAME = 'pgveil policy check';

/** Adapts a node-postgres client (or pool) to CatalogQuery. */
export function pgCatalogQuery(client: Pick<pg.ClientBase, 'query'>): CatalogQuery {
  return async (sql, params) => {
    const result = await client.query<CatalogRow>(sql, [...params]);
    return result.rows;
  };
}

const connected = connectQuietly;

/**
 * Connects as the proxy does upstream (same host, user, password and sslmode; `prefer` tries TLS
 * without a certificate check and falls back to plain TCP when the server has no TLS), or to a
 * database URL.
 */
export async function connectCatalog(target: CatalogTarget): Promise<CatalogConnection> {
  let client: pg.Client;
  let description: string;
  if ('url' in target) {
    description = describeDatabaseUrl(target.url);
    client = await connected({ connectionString: target.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: APPLICATION_NAME });
  } else {
    const up = target.upstream;
    description = `${up.host}:${up.port}/${target.database} as ${up.user}`;
    const base: pg.ClientConfig = {
      host: up.host, port: up.port, user: up.user, database: target.database,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: APPLICATION_NAME,
    };
    if (up.password !== undefined) base.password = up.password;
    const ssl = await upstreamSslOption(up);
    try {
      client = await connected({ ...base, ssl });
    } catch (err) {
      if (up.sslmode !== 'prefer' || !/does not support SSL/i.test((err as Error).message)) throw err;
      client = await connected({ ...base, ssl: false });
    }
  }
  return {
    query: pgCatalogQuery(client),
    description,
    close: async () => { await client.end(); },
  };
}
