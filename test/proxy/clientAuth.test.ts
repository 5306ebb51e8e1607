/** The client side of the handshake: startup, TLS termination, accounts, refusals. */
import net from 'node:net';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate, type RunningProxy, type SessionContext } from '../../src/proxy/index.js';
import { HandshakeReader } from '../../src/proxy/protocol/handshakeReader.js';
import { parseErrorFields } from '../../src/proxy/protocol/errorFields.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, connectError, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { createAccountAuthenticator } from '../../src/auth/authService.js';
import { generateApiKey, hashApiKey } from '../../src/auth/apiKey.js';
import { hashPassword } from '../../src/auth/passwordHash.js';
import { Keyring } from '../../src/keys/keyring.js';
import { ADMIN, ANALYST, accountService, svcTokenFor } from './support/testAccounts.js';

let database: TestPostgres;
let proxy: RunningProxy;
const proxies: RunningProxy[] = [];
const certificate = generateSelfSignedCertificate({ altNames: ['localhost', '127.0.0.1'] });

beforeAll(async () => {
  database = await startTestPostgres();
  proxy = await startTestProxy(database, { tls: { mode: 'allow', cert: certificate.cert, key: certificate.key } });
});

afterAll(async () => {
  await Promise.all([proxy, ...proxies].map((running) => running?.close()));
  await database?.stop();
});

async function anotherProxy(overrides: Parameters<typeof startTestProxy>[1]): Promise<RunningProxy> {
  const running = await startTestProxy(database, overrides);
  proxies.push(running);
  return running;
}


/** A raw client socket with a reader of backend messages. */
async function rawSocket(port: number): Promise<{ socket: net.Socket; reader: HandshakeReader }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, reader: new HandshakeReader(socket, 1 << 20) };
}

function startupPacket(parameters: Record<string, string>, version = 196608): Buffer {
  const body = Buffer.from(`${Object.entries(parameters).map(([k, v]) => `${k}\0${v}\0`).join('')}\0`);
  const packet = Buffer.alloc(8 + body.length);
  packet.writeInt32BE(packet.length, 0);
  packet.writeInt32BE(version, 4);
  body.copy(packet, 8);
  return packet;
}

describe('accounts', () => {
  it('accepts the account password and a svc_token', async () => {
    for (const password of [ANALYST.password, await svcTokenFor(ANALYST)]) {
      const client = await connected(viaProxy(proxy, { password }));
      const result = await client.query('SELECT current_user AS who, current_database() AS db');
      expect(result.rows).toEqual([{ who: database.user, db: database.database }]);
      await client.end();
    }
  });

  it('refuses a wrong password or an unknown account with 28P01', async () => {
    for (const config of [viaProxy(proxy, { password: 'wrong' }), viaProxy(proxy, { user: 'nobody@example.com' }), viaProxy(proxy, { user: ADMIN.email, password: ANALYST.password })]) {
      const error = await connectError(config);
      expect(error.code).toBe('28P01');
      expect(error.message).toBe(`password authentication failed for user "${config.user}"`);
    }
  });

  it('after too many failures from one address, says so (28000) instead of claiming a wrong password', async () => {
    const accounts = await Promise.all([ANALYST].map(async (account) => ({
      email: account.email, passwordHash: await hashPassword(account.password, 4), apiKeyHash: hashApiKey(generateApiKey()), roles: account.roles, enabled: true,
    })));
    const throttled = await anotherProxy({
      authenticator: createAccountAuthenticator({
        accounts, keyring: new Keyring([{ version: 1, key: Buffer.alloc(32, 7) }]),
        loginRateLimit: { maxFailuresPerAccount: 2, maxFailuresPerClient: 100, windowSeconds: 60 },
      }),
    });
    for (let i = 0; i < 2; i++) expect((await connectError(viaProxy(throttled, { password: 'wrong' }))).code).toBe('28P01');
    const error = await connectError(viaProxy(throttled));
    expect(error.code).toBe('28000');
    expect(error.message).toMatch(/^too many failed logins for "analyst@example.com" from this address; retry in \d+ s$/);
    expect(error.message).not.toContain(ANALYST.password);
  });

  it('refuses an expired svc_token with 28P01', async () => {
    let now = Date.now();
    const authenticator = await accountService(() => now);
    const running = await anotherProxy({ authenticator });
    const { svcToken } = await authenticator.login(ANALYST.email, ANALYST.password);
    const client = await connected(viaProxy(running, { password: svcToken }));
    await client.end();
    now += 25 * 3600 * 1000;
    const error = await connectError(viaProxy(running, { password: svcToken }));
    expect(error).toMatchObject({ code: '28P01', message: `password authentication failed for user "${ANALYST.email}"` });
  });

  it('keeps the account and its roles for the session hooks', async () => {
    const seen: SessionContext[] = [];
    const running = await anotherProxy({
      hooks: (context) => {
        seen.push(context);
        return { frontendTypes: '', backendTypes: '', onFrontendMessage: () => undefined, onBackendMessage: () => undefined };
      },
    });
    const client = await connected(viaProxy(running));
    expect(seen.map((context) => [context.account, context.clientDatabase, context.upstreamDatabase])).toEqual([
      [{ email: ANALYST.email, roles: ANALYST.roles }, 'app', database.database],
    ]);
    await client.end();
  });

  it('refuses a database it does not map', async () => {
    const error = await connectError(viaProxy(proxy, { database: 'other' }));
    expect(error).toMatchObject({ code: '3D000', message: 'database "other" does not exist' });
  });
});

