/**
 * The pieces every direct pg connection to the upstream shares (policy check, the proxy's catalog
 * reader, protect-table and rekey), so they make the same TLS choices as the proxy's own upstream.
 */
import pg from 'pg';
import type { UpstreamSslMode } from '../config/configTypes.js';

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

/** Connects a client; a connection the server drops later surfaces on the next query, not as an uncaught 'error'. */
export async function connectQuietly(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
