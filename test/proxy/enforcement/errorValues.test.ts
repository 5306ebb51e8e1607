/**
 * What a restricted session gets of the server's errors and notices: the fields that may quote a
 * stored value withheld, the SQLSTATE and the rest kept. Frames built here as the server sends them.
 */
import { describe, expect, it } from 'vitest';
import { FrameWriter } from '../../../src/proxy/protocol/frameWriter.js';
import { withholdErrorValues } from '../../../src/proxy/enforcement/readPath/errorValues.js';

type Fields = Record<string, string>;

function frame(type: 'E' | 'N', fields: Fields): Buffer {
  const writer = new FrameWriter(type, 256);
  for (const [code, value] of Object.entries(fields)) writer.byte(code.charCodeAt(0)).cString(value);
  return writer.byte(0).finish();
}

function fieldsOf(buffer: Buffer): Fields {
  const out: Fields = {};
  let at = 5;
  while (buffer[at] !== 0) {
    const end = buffer.indexOf(0, at + 1);
    out[String.fromCharCode(buffer[at] as number)] = buffer.toString('utf8', at + 1, end);
    at = end + 1;
  }
  return out;
}

/** The fields the session gets. */
function received(type: 'E' | 'N', fields: Fields): Fields {
  const sent = frame(type, fields);
  const out = withholdErrorValues(sent);
  return fieldsOf(out ?? sent);
}

const PHONE = '+1 555 010 4477';

describe('withholdErrorValues', () => {
  it('withholds a DETAIL whatever the error', () => {
    const out = received('E', { S: 'ERROR', C: '23505', M: 'duplicate key value violates unique constraint "c_phone"', D: `Key (phone)=(${PHONE}) already exists.` });
    expect(out['C']).toBe('23505');
    expect(out['D']).toMatch(/^pgveil withheld the detail of this error: .*get it whole\)$/);
    expect(out['M']).toMatch(/^pgveil withheld the server's message for SQLSTATE 23505/);
  });

  it('keeps the message of an error about the client\'s own text (a position into it)', () => {
    const out = received('E', { S: 'ERROR', C: '42P01', M: 'relation "nosuch" does not exist', P: '15' });
    expect(out).toEqual({ S: 'ERROR', C: '42P01', M: 'relation "nosuch" does not exist', P: '15' });
  });

  it('withholds a message without a position whose SQLSTATE may name a value', () => {
    const out = received('E', { S: 'ERROR', C: '42P01', M: `relation "${PHONE}" does not exist` });
    expect(out['M']).not.toContain(PHONE);
  });

  it('withholds what a function raised, whatever SQLSTATE it chose (a CONTEXT names the function)', () => {
    for (const type of ['E', 'N'] as const) {
      const out = received(type, { S: 'ERROR', C: '42501', M: `access denied for ${PHONE}`, W: 'PL/pgSQL function check_access(text) line 1 at RAISE' });
      expect(out['C']).toBe('42501');
      expect(out['M']).not.toContain(PHONE);
      expect(out['W']).toBeUndefined();
    }
  });

  it('keeps a protocol error COPY raised, whose CONTEXT names the table and line only', () => {
    const fields = { S: 'FATAL', C: '08P01', M: 'unexpected message type 0x51 during COPY from stdin', W: 'COPY customers, line 1' };
    expect(received('E', fields)).toEqual(fields);
  });

  it('withholds a COPY error whose CONTEXT quotes what it read, or that a trigger raised during the COPY', () => {
    const quoted = received('E', { S: 'ERROR', C: '42P01', M: `relation "${PHONE}" does not exist`, W: `COPY t, line 1, column r: "${PHONE}"` });
    expect(JSON.stringify(quoted)).not.toContain(PHONE);
    const trigger = received('E', { S: 'ERROR', C: '25000', M: `state ${PHONE}`, W: 'PL/pgSQL function f() line 1 at RAISE\nCOPY customers, line 1' });
    expect(JSON.stringify(trigger)).not.toContain(PHONE);
  });

  it('leaves alone what names no value and comes from no code (nothing to withhold)', () => {
    expect(withholdErrorValues(frame('E', { S: 'ERROR', C: '25P02', M: 'current transaction is aborted' }))).toBeUndefined();
  });
});
