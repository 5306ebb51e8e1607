/**
 * The pieces every direct pg connection to the upstream shares (policy check, the proxy's catalog
 * reader, protect-table and rekey), so they make the same TLS choices as the proxy's own upstream.
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import type { UpstreamConfig, UpstreamSslMode } from '../config/index.js';

/**
 * pg's `ssl` option for a libpq sslmode: `prefer` and `require` encrypt without checking the
 * certificate (callers retry `prefer` without TLS), `verify-full` checks it and the host name.
 * `caPem` is the CA certificate's PEM text, not a path.
 */
export function pgSslOption(sslmode: UpstreamSslMode, host: string, caPem?: string | Buffer): pg.ClientConfig['ssl'] {
  switch (sslmode) {
    case 'disable':
      return false;
    case 'prefer':
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-full':
      return caPem === undefined
        ? { rejectUnauthorized: true, servername: host }
        : { rejectUnauthorized: true, servername: host, ca: caPem };
  }
}

/** pgSslOption for a configured upstream, reading its CA file when it names one. */
export async function upstreamSslOption(up: UpstreamConfig): Promise<pg.ClientConfig['ssl']> {
  return pgSslOption(up.sslmode, up.host, up.ca === undefined ? undefined : await readFile(up.ca, 'utf8'));
}

/** A database URL for messages: host, port, database and user, never the password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname} as ${decodeURIComponent(u.username) || '(default user)'}`;
  } catch {
    return 'the database URL given';
  }
}

/** Connects a client; a connection the server drops later surfaces on the next query, not as an uncaught 'error'. */
export async function connectQuietly(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
