import pg from 'pg';
import { connectQuietly, describeDatabaseUrl, upstreamSslOption, type CatalogTarget } from '../../policy/index.js';
import type { PgveilConfig } from '../../config/index.js';
import { UsageError } from '../cliIo.js';

const CONNECT_TIMEOUT_MS = 10_000;

/** Rows come back as PostgreSQL prints each value (its output function), never as JS objects. */
export type TextRow = Readonly<Record<string, string | null>>;

/** One session on the database itself (not through the proxy): batches run in its transactions. */
export interface BackfillConnection {
  query(sql: string, params?: readonly unknown[]): Promise<TextRow[]>;
  /** `host:port/database as user`, never the password: for messages. */
  readonly description: string;
  close(): Promise<void>;
}

/**
 * Where to connect, as `pgveil policy check` decides it: `--database-url`, else the
 * configuration's proxy.upstream with `--database` or upstream.database.
 */
export function backfillTarget(url: string | undefined, database: string | undefined, config: PgveilConfig): CatalogTarget {
  if (url !== undefined) {
    if (database !== undefined) throw new UsageError('give either --database-url or --database');
    return { url };
  }
  const upstream = config.proxy?.upstream;
  if (!upstream) throw new UsageError('no database: give --database-url, or a --config with a proxy.upstream section');
  const name = database ?? upstream.database;
  if (name === undefined) {
    throw new UsageError('proxy.upstream.database is not set (the proxy uses the database each client asks for): give --database NAME');
  }
  return { upstream, database: name };
}

// Every value as text: dates, inet and numeric must reach the engine exactly as PostgreSQL prints them.
const TEXT_VALUES: pg.CustomTypesConfig = {
  getTypeParser: (() => (value: string) => value) as unknown as pg.CustomTypesConfig['getTypeParser'],
};

/** Same TLS choices as the proxy upstream and `policy check`. */

function connected(config: pg.ClientConfig): Promise<pg.Client> {
  return connectQuietly({ ...config, types: TEXT_VALUES, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
}

/** Connects (`prefer` falls back to plain TCP when the server has no TLS) and sets ISO dates. */
export async function connectBackfill(target: CatalogTarget, applicationName: string): Promise<BackfillConnection> {
  let client: pg.Client;
  let description: string;
  if ('url' in target) {
    description = describeDatabaseUrl(target.url);
    client = await connected({ connectionString: target.url, application_name: applicationName });
  } else {
    const up = target.upstream;
    description = `${up.host}:${up.port}/${target.database} as ${up.user}`;
    const base: pg.ClientConfig = { host: up.host, port: up.port, user: up.user, database: target.database, application_name: applicationName };
    if (up.password !== undefined) base.password = up.password;
    try {
      client = await connected({ ...base, ssl: await upstreamSslOption(up) });
    } catch (err) {
      if (up.sslmode !== 'prefer' || !/does not support SSL/i.test((err as Error).message)) throw err;
      client = await connected({ ...base, ssl: false });
    }
  }
  // The date kind reads ISO dates; a server default of DMY or SQL style would be misread.
  await client.query("SET DateStyle = 'ISO, YMD'");
  return {
    description,
    query: async (sql, params = []) => (await client.query<TextRow>(sql, [...params])).rows,
    close: async () => { await client.end(); },
  };
}
