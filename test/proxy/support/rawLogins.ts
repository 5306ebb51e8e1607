/**
 * Hand-written clients of a test proxy and probes of what a session holds, for the tests that
 * attack sessions' sockets and slots: a startup packet of the analyst account with an
 * application_name to find its backend by, whether a normal client still gets a session, and how
 * many backends an application_name holds.
 */
import type pg from 'pg';
import type { RunningProxy } from '../../../src/proxy/index.js';
import { CLIENT_DATABASE, connected, viaProxy } from './proxyHarness.js';
import { ANALYST } from './testAccounts.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export const cstring = (text: string): Buffer => Buffer.from(`${text}\0`);

/** The analyst's startup packet (protocol 3.0), with `appName` as its application_name. */
export function startupPacket(appName: string): Buffer {
  const body = Buffer.concat([Buffer.from([0, 3, 0, 0]), cstring('user'), cstring(ANALYST.email), cstring('database'), cstring(CLIENT_DATABASE),
    cstring('application_name'), cstring(appName), Buffer.from([0])]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([length, body]);
}

/** Whether a normal client gets a session within `ms` (retrying). */
export async function canConnect(proxy: RunningProxy, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = await connected(viaProxy(proxy, { ssl: false })).catch(() => undefined);
    if (client) {
      await client.end();
      return true;
    }
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
}

/** How many backends of the server `admin` is connected to carry `appName`. */
export async function backendsOf(admin: pg.Client, appName: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName]);
  return rows[0]?.n ?? -1;
}
