/** The upstream side: the proxy's own login (SCRAM, md5, password, trust), TLS, and an unreachable server. */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate, type RunningProxy, type UpstreamOptions } from '../../src/proxy/index.js';
import { freePort, startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, connectError, startTestProxy, viaProxy } from './support/proxyHarness.js';

let database: TestPostgres;
const proxies: RunningProxy[] = [];

beforeAll(async () => {
  database = await startTestPostgres();
});

afterAll(async () => {
  await Promise.all(proxies.map((running) => running.close()));
  await database?.stop();
});

async function proxyTo(upstream: Partial<UpstreamOptions>, databases?: Record<string, string>): Promise<RunningProxy> {
  const base = { host: database.host, port: database.port, user: database.user, password: database.password, database: database.database, sslmode: 'disable' as const };
  const running = await startTestProxy(database, { upstream: { ...base, ...upstream }, ...(databases ? { databases } : {}) });
  proxies.push(running);
  return running;
}

async function upstreamFacts(proxy: RunningProxy): Promise<{ who: string; ssl: boolean }> {
  const client = await connected(viaProxy(proxy));
  const result = await client.query<{ who: string; ssl: boolean }>('SELECT current_user AS who, coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl');
  await client.end();
  return result.rows[0] as { who: string; ssl: boolean };
}


describe('upstream authentication', () => {
  it('logs in with SCRAM-SHA-256', async () => {
    expect(await upstreamFacts(await proxyTo({}))).toEqual({ who: database.user, ssl: false });
  });

  it('logs in with md5, cleartext password and trust', async (context) => {
    const { md5, cleartext, trust } = database.roles;
    if (!md5 || !cleartext || !trust) return context.skip('a server whose pg_hba the tests do not control');
    for (const role of [md5, cleartext, trust]) {
      const facts = await upstreamFacts(await proxyTo({ user: role.user, password: role.password }));
      expect(facts.who).toBe(role.user);
    }
  });

  it('reports a wrong upstream password as the proxy\'s problem, not the client\'s', async () => {
    const proxy = await proxyTo({ password: 'not the password' });
    const error = await connectError(viaProxy(proxy));
    expect(error).toMatchObject({ code: '08001', message: 'the database server refused pgveil\'s login' });
  });

  it('relays the server\'s own startup errors', async () => {
    // No database map: every client database goes to upstream.database.
    const proxy = await proxyTo({ database: 'no_such_database' }, {});
    const error = await connectError(viaProxy(proxy));
    expect(error).toMatchObject({ code: '3D000', message: 'database "no_such_database" does not exist' });
  });
});

describe('upstream over a Unix-domain socket', () => {
  it('connects when the host is the socket directory, as libpq does', async (context) => {
    if (!database.socketDir) return context.skip('a server whose socket the tests cannot reach');
    const proxy = await proxyTo({ host: database.socketDir, sslmode: 'prefer' });
    const client = await connected(viaProxy(proxy));
    const result = await client.query<{ local: boolean }>('SELECT inet_server_addr() IS NULL AS local');
    expect(result.rows).toEqual([{ local: true }]);
    await client.end();
  });
});

describe('upstream TLS', () => {
  it('encrypts with sslmode require and verify-full', async (context) => {
    if (!database.tlsCa) return context.skip('a server without TLS');
    expect(await upstreamFacts(await proxyTo({ sslmode: 'require' }))).toEqual({ who: database.user, ssl: true });
    expect(await upstreamFacts(await proxyTo({ sslmode: 'prefer' }))).toEqual({ who: database.user, ssl: true });
    expect(await upstreamFacts(await proxyTo({ sslmode: 'verify-full', ca: database.tlsCa }))).toEqual({ who: database.user, ssl: true });
  });

  it('refuses a server whose certificate does not verify', async (context) => {
    if (!database.tlsCa) return context.skip('a server without TLS');
    const otherCa = generateSelfSignedCertificate().cert;
    const proxy = await proxyTo({ sslmode: 'verify-full', ca: otherCa });
    const error = await connectError(viaProxy(proxy));
    expect(error).toMatchObject({ code: '08001', message: 'pgveil cannot connect to the database server' });
    expect(error.detail).toMatch(/^TLS: /);
  });
});

describe('an unreachable server', () => {
  it('gives a clear FATAL while it is down and serves again as soon as it is back', async () => {
    // A forwarder stands in for the server's network address, so "down" and "back" are one call each.
    const port = await freePort();
    const sockets = new Set<net.Socket>();
    const forwarder = net.createServer((socket) => {
      const upstream = net.connect({ host: database.host, port: database.port });
      for (const s of [socket, upstream]) {
        sockets.add(s);
        s.on('error', () => socket.destroy());
        s.on('close', () => sockets.delete(s));
      }
      socket.pipe(upstream).pipe(socket);
    });
    const listen = (): Promise<void> => new Promise((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
    const proxy = await proxyTo({ port });

    const error = await connectError(viaProxy(proxy));
    expect(error).toMatchObject({ code: '08001', message: 'pgveil cannot connect to the database server', detail: 'ECONNREFUSED' });

    await listen();
    const client = await connected(viaProxy(proxy));
    expect((await client.query('SELECT 1 AS up')).rows).toEqual([{ up: 1 }]);

    // The server goes away under a running session: the client is told, the proxy carries on.
    const closedForwarder = new Promise((resolve) => forwarder.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closedForwarder;
    await expect(client.query('SELECT 2')).rejects.toThrow();
    expect((await connectError(viaProxy(proxy))).code).toBe('08001');

    await listen();
    const again = await connected(viaProxy(proxy));
    expect((await again.query('SELECT 3 AS back')).rows).toEqual([{ back: 3 }]);
    await again.end();
    await new Promise((resolve) => forwarder.close(resolve));
    for (const socket of sockets) socket.destroy();
  });
});
