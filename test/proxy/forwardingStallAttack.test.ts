/**
 * The deferred forward and its stall (the source is not read while forwarded bytes wait in the
 * target), through a real proxy in front of a real PostgreSQL, with hand-written clients:
 * - a client flooding queries at a backend that reads nothing (pg_sleep) is itself not read on
 *   (memory stays flat: the flood backs up into the client), and a pg_terminate_backend then ends
 *   the session, gives its slot back and frees the backend;
 * - a COPY FROM STDIN faster than the server (stalls and releases many times) arrives byte for byte;
 * - a large result to a client that stops reading for a while arrives byte for byte.
 * Each runs on the native addon and on Node's streams.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import { startTestProxy } from './support/proxyHarness.js';
import { rawFrame } from './support/rawProtocol.js';
import { backendsOf, canConnect, cstring, sleep, startupPacket, useRawLoginHarness } from './support/rawLogins.js';
import { ANALYST } from './support/testAccounts.js';

const harness = useRawLoginHarness((admin) => admin.query('CREATE TABLE IF NOT EXISTS flood (n int, line text)'));
const { proxies, sockets } = harness;

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

interface RawClient {
  socket: net.Socket;
  /** Everything received since the login's ReadyForQuery. */
  received(): Buffer;
  /** Waits until `count` ReadyForQuery arrived after the login (or `ms` passed). */
  readyFor(count: number, ms: number): Promise<boolean>;
}

/** Counts ReadyForQuery frames by walking the frames (a 'Z' byte inside a row must not count). */
function readyCount(bytes: Buffer): number {
  let count = 0;
  for (let at = 0; at + 5 <= bytes.length;) {
    const length = bytes.readInt32BE(at + 1);
    if (at + 1 + length > bytes.length) break;
    if (bytes[at] === 0x5a) count++;
    at += 1 + length;
  }
  return count;
}

async function rawSession(port: number, appName: string): Promise<RawClient> {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  sockets.push(socket);
  socket.on('error', () => undefined);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(startupPacket(appName));
  for (let i = 0; i < 200 && !Buffer.concat(chunks).includes(Buffer.from('R')); i++) await sleep(10);
  socket.write(rawFrame('p', cstring(ANALYST.password)));
  let all = (): Buffer => Buffer.concat(chunks);
  for (let i = 0; i < 300 && readyCount(all()) === 0; i++) await sleep(10);
  expect(readyCount(all())).toBe(1);
  chunks.splice(0, chunks.length);
  const received = (): Buffer => {
    const joined = Buffer.concat(chunks);
    chunks.splice(0, chunks.length, joined);
    return joined;
  };
  all = received;
  return {
    socket,
    received,
    readyFor: async (count, ms) => {
      const deadline = Date.now() + ms;
      while (readyCount(received()) < count) {
        if (Date.now() > deadline || socket.destroyed) return false;
        await sleep(20);
      }
      return true;
    },
  };
}

/** Writes frames until the socket says to wait, up to `max` bytes: how many were written. */
function flood(socket: net.Socket, frame: Buffer, max: number): number {
  let written = 0;
  while (written < max) {
    written += frame.length;
    if (!socket.write(frame)) break;
  }
  return written;
}

const modes = [
  { name: 'native', nativeSocketIo: true },
  { name: 'streams', nativeSocketIo: false },
] as const;

