/**
 * In-place reads through a real proxy: the addon's shared read buffer is scribbled over (0xEE) the
 * moment each DATA event's JavaScript returns (what the addon forwards from it, once the loop has
 * moved on), so any view of it kept past the call forwards or hands a hook garbage. Sessions of a plaintext role (app) and a masked role (support) run at once,
 * with large results, pipelines and the extended protocol; each must see exactly its own bytes.
 */
import { serialize } from 'pg-protocol';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { socketAddon } from '../../../src/proxy/nativeSockets/socketAddon.js';
import { NativeSocket } from '../../../src/proxy/nativeSockets/nativeSocket.js';
import type { InPlaceReader, RelaySocket } from '../../../src/proxy/session/relaySocket.js';
import { openRawSession } from '../support/rawProtocol.js';
import { APP, SUPPORT, useDirectHarness } from './support/policyHarness.js';
import { messageTexts } from './support/rawAttempts.js';

const counts = { inPlace: 0, owned: 0, scribbled: 0, forwarded: 0, corkedPastCall: 0 };
const live = new Set<NativeSocket>();
if (socketAddon !== undefined) {
  const addon = socketAddon;
  const adopt = addon.adopt.bind(addon);
  const shared = addon.readBuffer();
  const slot = addon.forwardSlot();
  const forwardSlot = new Int32Array(slot.buffer, slot.byteOffset, 1);
  addon.adopt = (fd, onEvent) => adopt(fd, (value, kind) => {
    onEvent(value, kind);
    for (const socket of live) if ((socket as unknown as { corks: number }).corks !== 0) counts.corkedPastCall++;
    if (kind === undefined) {
      // What the addon is to forward once the callback is done (its nextTicks and promise reactions
      // included) is scribbled once the loop has moved on; the rest at once.
      const forward = forwardSlot[0] as number;
      shared.fill(0xee, forward, value);
      if (forward > 0) {
        counts.forwarded++;
        setImmediate(() => shared.fill(0xee, 0, forward));
      }
      counts.scribbled++;
    }
  });
  const readInPlace = NativeSocket.prototype.readInPlace;
  NativeSocket.prototype.readInPlace = function (this: NativeSocket, reader: InPlaceReader | undefined, target?: RelaySocket): void {
    if (reader === undefined) live.delete(this);
    else live.add(this);
    readInPlace.call(this, reader === undefined ? undefined : (chunk, owned) => {
      counts[owned ? 'owned' : 'inPlace']++;
      reader(chunk, owned);
    }, target);
  };
}

const h = useDirectHarness();
const ROWS = 4000;
const phoneOf = (i: number): string => `+1 555 ${String(100 + (i % 900)).padStart(3, '0')} ${String(i).padStart(4, '0')}`;
const noteOf = (i: number): string => `note-${i}-${'n'.repeat(i % 200)}`;

beforeAll(async () => {
  await h.direct.query('DELETE FROM customers');
  const values: string[] = [];
  const params: string[] = [];
  for (let i = 1; i <= ROWS; i++) {
    values.push(`($${params.length + 1}::int, $${params.length + 2}, $${params.length + 3})`);
    params.push(String(i), phoneOf(i), noteOf(i));
    if (values.length === 500 || i === ROWS) {
      await h.direct.query(`INSERT INTO customers (id, phone, note) VALUES ${values.join(',')}`, params);
      values.length = 0;
      params.length = 0;
    }
  }
}, 60_000);

const Q = 'SELECT id, phone, note FROM customers WHERE id <= 4000 ORDER BY id';

async function rows(client: pg.Client, extended: boolean): Promise<string> {
  const result = extended
    ? await client.query({ text: 'SELECT id, phone, note FROM customers WHERE id > $1 AND id <= 4000 ORDER BY id', values: [0], rowMode: 'array' })
    : await client.query({ text: Q, rowMode: 'array' });
  return JSON.stringify(result.rows);
}

