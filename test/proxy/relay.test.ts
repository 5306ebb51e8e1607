/**
 * Transparency of the relay: the same traffic through the proxy and directly must give the same
 * results, byte for byte where the protocol is driven by hand.
 */
import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import net from 'node:net';
import tls from 'node:tls';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import QueryStream from 'pg-query-stream';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, direct, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { describeMessages, openRawSession } from './support/rawProtocol.js';

let database: TestPostgres;
let proxy: RunningProxy;

beforeAll(async () => {
  database = await startTestPostgres();
  proxy = await startTestProxy(database);
  const setup = await connected(direct(database));
  await setup.query(`
    CREATE TABLE people (id int PRIMARY KEY, name text, born date, score numeric(10,2), tags text[], data jsonb, photo bytea);
    INSERT INTO people SELECT i, 'name ' || i, date '2000-01-01' + i, i * 1.25, ARRAY['a', 'b' || i],
      jsonb_build_object('i', i), decode(lpad(to_hex(i), 8, '0'), 'hex') FROM generate_series(1, 500) i;
  `);
  await setup.end();
});

afterAll(async () => {
  await proxy?.close();
  await database?.stop();
});

/** Runs the same work on a direct client and on a proxied one; returns both results. */
async function both<T>(work: (client: pg.Client) => Promise<T>): Promise<[T, T]> {
  const directClient = await connected(direct(database));
  const proxiedClient = await connected(viaProxy(proxy));
  try {
    return [await work(directClient), await work(proxiedClient)];
  } finally {
    await directClient.end();
    await proxiedClient.end();
  }
}

function comparable(result: pg.QueryResult): unknown {
  return { command: result.command, rowCount: result.rowCount, rows: result.rows, fields: result.fields };
}

async function rawBoth(messages: Buffer[], readyCount: number): Promise<[string[], string[]]> {
  const directSession = await openRawSession(direct(database));
  const proxiedSession = await openRawSession(viaProxy(proxy));
  try {
    directSession.send(messages);
    proxiedSession.send(messages);
    return [
      describeMessages(await directSession.readUntilReady(readyCount)),
      describeMessages(await proxiedSession.readUntilReady(readyCount)),
    ];
  } finally {
    directSession.close();
    proxiedSession.close();
  }
}

describe('simple query protocol', () => {
  it('returns the same rows, fields and command tags', async () => {
    const [a, b] = await both(async (client) => comparable(await client.query('SELECT * FROM people ORDER BY id')));
    expect(b).toEqual(a);
  });

  it('returns every result of a multi-statement query', async () => {
    const [a, b] = await both(async (client) => {
      const results = (await client.query('SELECT 1 AS one; SELECT name FROM people WHERE id < 3 ORDER BY id; CREATE TEMP TABLE t (x int); INSERT INTO t VALUES (1), (2)')) as unknown as pg.QueryResult[];
      return results.map(comparable);
    });
    expect(b).toEqual(a);
  });

  it('relays errors and the transaction status byte for byte', async () => {
    const [a, b] = await rawBoth([
      serialize.query('BEGIN'),
      serialize.query('SELECT 1; SELECT 1/0; SELECT 2'),
      serialize.query('SELECT 3'),
      serialize.query('ROLLBACK'),
      serialize.query(''),
      serialize.query("SET application_name = 'relay test'"),
    ], 6);
    expect(b).toEqual(a);
    expect(b.filter((m) => m.startsWith('Z')).map((m) => m[2])).toEqual(['T', 'E', 'E', 'I', 'I', 'I']);
    expect(b.some((m) => m.startsWith('S application_name'))).toBe(true);
  });
});

