/** Binary parameters and results, COPY in and out, statements executed without a Describe, psql. */
import { execFile } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { openRawSession } from '../support/rawProtocol.js';
import { ANALYST, APP, SUPPORT, useAppHarness } from './support/policyHarness.js';

const shared = useAppHarness();

/** Binary wire values, built by hand as a driver in binary mode sends them. */
const binary = {
  date(iso: string): Buffer {
    const days = Math.round((Date.parse(`${iso}T00:00:00Z`) - Date.UTC(2000, 0, 1)) / 86_400_000);
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(days);
    return bytes;
  },
  uuid: (text: string): Buffer => Buffer.from(text.replace(/-/g, ''), 'hex'),
  inet: (text: string): Buffer => Buffer.from([2, 32, 0, 4, ...text.split('.').map(Number)]),
};

describe('binary format', () => {
  it('protects binary parameters and reveals binary results', async () => {
    await shared.app.query({
      text: "INSERT INTO customers (full_name, ssn, birth_date, ip_address, external_id, note) VALUES ($1, $2, $3, $4, $5, 'bin')",
      values: [Buffer.from('Erin Brown'), Buffer.from('111-22-3333'), binary.date('1985-02-03'), binary.inet('192.168.7.9'), binary.uuid('0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b')],
    });
    const stored = (await shared.direct.query("SELECT full_name, ssn, birth_date::text AS b, host(ip_address) AS ip, external_id::text AS u FROM customers WHERE note = 'bin'")).rows[0];
    expect(stored).toBeDefined();
    expect(stored.ssn).not.toBe('111-22-3333');
    expect(stored.b).not.toBe('1985-02-03');
    expect(stored.ip).not.toBe('192.168.7.9');
    expect(stored.u).not.toBe('0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b');
    const text = (await shared.app.query("SELECT full_name, ssn, birth_date::text AS b, host(ip_address) AS ip, external_id::text AS u FROM customers WHERE note = 'bin'")).rows[0];
    // Casts have no table OID: they show what is stored (tokens), never plaintext.
    expect(text.b).toBe(stored.b);
    // pg decodes every DataRow field as UTF-8 text: binary results are read off the wire here.
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ text: 'SELECT full_name, ssn, birth_date, ip_address, external_id FROM customers WHERE note = $1' }),
      serialize.bind({ values: ['bin'], binary: true }), serialize.describe({ type: 'P' }), serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    const dataRow = messages.find((m) => m.type === 'D');
    expect(dataRow).toBeDefined();
    const fields: Buffer[] = [];
    let pos = 2;
    const body = dataRow?.body ?? Buffer.alloc(0);
    for (let i = 0; i < body.readInt16BE(0); i++) {
      const length = body.readInt32BE(pos);
      fields.push(body.subarray(pos + 4, pos + 4 + length));
      pos += 4 + length;
    }
    expect(fields[0]?.toString()).toBe('Erin Brown');
    expect(fields[1]?.toString()).toBe('111-22-3333');
    expect(fields[2]).toEqual(binary.date('1985-02-03'));
    expect(fields[3]).toEqual(binary.inet('192.168.7.9'));
    expect(fields[4]).toEqual(binary.uuid('0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b'));
    const search = await shared.app.query({ text: 'SELECT note FROM customers WHERE ssn = $1 AND birth_date = $2', values: [Buffer.from('111-22-3333'), binary.date('1985-02-03')] });
    expect(search.rows).toEqual([{ note: 'bin' }]);
  });

  it('refuses a binary value that is not of its kind (22P02) and writes nothing', async () => {
    const error = await shared.app.query({ text: "INSERT INTO customers (ssn, note) VALUES ($1, 'badbin')", values: [Buffer.from('nope')] }).catch((e: unknown) => e as { code: string });
    expect(error).toMatchObject({ code: '22P02' });
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'badbin'")).rows[0].n).toBe(0);
  });
});