describe.skipIf(socketAddon === undefined)('in-place reads with the shared buffer scribbled after each read', () => {
  it('plaintext and masked sessions at once each see their own rows, unchanged', async () => {
    const expectedApp = JSON.stringify((await h.direct.query({ text: Q, rowMode: 'array' })).rows);
    const lone = await h.harness.connect(SUPPORT);
    const expectedSupport = await rows(lone, false);
    expect(await rows(lone, true)).toBe(expectedSupport);
    await lone.end();
    expect(expectedSupport).not.toContain(phoneOf(1234));
    const before = { ...counts };
    const clients = await Promise.all([APP, SUPPORT, APP, SUPPORT, APP, SUPPORT].map((account) => h.harness.connect(account)));
    const runs = clients.map(async (client, index) => {
      const expected = index % 2 === 0 ? expectedApp : expectedSupport;
      for (let i = 0; i < 6; i++) {
        const got = await Promise.all([rows(client, i % 2 === 1), rows(client, false), rows(client, true)]);
        for (const one of got) expect(one === expected, `session ${index} round ${i}`).toBe(true);
      }
    });
    await Promise.all(runs);
    await Promise.all(clients.map((client) => client.end()));
    expect(counts.inPlace - before.inPlace).toBeGreaterThan(100);
    expect(counts.scribbled - before.scribbled).toBeGreaterThan(100);
    expect(counts.forwarded - before.forwarded).toBeGreaterThan(100);
  }, 180_000);

  it('raw pipelines of both protocols from both roles, interleaved', async () => {
    const sessions = await Promise.all([APP, SUPPORT, APP, SUPPORT].map((account) => openRawSession(h.harness.via(account))));
    const pipeline = [
      serialize.query(Q), serialize.parse({ text: Q }), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({}),
      serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync(), serialize.query(`${Q}; ${Q}`),
    ];
    const seen: string[][] = [[], [], [], []];
    for (let round = 0; round < 3; round++) {
      sessions.forEach((s) => s.send(pipeline));
      const texts = await Promise.all(sessions.map(async (s) => messageTexts(await s.readUntilReady(3, 60_000))));
      texts.forEach((text, i) => seen[i]?.push(text));
    }
    sessions.forEach((s) => s.close());
    for (let i = 0; i < 4; i++) {
      const texts = seen[i] as string[];
      // Every round the same bytes, and five results of ROWS rows each.
      expect(new Set(texts).size).toBe(1);
      expect((texts[0] as string).match(/^D /gm)?.length).toBe(5 * ROWS);
      if (i % 2 === 1) expect(texts[0]).not.toContain(phoneOf(1234));
      else expect(texts[0]).toContain(phoneOf(1234));
      expect(texts[0]).not.toContain('\xee\xee\xee\xee');
    }
  }, 180_000);
});

