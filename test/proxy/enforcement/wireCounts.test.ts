/**
 * Counts in Parse and Bind (parameter types, formats, values, result formats) are unsigned 16-bit
 * numbers to PostgreSQL. Read as signed, a count of 32768 or more looks negative: a Bind of 40000
 * values would carry none to pgveil, and its protected values would reach the table as sent.
 */
import { expect, it } from 'vitest';
import { int32Bytes as int32, openRawSession, rawFrame as frame, uint16Bytes as uint16, type BackendMessage } from '../support/rawProtocol.js';
import { APP, useAppHarness } from './support/policyHarness.js';

const shared = useAppHarness();
const COUNT = 40_000; // 0x9C40: -25536 as a signed 16-bit number

const cstring = (text: string): Buffer => Buffer.from(`${text}\0`, 'utf8');
const text = (value: string): Buffer => Buffer.concat([int32(Buffer.byteLength(value)), Buffer.from(value)]);

function errors(messages: BackendMessage[]): string[] {
  return messages.filter((m) => m.type === 'E').map((m) => m.body.toString('utf8'));
}

it('protects the values of a Bind whose counts are 32768 or more, as PostgreSQL counts them', async () => {
  const session = await openRawSession(shared.harness.via(APP));
  try {
    const types = Buffer.concat(Array.from({ length: COUNT }, () => int32(25)));
    const parse = frame('P', cstring(''), cstring("INSERT INTO customers (ssn, note) VALUES ($1, $2)"), uint16(COUNT), types);
    const nulls = Buffer.concat(Array.from({ length: COUNT - 2 }, () => int32(-1)));
    const bind = frame('B', cstring(''), cstring(''), uint16(0), uint16(COUNT), text('345-67-8901'), text('wide count'), nulls, uint16(0));
    session.send([parse, bind, frame('E', cstring(''), int32(0)), frame('S')]);
    expect(errors(await session.readUntilReady())).toEqual([]);
    expect((await shared.direct.query('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', ['345-67-8901'])).rows[0].n).toBe(0);
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'wide count'")).rows[0].n).toBe(1);
  } finally {
    session.close();
  }
});
