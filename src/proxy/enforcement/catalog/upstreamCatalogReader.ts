/**
 * Reads the catalog of one upstream database over a short-lived connection made with the proxy's
 * own upstream credentials (the client sessions are never used for it, so a client's transaction
 * state or search_path cannot change what the proxy sees). Refreshes are rare: a connection per
 * refresh keeps nothing idle to break.
 */
import pg from 'pg';
import { pgCatalogQuery, connectQuietly, pgSslOption } from '../../../policy/index.js';
import type { UpstreamOptions } from '../../proxyOptions.js';
import { readCatalogSnapshot, type CatalogSnapshot } from './catalogSnapshot.js';

const CONNECT_TIMEOUT_MS = 10_000;

const sslOption = (upstream: UpstreamOptions): pg.ClientConfig['ssl'] => pgSslOption(upstream.sslmode, upstream.host, upstream.ca);
const connect = connectQuietly;

export type CatalogLoader = (database: string) => Promise<CatalogSnapshot>;

/** A loader that connects as the proxy does upstream, reads the snapshot, and disconnects. */
export function upstreamCatalogLoader(upstream: UpstreamOptions): CatalogLoader {
  return async (database) => {
    const base: pg.ClientConfig = {
      host: upstream.host, port: upstream.port, user: upstream.user, database,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'pgveil catalog',
    };
    if (upstream.password !== undefined) base.password = upstream.password;
    let client: pg.Client;
    try {
      client = await connect({ ...base, ssl: sslOption(upstream) });
    } catch (error) {
      if (upstream.sslmode !== 'prefer' || !/does not support SSL/i.test((error as Error).message)) throw error;
      client = await connect({ ...base, ssl: false });
    }
    try {
      return await readCatalogSnapshot(pgCatalogQuery(client));
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}
