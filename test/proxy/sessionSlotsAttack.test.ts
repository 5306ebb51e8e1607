/**
 * A session's admission slot (maxClientConnections) and its sockets are given back whatever way its
 * client goes: leaving while its password is checked, half-closing with results unread, resetting
 * while both directions are backed up, or left behind by a backend that was terminated while it
 * read nothing; TLS sessions too. Each case runs on the native socket addon and on Node's streams.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { AccountAuthenticator } from '../../src/auth/accountAuthenticator.js';
import { socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import { connected, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { rawFrame } from './support/rawProtocol.js';
import { backendsOf, canConnect, cstring, sleep, startupPacket, useRawLoginHarness } from './support/rawLogins.js';
import { ANALYST, testAuthenticator } from './support/testAccounts.js';

const harness = useRawLoginHarness();
const { proxies, sockets } = harness;


/** A hand-written client: connected and waiting for the password request. */
async function rawLogin(port: number, appName: string): Promise<{ socket: net.Socket; received: () => Buffer }> {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  sockets.push(socket);
  socket.on('error', () => undefined);
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => { received = Buffer.concat([received, chunk]); });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(startupPacket(appName));
  for (let i = 0; i < 200 && !received.includes(Buffer.from('R')); i++) await sleep(10);
  return { socket, received: () => received };
}

const modes = [
  { name: 'native', nativeSocketIo: true },
  { name: 'streams', nativeSocketIo: false },
] as const;

describe.skipIf(socketAddon === undefined)('admission slots and sockets given back', () => {
  for (const mode of modes) {
    it(`[${mode.name}] a client leaving while its password is checked gives its admission slot back`, async () => {
      // The password check takes a while (scrypt at a production cost does): the client leaves meanwhile.
      const base = await testAuthenticator();
      const slow: AccountAuthenticator = {
        authenticateDbUser: async (email, secret, client) => {
          await sleep(300);
          return base.authenticateDbUser(email, secret, client);
        },
        stillAuthorises: (account) => base.stillAuthorises(account),
        onAccountsChanged: (listener) => base.onAccountsChanged(listener),
      };
      const proxy = await startTestProxy(harness.database, { maxClientConnections: 1, authenticator: slow, nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const { socket } = await rawLogin(proxy.port, `leaver-${mode.name}`);
      socket.write(rawFrame('p', cstring(ANALYST.password)));
      await sleep(50);
      socket.destroy(); // gone before the password check ends
      await sleep(1_500);
      // Nobody is connected any more: the one slot is free again.
      expect(await canConnect(proxy, 3_000)).toBe(true);
    }, 20_000);

    it(`[${mode.name}] a client that half-closes with results unread gives its slot back and lets proxy.close() finish`, async () => {
      const proxy = await startTestProxy(harness.database, { maxClientConnections: 1, nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const { socket, received } = await rawLogin(proxy.port, `halfclose-${mode.name}`);
      socket.write(rawFrame('p', cstring(ANALYST.password)));
      for (let i = 0; i < 200 && !received().includes(Buffer.from('Z')); i++) await sleep(10);
      socket.pause(); // reads nothing more
      socket.write(rawFrame('Q', cstring("SELECT repeat('x', 1000) FROM generate_series(1, 100000)")));
      await sleep(500);
      socket.end(); // FIN: the proxy sees its client gone, cancels and closes upstream
      await sleep(1_000);
      expect(await backendsOf(harness.admin, `halfclose-${mode.name}`)).toBe(0);
      const slotBack = await canConnect(proxy, 3_000);
      let closed = false;
      void proxy.close().then(() => { closed = true; });
      await sleep(4_000);
      socket.destroy();
      expect({ slotBack, closed }).toEqual({ slotBack: true, closed: true });
    }, 30_000);

    it(`[${mode.name}] a client reset while both directions are backed up is noticed (session ends, backend freed)`, async () => {
      const proxy = await startTestProxy(harness.database, { maxClientConnections: 1, nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const { socket, received } = await rawLogin(proxy.port, `resetter-${mode.name}`);
      socket.write(rawFrame('p', cstring(ANALYST.password)));
      for (let i = 0; i < 200 && !received().includes(Buffer.from('Z')); i++) await sleep(10);
      socket.pause(); // reads nothing more: the results back up to PostgreSQL, which stops reading
      const pad = 'x'.repeat(100_000);
      const query = rawFrame('Q', cstring(`SELECT repeat('x', 1000) FROM generate_series(1, 20000) /* ${pad} */`));
      for (let i = 0; i < 200; i++) socket.write(query); // 20 MB of queries: the proxy's client socket is paused, bytes held
      await sleep(2_000);
      expect(await backendsOf(harness.admin, `resetter-${mode.name}`)).toBe(1);
      socket.resetAndDestroy();
      await sleep(2_000);
      const backends = await backendsOf(harness.admin, `resetter-${mode.name}`);
      const slotBack = await canConnect(proxy, 3_000);
      expect({ backends, slotBack }).toEqual({ backends: 0, slotBack: true });
    }, 30_000);

    it(`[${mode.name}] an upstream reset while the client is not reading ends the session`, async () => {
      const proxy = await startTestProxy(harness.database, { maxClientConnections: 1, nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const { socket, received } = await rawLogin(proxy.port, `slowreader-${mode.name}`);
      socket.write(rawFrame('p', cstring(ANALYST.password)));
      for (let i = 0; i < 200 && !received().includes(Buffer.from('Z')); i++) await sleep(10);
      socket.pause();
      const pad = 'x'.repeat(100_000);
      const query = rawFrame('Q', cstring(`SELECT repeat('x', 1000) FROM generate_series(1, 20000) /* ${pad} */`));
      for (let i = 0; i < 200; i++) socket.write(query);
      await sleep(2_000);
      await harness.admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [`slowreader-${mode.name}`]);
      let closed = false;
      socket.once('close', () => { closed = true; });
      await sleep(4_000);
      const backends = await backendsOf(harness.admin, `slowreader-${mode.name}`);
      socket.destroy();
      expect({ backends, clientClosed: closed }).toEqual({ backends: 0, clientClosed: true });
    }, 30_000);
  }

  it('TLS sessions give their slot back when they end', async () => {
    const proxy = await startTestProxy(harness.database, { maxClientConnections: 1 });
    proxies.push(proxy);
    for (let i = 0; i < 3; i++) {
      const client = await connected(viaProxy(proxy, { ssl: { rejectUnauthorized: false } }));
      await client.query('SELECT 1');
      await client.end();
      await sleep(200);
    }
    expect(await canConnect(proxy, 2_000)).toBe(true);
  }, 20_000);
});