describe('startup parameters', () => {
  it('passes application_name and options upstream', async () => {
    const client = await connected(viaProxy(proxy, { application_name: 'proxied app', options: '-c search_path=custom,public -c statement_timeout=1234' }));
    const result = await client.query("SELECT current_setting('application_name') AS app, current_setting('search_path') AS path, current_setting('statement_timeout') AS timeout");
    expect(result.rows).toEqual([{ app: 'proxied app', path: 'custom,public', timeout: '1234ms' }]);
    await client.end();
  });

  it('refuses replication connections clearly', async () => {
    const { socket, reader } = await rawSocket(proxy.port);
    socket.write(startupPacket({ user: ANALYST.email, database: 'app', replication: 'database' }));
    const message = await reader.readMessage();
    expect(message.type).toBe('E');
    expect(Object.fromEntries(parseErrorFields(message.body))).toMatchObject({ S: 'FATAL', C: '0A000', M: 'pgveil does not relay replication connections' });
    socket.destroy();
  });

  it('answers GSSENCRequest with N, then serves the startup', async () => {
    const { socket, reader } = await rawSocket(proxy.port);
    const gssenc = Buffer.alloc(8);
    gssenc.writeInt32BE(8, 0);
    gssenc.writeInt32BE(80877104, 4);
    socket.write(gssenc);
    const answer = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    expect(answer.toString()).toBe('N');
    reader.detach();
    const messages = new HandshakeReader(socket, 1 << 20);
    socket.write(startupPacket({ user: ANALYST.email, database: 'app' }, (3 << 16) | 2));
    const negotiate = await messages.readMessage();
    expect(negotiate.type).toBe('v');
    expect(negotiate.body.readInt32BE(0)).toBe(3 << 16);
    const authRequest = await messages.readMessage();
    expect([authRequest.type, authRequest.body.readInt32BE(0)]).toEqual(['R', 3]);
    socket.write(serialize.password(ANALYST.password));
    const types: string[] = [];
    for (;;) {
      const message = await messages.readMessage();
      types.push(message.type);
      if (message.type === 'Z') break;
    }
    expect(types[0]).toBe('R');
    expect(types).toContain('S');
    expect(types).toContain('K');
    socket.destroy();
  });
});

describe('TLS termination', () => {
  it('serves TLS clients that verify the configured certificate', async () => {
    const client = await connected(viaProxy(proxy, { ssl: { ca: certificate.cert, servername: 'localhost' } }));
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.end();
  });

  it('generates a self-signed certificate when none is configured', async () => {
    const running = await anotherProxy({ tls: { mode: 'require' } });
    const client = await connected(viaProxy(running, { ssl: { rejectUnauthorized: false } }));
    expect((await client.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    await client.end();
  });

  it('refuses plaintext clients when TLS is required', async () => {
    const running = await anotherProxy({ tls: { mode: 'require', cert: certificate.cert, key: certificate.key } });
    const error = await connectError(viaProxy(running));
    expect(error).toMatchObject({ code: '28000', message: 'pgveil accepts only TLS connections' });
  });

  it('asks for a cleartext password over plaintext only from loopback when allowed', async () => {
    const running = await anotherProxy({ allowCleartextFromLoopback: false, tls: { mode: 'allow', cert: certificate.cert, key: certificate.key } });
    const error = await connectError(viaProxy(running));
    expect(error).toMatchObject({ code: '28000', message: 'pgveil asks for the password only over TLS' });
    const client = await connected(viaProxy(running, { ssl: { ca: certificate.cert, servername: 'localhost' } }));
    await client.end();
  });

  it('answers N to SSLRequest when TLS is disabled', async () => {
    const running = await anotherProxy({ tls: { mode: 'disable' } });
    const error = await connectError(viaProxy(running, { ssl: { rejectUnauthorized: false } }));
    expect(error.message).toMatch(/does not support SSL/);
    const client = await connected(viaProxy(running));
    await client.end();
  });
});

describe('admission', () => {
  it('refuses clients past maxClientConnections with 53300, and admits again once one leaves', async () => {
    const running = await anotherProxy({ maxClientConnections: 2 });
    const first = await connected(viaProxy(running));
    const second = await connected(viaProxy(running));
    const error = await connectError(viaProxy(running));
    expect(error).toMatchObject({ code: '53300', message: 'sorry, too many clients already' });
    await first.end();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const third = await connected(viaProxy(running));
    await Promise.all([second.end(), third.end()]);
  });

  it('ignores a CancelRequest with a wrong key', async () => {
    const client = await connected(viaProxy(proxy));
    const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
    const cancel = net.connect({ host: '127.0.0.1', port: proxy.port });
    cancel.end(serialize.cancel(processID, secretKey ^ 1));
    const query = client.query('SELECT pg_sleep(0.5) AS slept');
    await expect(query).resolves.toMatchObject({ rowCount: 1 });
    await client.end();
  });
});
