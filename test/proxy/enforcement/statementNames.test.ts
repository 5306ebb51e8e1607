/**
 * Statement and portal names are how pgveil knows which plan a Bind runs: two different names must
 * never look alike to it. A name that is not valid UTF-8 (which a lenient decoder would fold into
 * U+FFFD, together with every other invalid byte) ends the session with 08P01 before anything runs.
 */
import { serialize } from 'pg-protocol';
import { expect, it } from 'vitest';
import { int16Bytes as int16, int32Bytes as int32, openRawSession, rawFrame as frame, type BackendMessage } from '../support/rawProtocol.js';
import { APP, useAppHarness } from './support/policyHarness.js';

const shared = useAppHarness();

const cstring = (bytes: Buffer): Buffer => Buffer.concat([bytes, Buffer.from([0])]);

/** A Bind of one text value to the statement whose name is these exact bytes. */
function bindTo(statementName: Buffer, value: string): Buffer {
  const valueBytes = Buffer.from(value);
  return frame('B', cstring(Buffer.alloc(0)), cstring(statementName), int16(0), int16(1), int32(valueBytes.length), valueBytes, int16(0));
}

function errors(messages: BackendMessage[]): string[] {
  return messages.filter((m) => m.type === 'E').map((m) => m.body.toString('utf8'));
}

async function storedPlaintext(ssn: string): Promise<number> {
  return (await shared.direct.query('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', [ssn])).rows[0].n as number;
}

it('runs a statement with a valid non-ASCII name, protecting its values', async () => {
  const session = await openRawSession(shared.harness.via(APP));
  try {
    session.send([serialize.parse({ name: 'ÿ', text: 'INSERT INTO customers (ssn, note) VALUES ($1, \'named\')' }), serialize.sync()]);
    expect(errors(await session.readUntilReady())).toEqual([]);
    session.send([bindTo(Buffer.from('ÿ'), '234-56-7890'), serialize.execute(), serialize.sync()]);
    expect(errors(await session.readUntilReady())).toEqual([]);
    expect(await storedPlaintext('234-56-7890')).toBe(0);
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'named'")).rows[0].n).toBe(1);
  } finally {
    session.close();
  }
});

it('ends the session with 08P01 when a name is not UTF-8, so no Bind can run a statement pgveil takes for another', async () => {
  const session = await openRawSession(shared.harness.via(APP));
  try {
    session.send([serialize.parse({ name: 'ÿ', text: 'INSERT INTO customers (ssn, note) VALUES ($1, \'forged\')' }), serialize.sync()]);
    expect(errors(await session.readUntilReady())).toEqual([]);
    // In LATIN1 the byte FF is the server's 'ÿ', the protected INSERT above; a lenient decoder
    // reads both FE and FF as U+FFFD, and would take FF for the harmless statement named FE.
    session.send([serialize.query("SET client_encoding TO 'LATIN1'")]);
    await session.readUntilReady();
    session.send([frame('P', cstring(Buffer.from([0xfe])), cstring(Buffer.from('SELECT $1::text')), int16(0)), serialize.sync()]);
    session.send([bindTo(Buffer.from([0xff]), '345-67-8901'), serialize.execute(), serialize.sync()]);
    const messages = await session.readUntilClosed(5_000);
    expect(errors(messages).join('\n')).toMatch(/08P01[\s\S]*names must be valid UTF-8/);
  } finally {
    session.close();
  }
  expect(await storedPlaintext('345-67-8901')).toBe(0);
  expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'forged'")).rows[0].n).toBe(0);
});

it('refuses a name past 63 bytes, which PostgreSQL would take for another sharing its first 63', async () => {
  const base = 'a'.repeat(63);
  const session = await openRawSession(shared.harness.via(APP));
  try {
    // With whole names, pgveil would bind `…X` with the plan of `SELECT $1::text` while the server,
    // which closed `…X` when told to close `…Y` and then prepared the INSERT as `…Y`, runs the INSERT.
    session.send([serialize.parse({ name: `${base}X`, text: 'SELECT $1::text' }), serialize.sync()]);
    const messages = await session.readUntilClosed();
    expect(messages.map((m) => m.type)).toEqual(['E']);
    expect(errors(messages)[0]).toMatch(/SFATAL.*C08P01.*longer than 63 bytes are refused/s);
  } finally {
    session.close();
  }
  // A name of 63 bytes runs as any other, its values protected.
  const next = await openRawSession(shared.harness.via(APP));
  try {
    next.send([serialize.parse({ name: base, text: "INSERT INTO customers (ssn, note) VALUES ($1, 'long name')" }), serialize.sync()]);
    expect(errors(await next.readUntilReady())).toEqual([]);
    next.send([bindTo(Buffer.from(base), '345-67-8901'), serialize.execute(), serialize.sync()]);
    expect(errors(await next.readUntilReady())).toEqual([]);
    expect(await storedPlaintext('345-67-8901')).toBe(0);
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'long name'")).rows[0].n).toBe(1);
  } finally {
    next.close();
  }
});

it('tells apart names that differ only in a leading byte-order mark, so a Bind runs the plan of the statement the server runs', async () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const marked = Buffer.concat([bom, Buffer.from('s')]);
  const session = await openRawSession(shared.harness.via(APP));
  try {
    // The protected INSERT named U+FEFF "s", then a harmless statement named "s": a decoder that
    // drops the mark would file both under "s" and bind the INSERT with the SELECT's plan.
    session.send([
      frame('P', cstring(marked), cstring(Buffer.from("INSERT INTO customers (ssn, note) VALUES ($1, 'marked name')")), int16(0)),
      serialize.parse({ name: 's', text: 'SELECT $1::text' }),
      serialize.sync(),
    ]);
    expect(errors(await session.readUntilReady())).toEqual([]);
    session.send([bindTo(marked, '456-78-9012'), serialize.execute(), serialize.sync()]);
    expect(errors(await session.readUntilReady())).toEqual([]);
  } finally {
    session.close();
  }
  expect(await storedPlaintext('456-78-9012')).toBe(0);
  expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'marked name'")).rows[0].n).toBe(1);
});
