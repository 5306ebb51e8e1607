/**
 * Logged-in plaintext sessions are relayed on the native socket addon (proxy.nativeSocketIo, on
 * by default; the rest of the suite runs on it): Node no longer holds their two sockets, the
 * results are the same as on Node's streams, and shutdown still ends them with a FATAL and waits
 * for them. A TLS client socket stays on Node's streams.
 */
import net from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CLIENT_DATABASE, connected, connectError, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { openRawSession, rawFrame } from './support/rawProtocol.js';
import { ANALYST } from './support/testAccounts.js';

let database: TestPostgres;
let native: RunningProxy;
let streams: RunningProxy;

beforeAll(async () => {
  database = await startTestPostgres();
  native = await startTestProxy(database);
  streams = await startTestProxy(database, { nativeSocketIo: false });
});

afterAll(async () => {
  await native?.close();
  await streams?.close();
  await database?.stop();
});

/** TCP sockets Node holds in this process (the clients', the proxies' and their upstreams'). */
const tcpSocketsNow = (): number => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;

/** The count once sockets still closing (an earlier test's) are gone: the same over 100 ms. */
async function nodeTcpSockets(): Promise<number> {
  for (let last = -1; ;) {
    const now = tcpSocketsNow();
    if (now === last) return now;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const QUERY = "SELECT i, md5(i::text) AS hash, repeat('x', i % 300) AS pad FROM generate_series(1, 5000) AS i";

describe.skipIf(socketAddon === undefined)('sessions on the native socket addon', () => {
  it("takes a plaintext session's two sockets away from Node; nativeSocketIo: false leaves them", async () => {
    const before = await nodeTcpSockets();
    const onNative = await connected(viaProxy(native, { ssl: false }));
    const withNative = await nodeTcpSockets() - before;
    const onStreams = await connected(viaProxy(streams, { ssl: false }));
    const withStreams = await nodeTcpSockets() - before - withNative;
    // Each: the pg client's own socket, plus the proxy's client and upstream sockets when Node holds them.
    expect(withStreams - withNative).toBe(2);
    const [a, b] = await Promise.all([onNative.query(QUERY), onStreams.query(QUERY)]);
    expect(a.rows).toEqual(b.rows);
    expect(a.rows).toHaveLength(5000);
    await Promise.all([onNative.end(), onStreams.end()]);
  });

  it("keeps a TLS client on Node's streams (its plaintext upstream goes native), with the same results", async () => {
    const before = await nodeTcpSockets();
    const secure = await connected(viaProxy(native, { ssl: { rejectUnauthorized: false } }));
    // The pg client's socket and the proxy's TLS client socket; not the proxy's upstream socket.
    expect(await nodeTcpSockets() - before).toBe(2);
    expect((await secure.query(QUERY)).rows).toHaveLength(5000);
    await secure.end();
  });

  it('ends native sessions with 57P01 at shutdown, and close() waits for them', async () => {
    const proxy = await startTestProxy(database);
    const clients = await Promise.all([1, 2, 3].map(() => connected(viaProxy(proxy, { ssl: false }))));
    const [first, ...idle] = clients as [pg.Client, ...pg.Client[]];
    // The idle ones hear it as an error event; the busy one as its query's error.
    const ended = idle.map((client) => new Promise<{ code?: string }>((resolve) => client.once('error', (error) => resolve(error as { code?: string }))));
    const busy = first.query('SELECT pg_sleep(30)').then(() => ({ code: 'none' }), (error: unknown) => error as { code?: string });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let closed = false;
    const closing = proxy.close().then(() => { closed = true; });
    const errors = await Promise.all([busy, ...ended]);
    expect(errors.map((error) => error.code)).toEqual(['57P01', '57P01', '57P01']);
    await closing;
    expect(closed).toBe(true);
    // The query running when the proxy stopped was cancelled, not left running upstream.
    const admin = await connected({ connectionString: database.url });
    let sleeping = -1;
    for (let tries = 0; tries < 50 && sleeping !== 0; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'");
      sleeping = rows[0]?.n ?? -1;
    }
    await admin.end();
    expect(sleeping).toBe(0);
  });
  it("relays PostgreSQL's last words when its exit resets the connection", async () => {
    for (let i = 0; i < 5; i++) {
      const raw = await openRawSession(viaProxy(native, { ssl: false }));
      // The backend dies with the second Query unread: its kernel answers with a reset right after the FATAL.
      raw.send([
        rawFrame('Q', Buffer.from('SELECT pg_sleep(0.1); SELECT pg_terminate_backend(pg_backend_pid())\0')),
        rawFrame('Q', Buffer.from(`SELECT 1 /* ${'x'.repeat(60_000)} */\0`)),
      ]);
      const messages = await raw.readUntilClosed(5_000);
      const error = messages.find((message) => message.type === 'E');
      expect(error?.body.toString('latin1')).toContain('C57P01\0');
      raw.close();
    }
  });

  it("closes the socket of a client that ignores the proxy's FIN once its backend is gone, and only then frees its slot", async () => {
    const proxy = await startTestProxy(database, { maxClientConnections: 1 });
    try {
      // A hand-written client that keeps its side open when the proxy closes its own (allowHalfOpen).
      const socket = net.connect({ host: '127.0.0.1', port: proxy.port, allowHalfOpen: true });
      socket.on('error', () => undefined);
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => { received = Buffer.concat([received, chunk]); });
      await new Promise((resolve) => socket.once('connect', resolve));
      const cstring = (text: string): Buffer => Buffer.from(`${text}\0`);
      const body = Buffer.concat([Buffer.from([0, 3, 0, 0]), cstring('user'), cstring(ANALYST.email), cstring('database'), cstring(CLIENT_DATABASE), Buffer.from([0])]);
      const length = Buffer.alloc(4);
      length.writeInt32BE(body.length + 4);
      socket.write(Buffer.concat([length, body]));
      const until = async (done: () => boolean): Promise<void> => {
        for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      };
      await until(() => received.includes(Buffer.from('R')));
      socket.write(Buffer.concat([rawFrame('p', cstring(ANALYST.password)), rawFrame('Q', cstring('SELECT pg_terminate_backend(pg_backend_pid())'))]));
      await until(() => received.includes(Buffer.from('C57P01')));
      expect(received.includes(Buffer.from('C57P01'))).toBe(true);
      // Its socket still open on the proxy's side: its slot is held.
      expect((await connectError(viaProxy(proxy, { ssl: false }))).code).toBe('53300');
      // The proxy closes it after 2 s: the slot comes back.
      const started = Date.now();
      let next: pg.Client | undefined;
      while (next === undefined && Date.now() - started < 6_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        next = await connected(viaProxy(proxy, { ssl: false })).catch(() => undefined);
      }
      expect(next).toBeDefined();
      expect(Date.now() - started).toBeLessThan(4_000);
      expect((await (next as pg.Client).query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await (next as pg.Client).end();
      socket.destroy();
    } finally {
      await proxy.close();
    }
  });
});