describe('COPY', () => {
  it('protects COPY FROM STDIN rows in text and CSV, rows split across CopyData', async () => {
    const text = shared.app.query(copyFrom("COPY customers (full_name, ssn, note) FROM STDIN"));
    await pipeline(Readable.from([Buffer.from('Fay Wong\t222-33-'), Buffer.from('4444\tcopy\nGus Hale\t333-44-5555\tcopy\n')]), text);
    const csv = shared.app.query(copyFrom("COPY customers (full_name, ssn, note) FROM STDIN WITH (FORMAT csv, HEADER true)"));
    await pipeline(Readable.from(['full_name,ssn,note\n"Hal, Jr.",444-55-6666,copy\n', 'Ida Moss,"555-66-7777",copy\n']), csv);
    const stored = (await shared.direct.query("SELECT full_name, ssn FROM customers WHERE note = 'copy' ORDER BY id")).rows;
    expect(stored).toHaveLength(4);
    for (const row of stored) {
      expect(['222-33-4444', '333-44-5555', '444-55-6666', '555-66-7777']).not.toContain(row.ssn);
      expect(['Fay Wong', 'Gus Hale', 'Hal, Jr.', 'Ida Moss']).not.toContain(row.full_name);
    }
    const plain = (await shared.app.query("SELECT full_name, ssn FROM customers WHERE note = 'copy' ORDER BY id")).rows;
    expect(plain).toEqual([
      { full_name: 'Fay Wong', ssn: '222-33-4444' }, { full_name: 'Gus Hale', ssn: '333-44-5555' },
      { full_name: 'Hal, Jr.', ssn: '444-55-6666' }, { full_name: 'Ida Moss', ssn: '555-66-7777' },
    ]);
  });

  it('reveals COPY TO STDOUT rows per role', async () => {
    const collect = async (client: pg.Client, sql: string): Promise<string> => {
      const chunks: Buffer[] = [];
      await pipeline(client.query(copyTo(sql)), new Writable({ write(chunk: Buffer, _e, done) { chunks.push(chunk); done(); } }));
      return Buffer.concat(chunks).toString();
    };
    expect(await collect(shared.app, "COPY (SELECT 1) TO STDOUT")).toBe('1\n');
    const out = await collect(shared.app, 'COPY customers (full_name, ssn) TO STDOUT WITH (FORMAT csv)');
    expect(out).toContain('Fay Wong,222-33-4444');
    expect(out).toContain('"Hal, Jr.",444-55-6666');
    const support = await shared.harness.connect(SUPPORT);
    const masked = await collect(support, 'COPY customers (ssn) TO STDOUT');
    expect(masked).toContain('***-**-4444');
    const error = await collect(support, 'COPY (SELECT ssn FROM customers) TO STDOUT').catch((e: unknown) => e as { code: string });
    expect(error).toMatchObject({ code: '0A000' });
    await support.end();
  });

  it('refuses an empty binary COPY stream and rows not of their kind, writing nothing', async () => {
    const binaryCopy = await pipeline(Readable.from([Buffer.alloc(0)]), shared.app.query(copyFrom('COPY customers (ssn) FROM STDIN WITH (FORMAT binary)'))).catch((e: unknown) => e as { code: string });
    expect(binaryCopy).toMatchObject({ code: '22P04' });
    const bad = await pipeline(Readable.from(['666-77-8888\tbadcopy\nnot-an-ssn\tbadcopy\n']), shared.app.query(copyFrom('COPY customers (ssn, note) FROM STDIN'))).catch((e: unknown) => e as { code: string });
    expect(bad).toMatchObject({ code: '22P02' });
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'badcopy'")).rows[0].n).toBe(0);
    expect((await shared.app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });
});

describe('extended protocol without a Describe before Execute', () => {
  it('describes the portal itself so the rows are revealed', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ name: 's1', text: "SELECT ssn FROM customers WHERE full_name = $1" }),
      serialize.describe({ type: 'S', name: 's1' }),
      serialize.sync(),
    ]);
    await session.readUntilReady(1);
    session.send([serialize.bind({ statement: 's1', values: ['Fay Wong'] }), serialize.execute(), serialize.sync()]);
    const described = await session.readUntilReady(1);
    expect(described.map((m) => m.type).join('')).toBe('2DCZ');
    const row = described.find((m) => m.type === 'D');
    expect(row?.body.subarray(6).toString()).toBe('222-33-4444');
    session.send([serialize.parse({ text: "SELECT ssn FROM customers WHERE full_name = 'Gus Hale'" }), serialize.bind(), serialize.execute(), serialize.sync()]);
    const undescribed = await session.readUntilReady(1);
    expect(undescribed.map((m) => m.type).join('')).toBe('12DCZ');
    expect(undescribed.find((m) => m.type === 'D')?.body.subarray(6).toString()).toBe('333-44-5555');
    session.close();
  });
});

