/**
 * Hand-written clients of a test proxy and probes of what a session holds, for the tests that
 * attack sessions' sockets and slots: a startup packet of the analyst account with an
 * application_name to find its backend by, whether a normal client still gets a session, and how
 * many backends an application_name holds; and the file-wide setup they share.
 */
import type net from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { RunningProxy } from '../../../src/proxy/index.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
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

export interface RawLoginHarness {
  /** The file's server and a superuser connection to it, once beforeAll has run. */
  readonly database: TestPostgres;
  readonly admin: pg.Client;
  /** Closed (within 8 s: a hung close must not hang the file) after the file's tests. */
  readonly proxies: RunningProxy[];
  /** Destroyed after the file's tests. */
  readonly sockets: net.Socket[];
}

/** One server for the file (`prepare` runs once on its admin connection), and what its tests leave open closed afterwards. */
export function useRawLoginHarness(prepare?: (admin: pg.Client) => Promise<unknown>): RawLoginHarness {
  let database: TestPostgres | undefined;
  let admin: pg.Client | undefined;
  const proxies: RunningProxy[] = [];
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    database = await startTestPostgres();
    admin = await connected({ connectionString: database.url });
    await prepare?.(admin);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.race([Promise.all(proxies.map((proxy) => proxy.close())), sleep(8_000)]);
    await admin?.end();
    await database?.stop();
  }, 30_000);
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the raw-login harness is used before its beforeAll ran');
    return value;
  };
  return {
    get database() { return started(database); },
    get admin() { return started(admin); },
    proxies,
    sockets,
  };
}
