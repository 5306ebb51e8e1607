/**
 * Client bytes through the real proxy, whatever their chunking: each read of the client socket
 * lands in one reused buffer (src/proxy/reusedReadBuffer.ts) and what the relay keeps of it must
 * be a copy. A message cut into many tiny writes, a large pipelined burst, and TLS sessions (where
 * the TLS layer reads the socket instead) must all arrive intact.
 */
import { createHash } from 'node:crypto';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { openRawSession, type BackendMessage } from './support/rawProtocol.js';

let database: TestPostgres;
let proxy: RunningProxy;

beforeAll(async () => {
  database = await startTestPostgres();
  proxy = await startTestProxy(database);
});

afterAll(async () => {
  await proxy?.close();
  await database?.stop();
});

/** The text of each DataRow's first column. */
function firstColumns(messages: BackendMessage[]): string[] {
  return messages.filter((m) => m.type === 'D').map((m) => {
    const length = m.body.readInt32BE(2);
    return m.body.toString('utf8', 6, 6 + length);
  });
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

describe('client reads through the proxy', () => {
  it('relays messages cut into writes of a few bytes, each read on its own', async () => {
    const session = await openRawSession(viaProxy(proxy));
    try {
      const text = 'x'.repeat(3_000);
      const bytes = Buffer.concat([
        serialize.query(`SELECT md5('${text}')`),
        serialize.parse({ text: 'SELECT md5($1), $2::int + 1' }),
        serialize.bind({ values: [text, '41'] }),
        serialize.execute(),
        serialize.sync(),
      ]);
      for (let i = 0; i < bytes.length; i += 1 + (i % 7)) {
        session.socket.write(bytes.subarray(i, i + 1 + (i % 7)));
        // A turn of the loop for the proxy to read each piece apart now and then.
        if (i % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      const messages = await session.readUntilReady(2);
      expect(messages.filter((m) => m.type === 'E')).toEqual([]);
      expect(firstColumns(messages)).toEqual([md5(text), md5(text)]);
    } finally {
      session.close();
    }
  });

  it('relays a large pipelined burst in one write, in order', async () => {
    const session = await openRawSession(viaProxy(proxy));
    try {
      const queries = Array.from({ length: 2_000 }, (_, i) => serialize.query(`SELECT ${i}::text || '-${'y'.repeat(i % 300)}'`));
      const large = 'z'.repeat(2 * 1024 * 1024);
      const burst = Buffer.concat([...queries, serialize.query(`SELECT md5('${large}')`), ...queries.slice(0, 10)]);
      session.send(burst);
      const messages = await session.readUntilReady(2_011, 60_000);
      expect(messages.filter((m) => m.type === 'E')).toEqual([]);
      const expected = [
        ...queries.map((_, i) => `${i}-${'y'.repeat(i % 300)}`),
        md5(large),
        ...queries.slice(0, 10).map((_, i) => `${i}-${'y'.repeat(i % 300)}`),
      ];
      expect(firstColumns(messages)).toEqual(expected);
    } finally {
      session.close();
    }
  });

  it('serves TLS sessions, small and large messages', async () => {
    const client = await connected(viaProxy(proxy, { ssl: { rejectUnauthorized: false } }));
    try {
      const large = 'w'.repeat(1024 * 1024);
      const result = await client.query<{ hash: string; n: number }>('SELECT md5($1) AS hash, $2::int AS n', [large, 7]);
      expect(result.rows).toEqual([{ hash: md5(large), n: 7 }]);
      const encrypted = (client as unknown as { connection: { stream: { encrypted?: boolean } } }).connection.stream.encrypted;
      expect(encrypted).toBe(true);
    } finally {
      await client.end();
    }
  });
});
