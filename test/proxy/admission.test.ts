/**
 * Connections before and during login: a peer that is no PostgreSQL client is closed without a
 * word (as PostgreSQL does), a client that leaves at once does not get a FATAL, idle logins cannot
 * hold the slots of real clients, and a client refused for a limit gets an ErrorResponse (53300).
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, connectError, startTestProxy, viaProxy } from './support/proxyHarness.js';

let database: TestPostgres;
const proxies: RunningProxy[] = [];
const sockets: net.Socket[] = [];

beforeAll(async () => {
  database = await startTestPostgres();
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await database?.stop();
});

async function proxyWith(overrides: Parameters<typeof startTestProxy>[1] = {}): Promise<RunningProxy> {
  const proxy = await startTestProxy(database, overrides);
  proxies.push(proxy);
  return proxy;
}

/** Sends `bytes`, then collects what comes back until the proxy closes the socket (or `ms` pass). */
async function exchange(port: number, bytes: Buffer, ms = 3000): Promise<{ closed: boolean; received: Buffer }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(bytes);
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { closed, received: Buffer.concat(chunks) };
}

function startupPacket(user: string): Buffer {
  const body = Buffer.from(`user\0${user}\0database\0app\0\0`);
  const packet = Buffer.alloc(8 + body.length);
  packet.writeInt32BE(packet.length, 0);
  packet.writeInt32BE(196608, 4);
  body.copy(packet, 8);
  return packet;
}

/** Opens a socket that sends its startup packet and then never answers the password request. */
async function idleLogin(port: number): Promise<net.Socket> {
  const socket = net.connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(startupPacket('analyst@example.com'));
  await new Promise((resolve) => socket.once('data', resolve)); // the password request
  return socket;
}

describe('before the startup packet', () => {
  it('closes silently on bytes that are no PostgreSQL startup (HTTP, Terminate, garbage)', async () => {
    const proxy = await proxyWith();
    for (const bytes of [Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), Buffer.from([0x58, 0, 0, 0, 4]), Buffer.from([0, 0, 0, 1, 2, 3, 4, 5])]) {
      const { closed, received } = await exchange(proxy.port, bytes);
      expect(closed).toBe(true);
      expect(received.length).toBe(0);
    }
    // And serves the next client as usual.
    const client = await connected(viaProxy(proxy));
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    await client.end();
  });

  it('a client that ends before its login completes gets no FATAL (node-postgres\' quick disconnect)', async () => {
    const proxy = await proxyWith();
    const errors: Error[] = [];
    for (let i = 0; i < 5; i++) {
      const client = new pg.Client(viaProxy(proxy));
      client.on('error', (error) => errors.push(error));
      void client.connect().catch(() => undefined);
      await Promise.race([client.end().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toEqual([]);
    // A Terminate instead of the password: closed without an error.
    const { closed, received } = await exchange(proxy.port, Buffer.concat([startupPacket('analyst@example.com'), Buffer.from([0x58, 0, 0, 0, 4])]));
    expect(closed).toBe(true);
    expect(received.includes(Buffer.from('SFATAL'))).toBe(false);
  });
});

describe('logins are counted apart from sessions', () => {
  it('idle logins do not hold the slots of real clients', async () => {
    const proxy = await proxyWith({ maxClientConnections: 1, maxPendingLogins: 10 });
    for (let i = 0; i < 3; i++) await idleLogin(proxy.port);
    const client = await connected(viaProxy(proxy));
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    // The one session slot is taken: a second client is refused with an ErrorResponse, not a bare close.
    const refused = await connectError(viaProxy(proxy));
    expect(refused).toMatchObject({ code: '53300', message: 'sorry, too many clients already' });
    await client.end();
  });

  it('past maxPendingLogins, a new connection is answered 53300 naming the setting', async () => {
    const proxy = await proxyWith({ maxPendingLogins: 2 });
    const idle = [await idleLogin(proxy.port), await idleLogin(proxy.port)];
    const refused = await connectError(viaProxy(proxy));
    expect(refused.code).toBe('53300');
    expect(refused.message).toBe('sorry, too many connections are logging in already');
    for (const socket of idle) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const client = await connected(viaProxy(proxy));
    await client.end();
  });

  it('closes a login that takes longer than loginTimeoutSeconds', async () => {
    const proxy = await proxyWith({ loginTimeoutSeconds: 1 });
    const socket = await idleLogin(proxy.port);
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThan(500);
    expect(waited).toBeLessThan(5000);
  });
});