describe.skipIf(socketAddon === undefined)('forwarding stalls through a real proxy', () => {
  for (const mode of modes) {
    it(`[${mode.name}] a client flooding a backend that reads nothing is not read on; pg_terminate_backend then ends it all`, async () => {
      const proxy = await startTestProxy(harness.database, { maxClientConnections: 1, nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const app = `flooder-${mode.name}`;
      const client = await rawSession(proxy.port, app);
      client.socket.write(rawFrame('Q', cstring('SELECT pg_sleep(60)')));
      const query = rawFrame('Q', cstring(`SELECT 1 /* ${'p'.repeat(256 * 1024)} */`));
      // Far more than the kernel buffers on the way hold: the proxy must stop reading the client.
      let written = 0;
      for (let round = 0; round < 40 && written < 256 << 20; round++) {
        written += flood(client.socket, query, 8 << 20);
        await sleep(50);
      }
      await sleep(500);
      const backedUp = client.socket.writableLength;
      // The proxy holds at most about a read or two of the flood (plus the kernel's buffers).
      expect(backedUp).toBeGreaterThan(0);
      expect(written - backedUp).toBeLessThan(48 << 20);
      expect(await backendsOf(harness.admin, app)).toBe(1);
      await harness.admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
      let closed = false;
      client.socket.once('close', () => { closed = true; });
      const deadline = Date.now() + 5_000;
      while (!closed && Date.now() < deadline) await sleep(50);
      const text = client.received().toString('latin1');
      const backends = await backendsOf(harness.admin, app);
      const slotBack = await canConnect(proxy, 3_000);
      expect({ closed, told: /57P01|08006/.test(text), backends, slotBack }).toEqual({ closed: true, told: true, backends: 0, slotBack: true });
    }, 40_000);

    it(`[${mode.name}] a COPY FROM STDIN faster than the server arrives byte for byte`, async () => {
      const proxy = await startTestProxy(harness.database, { nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const table = `copied_${mode.name}`;
      await harness.admin.query(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (n int PRIMARY KEY, line text)`);
      const client = await rawSession(proxy.port, `copier-${mode.name}`);
      client.socket.write(rawFrame('Q', cstring(`COPY ${table} FROM STDIN`)));
      for (let i = 0; i < 300 && !client.received().includes(Buffer.from('G')); i++) await sleep(10);
      const rows = 60_000;
      const lines: string[] = [];
      for (let n = 0; n < rows; n++) lines.push(`${n}\t${randomBytes(100 + (n % 200)).toString('hex')}\n`);
      // CopyData messages of odd sizes, cutting lines anywhere, written as fast as the proxy takes them.
      const stream = Buffer.from(lines.join(''));
      for (let at = 0; at < stream.length;) {
        const size = 1 + Math.floor(Math.random() * 40_000);
        if (!client.socket.write(rawFrame('d', stream.subarray(at, at + size)))) await new Promise((resolve) => client.socket.once('drain', resolve));
        at += size;
      }
      client.socket.write(rawFrame('c'));
      expect(await client.readyFor(1, 60_000)).toBe(true);
      expect(client.received().toString('latin1')).toContain(`COPY ${rows}`);
      const { rows: [digest] } = await harness.admin.query<{ n: number; sum: string }>(`SELECT count(*)::int AS n, md5(string_agg(n || E'\\t' || line || E'\\n', '' ORDER BY n)) AS sum FROM ${table}`);
      expect(digest).toEqual({ n: rows, sum: md5(lines.join('')) });
      client.socket.destroy();
    }, 90_000);

    it(`[${mode.name}] a large result to a client that stops reading for a while arrives byte for byte`, async () => {
      const proxy = await startTestProxy(harness.database, { nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const app = `slowreader-${mode.name}`;
      const client = await rawSession(proxy.port, app);
      // About 66 MB: far more than the kernel buffers between PostgreSQL and the client hold.
      const rows = 100_000;
      client.socket.pause();
      client.socket.write(rawFrame('Q', cstring(`SELECT i, repeat(md5(i::text), 20) FROM generate_series(1, ${rows}) i`)));
      await sleep(1_500); // the result backs up into the proxy, which must stop reading the server
      client.socket.resume();
      expect(await client.readyFor(1, 60_000)).toBe(true);
      const bytes = client.received();
      // The DataRows, exactly as PostgreSQL makes them.
      const expected: Buffer[] = [];
      for (let i = 1; i <= rows; i++) {
        const text = String(i);
        const value = md5(text).repeat(20);
        const body = Buffer.alloc(2 + 4 + text.length + 4 + value.length);
        body.writeInt16BE(2, 0);
        body.writeInt32BE(text.length, 2);
        body.write(text, 6, 'latin1');
        body.writeInt32BE(value.length, 6 + text.length);
        body.write(value, 10 + text.length, 'latin1');
        expected.push(rawFrame('D', body));
      }
      const rowsStart = bytes.indexOf(Buffer.from('D'), bytes.readInt32BE(1) + 1); // after the RowDescription
      const want = Buffer.concat(expected);
      const got = bytes.subarray(rowsStart, rowsStart + want.length);
      expect(got.length).toBe(want.length);
      expect(createHash('sha256').update(got).digest('hex')).toBe(createHash('sha256').update(want).digest('hex'));
      expect(bytes.subarray(rowsStart + want.length).toString('latin1')).toMatch(/^C.*SELECT 100000\0Z/s);
      client.socket.destroy();
    }, 90_000);

    it(`[${mode.name}] one 60 MB value to a client that stops reading: the server is not read on meanwhile, and the value arrives whole`, async () => {
      const proxy = await startTestProxy(harness.database, { nativeSocketIo: mode.nativeSocketIo });
      proxies.push(proxy);
      const app = `hugevalue-${mode.name}`;
      const client = await rawSession(proxy.port, app);
      const size = 60_000_000;
      client.socket.pause();
      // One DataRow streams through as it comes: every read after the first is forwarded whole.
      client.socket.write(rawFrame('Q', cstring(`SELECT repeat('x', ${size})`)));
      await sleep(2_000);
      // PostgreSQL is still blocked writing it: the proxy did not take the rest into its memory.
      const { rows: [activity] } = await harness.admin.query<{ wait: string | null }>('SELECT wait_event AS wait FROM pg_stat_activity WHERE application_name = $1', [app]);
      expect(activity?.wait).toBe('ClientWrite');
      client.socket.resume();
      expect(await client.readyFor(1, 60_000)).toBe(true);
      const bytes = client.received();
      const rowAt = bytes.readInt32BE(1) + 1; // after the RowDescription
      expect(bytes.subarray(rowAt, rowAt + 11)).toEqual(Buffer.from([0x44, ...int32(4 + 2 + 4 + size), 0, 1, ...int32(size)]));
      const value = bytes.subarray(rowAt + 11, rowAt + 11 + size);
      expect(createHash('sha256').update(value).digest('hex')).toBe(createHash('sha256').update(Buffer.alloc(size, 'x')).digest('hex'));
      expect(bytes.subarray(rowAt + 11 + size).toString('latin1')).toMatch(/^C.*SELECT 1\0Z/s);
      client.socket.destroy();
    }, 90_000);
  }
});

function int32(n: number): number[] {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(n);
  return [...bytes];
}
