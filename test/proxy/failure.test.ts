/** Failures stay contained: bad frames, vanished clients, idle sessions, slow readers. */
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { parseErrorFields } from '../../src/proxy/protocol/errorFields.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, direct, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { openRawSession, type BackendMessage } from './support/rawProtocol.js';

let database: TestPostgres;
let proxy: RunningProxy;
const MAX_MESSAGE_BYTES = 1 << 20;

beforeAll(async () => {
  database = await startTestPostgres();
  proxy = await startTestProxy(database, { maxMessageBytes: MAX_MESSAGE_BYTES });
});

afterAll(async () => {
  await proxy?.close();
  await database?.stop();
});

function frame(type: string, length: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(length, 1);
  return Buffer.concat([header, body]);
}

function fatalOf(messages: BackendMessage[]): Record<string, string> {
  const error = messages.find((message) => message.type === 'E');
  return error ? Object.fromEntries(parseErrorFields(error.body)) : {};
}

async function backendsNamed(name: string): Promise<number> {
  const client = await connected(direct(database));
  const result = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [name]);
  await client.end();
  return (result.rows[0] as { n: number }).n;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('malformed and oversized frames', () => {
  const cases: Array<[string, Buffer, RegExp]> = [
    ['an unknown message type', frame('y', 4), /^invalid frontend message type 121$/],
    ['a length below 4', frame('Q', 2), /^invalid message length 2 /],
    ['a Query over maxMessageBytes', frame('Q', MAX_MESSAGE_BYTES + 100), /^invalid message length /],
    ['a Sync over the small-message limit', frame('S', 20_000), /^invalid message length /],
    ['a password message after startup', frame('p', 9, Buffer.from('secret\0\0\0')), /^invalid frontend message type 112$/],
  ];
  it.each(cases)('answers %s with a FATAL 08P01 and closes only that connection', async (_name, bytes, message) => {
    const bystander = await connected(viaProxy(proxy));
    const session = await openRawSession(viaProxy(proxy, { application_name: 'malformed' }));
    session.send([serialize.query('SELECT 1'), bytes]);
    const messages = await session.readUntilClosed();
    expect(messages.map((m) => m.type).join('')).toBe('TDCZE');
    expect(fatalOf(messages)).toMatchObject({ S: 'FATAL', C: '08P01', M: expect.stringMatching(message) });
    expect((await bystander.query('SELECT 42 AS still')).rows).toEqual([{ still: 42 }]);
    await bystander.end();
    await eventually(async () => (await backendsNamed('malformed')) === 0);
  });
});

describe('vanishing clients', () => {
  it('closes the upstream connection of a client that vanishes mid-query', async () => {
    const session = await openRawSession(viaProxy(proxy, { application_name: 'vanishes busy' }));
    session.send(serialize.query('SELECT pg_sleep(60)'));
    await eventually(async () => (await backendsNamed('vanishes busy')) === 1);
    session.close();
    await eventually(async () => (await backendsNamed('vanishes busy')) === 0, 3_000);
  });

  it('closes the upstream connection of a client that vanishes while idle', async () => {
    const session = await openRawSession(viaProxy(proxy, { application_name: 'vanishes idle' }));
    await eventually(async () => (await backendsNamed('vanishes idle')) === 1);
    session.close();
    await eventually(async () => (await backendsNamed('vanishes idle')) === 0, 3_000);
  });
});

describe('the server ends a session', () => {
  it('relays the FATAL of a backend terminated by an administrator, then closes the client', async () => {
    const client = await connected(viaProxy(proxy, { application_name: 'terminated' }));
    const errors: Array<{ code?: string }> = [];
    client.on('error', (error) => errors.push(error as { code?: string }));
    const ended = new Promise((resolve) => client.once('end', resolve));
    const admin = await connected(direct(database));
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'terminated'");
    await admin.end();
    await ended;
    expect(errors[0]).toMatchObject({ code: '57P01' });
  });
});

describe('idle timeout', () => {
  it('ends idle sessions with 57P05 but not busy ones', async () => {
    const running = await startTestProxy(database, { idleTimeoutSeconds: 1 });
    try {
      const idle = await openRawSession(viaProxy(running));
      const busy = await connected(viaProxy(running));
      const started = Date.now();
      const slow = busy.query('SELECT pg_sleep(2) AS slept');
      const messages = await idle.readUntilClosed(5_000);
      expect(fatalOf(messages)).toMatchObject({ S: 'FATAL', C: '57P05', M: 'terminating connection due to idle-session timeout' });
      expect(Date.now() - started).toBeLessThan(4_000); // 1 s idle, checked every 250 ms; slack for a busy CI
      await expect(slow).resolves.toMatchObject({ rowCount: 1 });
      await busy.end();
    } finally {
      await running.close();
    }
  });
});

describe('backpressure', () => {
  it('pauses the upstream while the client does not read, and memory stays flat', async () => {
    const session = await openRawSession(viaProxy(proxy));
    const { socket } = session;
    socket.pause();
    session.send(serialize.query("SELECT i, repeat('x', 300) FROM generate_series(1, 250000) i")); // ~80 MB of rows
    const before = process.memoryUsage().arrayBuffers;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const grown = process.memoryUsage().arrayBuffers - before;
    expect(grown).toBeLessThan(24 << 20);
    const counting = session.countUntilReady(1, 60_000);
    socket.resume();
    const counts = await counting;
    expect(counts.get('D')).toBe(250_000);
    session.close();
  });
});