describe('extended query protocol', () => {
  it('binds parameters and returns text results', async () => {
    const [a, b] = await both(async (client) => comparable(await client.query('SELECT id, name, born, score, tags FROM people WHERE id = ANY($1) ORDER BY id', [[1, 7, 300]])));
    expect(b).toEqual(a);
  });

  it('returns binary results unchanged', async () => {
    const [a, b] = await both(async (client) => {
      // `binary` exists in pg but not in its types.
      const config = { text: 'SELECT id, born, score, data, photo FROM people WHERE id <= $1 ORDER BY id', values: [50], binary: true } as pg.QueryConfig;
      return comparable(await client.query(config));
    });
    expect(b).toEqual(a);
    const [rawA, rawB] = await rawBoth([
      serialize.parse({ text: 'SELECT id, born, score, tags, data, photo FROM people ORDER BY id' }),
      serialize.bind({ binary: true }),
      serialize.execute(),
      serialize.sync(),
    ], 1);
    expect(rawB).toHaveLength(504);
    expect(rawB).toEqual(rawA);
  });

  it('reuses named prepared statements', async () => {
    const [a, b] = await both(async (client) => {
      const out: unknown[] = [];
      for (const id of [3, 4, 5]) out.push(comparable(await client.query({ name: 'by_id', text: 'SELECT name FROM people WHERE id = $1', values: [id] })));
      return out;
    });
    expect(b).toEqual(a);
  });

  it('relays a pipeline with an error in the middle byte for byte (discard until Sync)', async () => {
    const [a, b] = await rawBoth([
      serialize.parse({ name: 's1', text: 'SELECT $1::int + 1 AS n' }),
      serialize.describe({ type: 'S', name: 's1' }),
      serialize.bind({ statement: 's1', values: ['41'] }),
      serialize.describe({ type: 'P' }),
      serialize.execute(),
      serialize.sync(),
      serialize.parse({ text: 'SELEC broken' }),
      serialize.bind(),
      serialize.execute(),
      serialize.sync(),
      serialize.bind({ statement: 's1', values: ['1'], binary: true }),
      serialize.execute(),
      serialize.close({ type: 'S', name: 's1' }),
      serialize.flush(),
      serialize.sync(),
    ], 3);
    expect(b).toEqual(a);
    expect(b.map((m) => m[0]).join('')).toBe('1tT2TDCZEZ2DC3Z');
  });

  it('suspends portals at the row limit and resumes them', async () => {
    const [a, b] = await rawBoth([
      serialize.query('BEGIN'),
      serialize.parse({ text: 'SELECT id FROM people ORDER BY id LIMIT 10' }),
      serialize.bind({ portal: 'p1' }),
      serialize.execute({ portal: 'p1', rows: 4 }),
      serialize.execute({ portal: 'p1', rows: 4 }),
      serialize.execute({ portal: 'p1', rows: 4 }),
      serialize.sync(),
      serialize.query('COMMIT'),
    ], 3);
    expect(b).toEqual(a);
    expect(b.filter((m) => m[0] === 's')).toHaveLength(2);
  });

  it('streams a cursor with pg-query-stream', async () => {
    const [a, b] = await both(async (client) => {
      const rows: unknown[] = [];
      const stream = client.query(new QueryStream('SELECT id, name FROM people ORDER BY id', [], { batchSize: 37 }));
      for await (const row of stream) rows.push(row);
      return rows;
    });
    expect(b).toHaveLength(500);
    expect(b).toEqual(a);
  });
});