describe.skipIf(socketAddon === undefined)('in-place reads, write path and backpressure', () => {
  it('protected parameters written by app sessions while support sessions read: stored and read back as sent', async () => {
    await h.direct.query('DELETE FROM customers WHERE id > 100000');
    const writers = await Promise.all([APP, APP, APP].map((account) => h.harness.connect(account)));
    const readers = await Promise.all([SUPPORT, SUPPORT].map((account) => h.harness.connect(account)));
    const expectedSupport = await rows(readers[0] as pg.Client, false);
    let reading = true;
    const readLoops = readers.map(async (client) => {
      while (reading) expect((await rows(client, reading)) === expectedSupport).toBe(true);
    });
    const ssnOf = (i: number): string => `${String(100 + (i % 800)).padStart(3, '0')}-${String(10 + (i % 89)).padStart(2, '0')}-${String(1000 + i).slice(-4)}`;
    const emailOf = (i: number): string => `writer${i}x${'w'.repeat(i % 40)}@example.com`;
    await Promise.all(writers.map(async (client, w) => {
      for (let batch = 0; batch < 8; batch++) {
        const ids = Array.from({ length: 25 }, (_, k) => 100001 + w * 1000 + batch * 25 + k);
        await Promise.all(ids.map((id) => client.query('INSERT INTO customers (id, ssn, email, note) VALUES ($1, $2, $3, $4)', [id, ssnOf(id), emailOf(id), `n${'z'.repeat(id % 5000)}`])));
      }
    }));
    reading = false;
    await Promise.all(readLoops);
    const back = await (writers[0] as pg.Client).query<{ id: number; ssn: string; email: string; note: string }>('SELECT id, ssn, email, note FROM customers WHERE id > 100000 ORDER BY id');
    expect(back.rows).toHaveLength(3 * 8 * 25);
    for (const row of back.rows) {
      expect(row.ssn).toBe(ssnOf(row.id));
      expect(row.email).toBe(emailOf(row.id));
      expect(row.note).toBe(`n${'z'.repeat(row.id % 5000)}`);
    }
    // Stored protected: the plaintext SSN is not what the table holds.
    const stored = await h.direct.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE id > 100000 AND ssn = ANY($1)', [back.rows.map((row) => row.ssn)]);
    expect(stored.rows[0]?.n).toBe(0);
    await Promise.all([...writers, ...readers].map((client) => client.end()));
    await h.direct.query('DELETE FROM customers WHERE id > 100000');
  }, 180_000);

  it('a client that stops reading (backpressure) while others run, then reads on: the same bytes', async () => {
    const slow = await openRawSession(h.harness.via(SUPPORT));
    const fast = await Promise.all([APP, SUPPORT].map((account) => h.harness.connect(account)));
    const expectedSupport = await rows(fast[1] as pg.Client, false);
    const expectedApp = JSON.stringify((await h.direct.query({ text: Q, rowMode: 'array' })).rows);
    slow.socket.pause();
    slow.send(Array.from({ length: 6 }, () => serialize.query(Q)));
    for (let i = 0; i < 4; i++) {
      const [a, s] = await Promise.all([rows(fast[0] as pg.Client, i % 2 === 0), rows(fast[1] as pg.Client, i % 2 === 1)]);
      expect(a === expectedApp).toBe(true);
      expect(s === expectedSupport).toBe(true);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    slow.socket.resume();
    const text = messageTexts(await slow.readUntilReady(6, 60_000));
    const perQuery = text.split(/^Z .*$/m).filter((part) => part.includes('D '));
    expect(perQuery).toHaveLength(6);
    expect(new Set(perQuery.map((part) => part.replace(/^\n/, ''))).size).toBe(1);
    expect(text.match(/^D /gm)?.length).toBe(6 * ROWS);
    expect(text).not.toContain(phoneOf(1234));
    slow.close();
    await Promise.all(fast.map((client) => client.end()));
  }, 180_000);
});

describe.skipIf(socketAddon === undefined)('in-place reads, COPY and failures', () => {
  it('COPY FROM STDIN of protected values by app, in many reads, while support reads: stored as sent', async () => {
    const ssnOf = (i: number): string => `${String(100 + (i % 800)).padStart(3, '0')}-${String(10 + (i % 89)).padStart(2, '0')}-${String(1000 + i).slice(-4)}`;
    const copier = await openRawSession(h.harness.via(APP));
    const reader = await h.harness.connect(SUPPORT);
    const expectedSupport = await rows(reader, false);
    let reading = true;
    const loop = (async () => { while (reading) expect((await rows(reader, true)) === expectedSupport).toBe(true); })();
    const lines = Array.from({ length: 3000 }, (_, k) => `${200001 + k}\t${ssnOf(200001 + k)}\t${'c'.repeat(k % 700)}\n`).join('');
    const data = Buffer.from(lines);
    const pieces: Buffer[] = [serialize.query('COPY customers (id, ssn, note) FROM STDIN')];
    for (let at = 0; at < data.length; at += 1777) pieces.push(serialize.copyData(data.subarray(at, at + 1777)));
    pieces.push(serialize.copyDone());
    copier.send(pieces);
    const seen = messageTexts(await copier.readUntilReady(1, 60_000));
    expect(seen).toContain('COPY 3000');
    reading = false;
    await loop;
    copier.close();
    const app = await h.harness.connect(APP);
    const back = await app.query<{ id: number; ssn: string; note: string }>('SELECT id, ssn, note FROM customers WHERE id > 200000 ORDER BY id');
    expect(back.rows).toHaveLength(3000);
    for (const row of back.rows) {
      expect(row.ssn).toBe(ssnOf(row.id));
      expect(row.note).toBe('c'.repeat((row.id - 200001) % 700));
    }
    await app.end();
    await reader.end();
    await h.direct.query('DELETE FROM customers WHERE id > 200000');
  }, 180_000);

  it('an invalid message after pipelined queries in one read: replies relayed in full, then the FATAL', async () => {
    for (let i = 0; i < 5; i++) {
      const s = await openRawSession(h.harness.via(i % 2 === 0 ? SUPPORT : APP));
      s.send([serialize.query(Q), serialize.query(Q), Buffer.from([0x01, 0, 0, 0, 4])]);
      const text = messageTexts(await s.readUntilClosed(20_000));
      expect(text.match(/^D /gm)?.length).toBe(2 * ROWS);
      expect(text).toContain('C08P01');
      if (i % 2 === 0) expect(text).not.toContain(phoneOf(1234));
      s.close();
    }
  }, 120_000);

  it('no native socket stayed corked past a read', () => {
    expect(counts.corkedPastCall).toBe(0);
  });
});