describe('pipelines', () => {
  it('refuses a statement in the middle of a pipeline like PostgreSQL fails one: the batch rolls back', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ text: "INSERT INTO customers (ssn, note) VALUES ($1, 'pipe')" }), serialize.bind({ values: ['999-00-1111'] }), serialize.execute(),
      serialize.parse({ text: "INSERT INTO customers (ssn, note) VALUES (lower($1), 'pipe')" }), serialize.bind({ values: ['999-00-1112'] }), serialize.execute(),
      serialize.sync(),
      serialize.parse({ text: 'SELECT 7' }), serialize.bind(), serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(2);
    session.close();
    expect(messages.map((m) => m.type).join('')).toBe('12CEZ12DCZ');
    expect(messages.find((m) => m.type === 'E')?.body.toString()).toMatch(/customers\.ssn/);
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'pipe'")).rows[0].n).toBe(0);
  });

  it('rewrites COPY data a client sends before the CopyInResponse', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.query("COPY customers (ssn, note) FROM STDIN"),
      serialize.copyData(Buffer.from('888-99-0000\tearly\n')), serialize.copyDone(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    expect(messages.map((m) => m.type).join('')).toBe('GCZ');
    const stored = (await shared.direct.query("SELECT ssn FROM customers WHERE note = 'early'")).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].ssn).not.toBe('888-99-0000');
    expect((await shared.app.query("SELECT ssn FROM customers WHERE note = 'early'")).rows).toEqual([{ ssn: '888-99-0000' }]);
  });

  it('protects = ANY($1) with a binary array parameter', async () => {
    const element = (text: string): Buffer => Buffer.from(text);
    const array = Buffer.concat([
      Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1]),
      ...['222-33-4444', '333-44-5555'].flatMap((v) => [Buffer.from([0, 0, 0, v.length]), element(v)]),
    ]);
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ text: 'SELECT count(*)::int FROM customers WHERE ssn = ANY($1)', types: [1009] }),
      serialize.bind({ values: [array], valueMapper: () => array }), serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    expect(messages.find((m) => m.type === 'D')?.body.subarray(6).toString()).toBe('2');
  });
});

describe('psql', () => {
  it('writes and reads through the proxy', async () => {
    const env = { ...process.env, PGPASSWORD: APP.password };
    const args = ['-h', '127.0.0.1', '-p', String(shared.harness.proxy.port), '-U', APP.email, '-d', shared.harness.database.database, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1'];
    const run = promisify(execFile);
    await run('psql', [...args, '-c', "INSERT INTO customers (full_name, ssn, note) VALUES ('Jo Park', '777-88-9999', 'psql')"], { env });
    const { stdout } = await run('psql', [...args, '-c', "SELECT full_name || '|' || ssn FROM customers WHERE note = 'psql'"], { env });
    // The concatenation has no table OID: what psql shows is the stored tokens.
    expect(stdout).not.toContain('777-88-9999');
    const plain = await run('psql', [...args, '-c', "SELECT full_name, ssn FROM customers WHERE note = 'psql'"], { env });
    expect(plain.stdout.trim()).toBe('Jo Park|777-88-9999');
    const analyst = await run('psql', [...args.map((a) => (a === APP.email ? ANALYST.email : a)), '-c', "SELECT ssn FROM customers WHERE note = 'psql'"], { env: { ...env, PGPASSWORD: ANALYST.password } });
    expect(analyst.stdout.trim()).not.toBe('777-88-9999');
  });
});