describe('COPY', () => {
  it('copies out the same bytes', async () => {
    const [a, b] = await both(async (client) => {
      const chunks: Buffer[] = [];
      await pipeline(client.query(copyTo('COPY people TO STDOUT WITH (FORMAT binary)')), new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk);
          done();
        },
      }));
      return Buffer.concat(chunks);
    });
    expect(b.length).toBeGreaterThan(10_000);
    expect(b.equals(a)).toBe(true);
  });

  it('copies in through the proxy', async () => {
    const client = await connected(viaProxy(proxy));
    await client.query('CREATE TABLE copied (id int, label text)');
    const lines = Array.from({ length: 20_000 }, (_, i) => `${i}\tlabel ${i}\n`);
    await pipeline(Readable.from(lines), client.query(copyFrom('COPY copied FROM STDIN')));
    const result = await client.query('SELECT count(*)::int AS n, sum(id)::bigint AS s FROM copied');
    expect(result.rows[0]).toEqual({ n: 20_000, s: String((19_999 * 20_000) / 2) });
    await client.end();
  });

  it('reports a failing COPY IN and stays usable', async () => {
    const client = await connected(viaProxy(proxy));
    await client.query('CREATE TABLE copied_bad (id int)');
    await expect(pipeline(Readable.from(['1\n', 'not a number\n']), client.query(copyFrom('COPY copied_bad FROM STDIN')))).rejects.toThrow(/invalid input syntax/);
    expect((await client.query('SELECT count(*)::int AS n FROM copied_bad')).rows[0]).toEqual({ n: 0 });
    await client.end();
  });
});

describe('COPY through the extended protocol', () => {
  it('relays COPY IN and COPY OUT started by Execute byte for byte', async () => {
    const setup = await connected(direct(database));
    await setup.query('CREATE TABLE IF NOT EXISTS copied_ext (n int)');
    await setup.end();
    const [a, b] = await rawBoth([
      serialize.query('BEGIN'),
      serialize.parse({ text: 'COPY copied_ext FROM STDIN' }),
      serialize.bind(),
      serialize.execute(),
      serialize.copyData(Buffer.from('1\n2\n')),
      serialize.copyData(Buffer.from('3\n')),
      serialize.copyDone(),
      serialize.sync(),
      serialize.parse({ text: 'COPY (SELECT n FROM copied_ext ORDER BY n) TO STDOUT' }),
      serialize.bind(),
      serialize.execute(),
      serialize.sync(),
      serialize.query('ROLLBACK'),
    ], 4);
    expect(b).toEqual(a);
    expect(b.map((m) => m[0]).join('')).toBe('CZ12GCZ12HdddcCZCZ');
  });
});

describe('asynchronous messages', () => {
  it('delivers NOTICE and NOTIFY', async () => {
    const listener = await connected(viaProxy(proxy));
    const notifier = await connected(direct(database));
    const notices: string[] = [];
    listener.on('notice', (notice) => notices.push(notice.message ?? ''));
    await listener.query('DO $$ BEGIN RAISE NOTICE $n$hello %$n$, 42; END $$');
    expect(notices).toEqual(['hello 42']);
    await listener.query('LISTEN events');
    const received = new Promise<pg.Notification>((resolve) => listener.once('notification', resolve));
    await notifier.query("NOTIFY events, 'payload é'");
    const notification = await received;
    expect(notification.channel).toBe('events');
    expect(notification.payload).toBe('payload é');
    await listener.end();
    await notifier.end();
  });
});

describe('cancel', () => {
  it('cancels a running query through the proxy-issued key', async () => {
    const client = await connected(viaProxy(proxy));
    const started = Date.now();
    const query = client.query('SELECT pg_sleep(20)');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
    const cancel = net.connect({ host: '127.0.0.1', port: proxy.port });
    cancel.end(serialize.cancel(processID, secretKey));
    await expect(query).rejects.toMatchObject({ code: '57014' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    await client.end();
  });

  it('accepts a CancelRequest sent over TLS', async () => {
    const client = await connected(viaProxy(proxy));
    const query = client.query('SELECT pg_sleep(20)');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
    const raw = net.connect({ host: '127.0.0.1', port: proxy.port });
    const sslRequest = Buffer.alloc(8);
    sslRequest.writeInt32BE(8, 0);
    sslRequest.writeInt32BE(80877103, 4);
    raw.write(sslRequest);
    await new Promise((resolve) => raw.once('data', resolve));
    const secure = tls.connect({ socket: raw, rejectUnauthorized: false });
    await new Promise((resolve) => secure.once('secureConnect', resolve));
    secure.end(serialize.cancel(processID, secretKey));
    await expect(query).rejects.toMatchObject({ code: '57014' });
    await client.end();
  });
});
