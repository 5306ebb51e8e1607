/**
 * The frames pgveil writes, checked against node-postgres' own serializer where it writes the same
 * message, and against pgveil's readers otherwise.
 */
import { serialize } from 'pg-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseErrorFields } from '../../src/proxy/protocol/errorFields.js';
import { FrameWriter } from '../../src/proxy/protocol/frameWriter.js';
import {
  commandTagStartsWith, dataRowFields, forEachFrame, ProtocolViolation, readBind, readBindTarget, readExecutePortal, readParameterDescription, readParse,
  readRowDescription, readTarget,
} from '../../src/proxy/protocol/messageReaders.js';
import {
  bindMessage, cancelRequest, commandCompleteMessage, copyDataMessage, copyFailMessage, dataRowMessage, describeMessage,
  errorResponse, parameterDescriptionMessage, parseMessage, queryMessage, readyForQuery, rowDescriptionMessage, startupMessage, terminate,
} from '../../src/proxy/protocol/messages.js';

describe('FrameWriter', () => {
  it('writes the type byte and a length word that counts itself and the body', () => {
    const frame = new FrameWriter('Z', 6).byte(0x49).finish();
    expect([...frame]).toEqual([0x5a, 0, 0, 0, 5, 0x49]);
  });

  it('grows past its capacity without losing what was written', () => {
    const long = 'é'.repeat(50_000);
    const frame = new FrameWriter('Q', 5).int16(-2).cString(long).int32(-1).finish();
    expect(frame.readInt32BE(1)).toBe(frame.length - 1);
    expect(frame.readInt16BE(5)).toBe(-2);
    expect(frame.toString('utf8', 7, frame.length - 5)).toBe(long);
    expect(frame.readInt32BE(frame.length - 4)).toBe(-1);
  });

  it('writes untyped packets with the length word first', () => {
    expect([...new FrameWriter(null).int32(80877103).finish()]).toEqual([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
  });
});

describe('client → server messages', () => {
  it('are byte for byte what node-postgres writes', () => {
    expect(queryMessage("SELECT 'ü'")).toEqual(serialize.query("SELECT 'ü'"));
    expect(parseMessage({ name: 's1', sql: 'SELECT $1', paramTypes: [25, 0] })).toEqual(serialize.parse({ name: 's1', text: 'SELECT $1', types: [25, 0] }));
    expect(describeMessage('P', 'p1')).toEqual(serialize.describe({ type: 'P', name: 'p1' }));
    expect(describeMessage('S', '')).toEqual(serialize.describe({ type: 'S' }));
    expect(copyDataMessage(Buffer.from('1\tx\n'))).toEqual(serialize.copyData(Buffer.from('1\tx\n')));
    expect(copyFailMessage('no')).toEqual(serialize.copyFail('no'));
    expect(terminate()).toEqual(serialize.end());
    expect(bindMessage({ portal: 'p', statement: 's', paramFormats: [0, 0], values: [Buffer.from('a'), null], resultFormats: [0] }))
      .toEqual(serialize.bind({ portal: 'p', statement: 's', values: ['a', null] }));
  });

  it('read back as written', () => {
    const bind = { portal: '', statement: 'ins', paramFormats: [1], values: [Buffer.from([0, 0, 0, 7]), null, Buffer.alloc(0)], resultFormats: [0, 1] };
    expect(readBind(bindMessage(bind))).toEqual(bind);
    expect(readParse(parseMessage({ name: '', sql: 'SELECT 1', paramTypes: [4294967295] }))).toEqual({ name: '', sql: 'SELECT 1', paramTypes: [4294967295] });
    const startup = startupMessage(new Map([['user', 'u'], ['database', 'd']]));
    expect(startup.readInt32BE(0)).toBe(startup.length);
    expect(startup.readInt32BE(4)).toBe(196608);
    expect(startup.toString('utf8', 8)).toBe('user\0u\0database\0d\0\0');
    const cancel = cancelRequest(42, Buffer.from([1, 2, 3, 4]));
    expect([...cancel]).toEqual([0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 42, 1, 2, 3, 4]);
  });
});

describe('readBindTarget', () => {
  const bindArbitrary = fc.record({
    portal: fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => text.replace(/\0/g, '')).filter((text) => Buffer.byteLength(text) <= 63)),
    statement: fc.oneof(fc.constant(''), fc.string({ maxLength: 12 }).map((text) => text.replace(/\0/g, ''))),
    paramFormats: fc.array(fc.constantFrom(0, 1), { maxLength: 4 }),
    values: fc.array(fc.option(fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)), { nil: null }), { maxLength: 6 }),
    resultFormats: fc.array(fc.constantFrom(0, 1), { maxLength: 4 }),
  });

  it('reads counts of 32768 and more as PostgreSQL does, unsigned', () => {
    const wide = { portal: 'p', statement: 's', paramFormats: new Array<number>(40_000).fill(1), values: new Array<Buffer | null>(40_000).fill(null), resultFormats: new Array<number>(33_000).fill(1) };
    wide.values[0] = Buffer.from('first');
    const frame = bindMessage(wide);
    expect(frame.readUInt16BE(9)).toBe(40_000);
    expect(readBind(frame)).toEqual(wide);
    expect(readBindTarget(frame)).toEqual({ portal: 'p', statement: 's', resultFormats: wide.resultFormats });
    const types = new Array<number>(40_000).fill(25);
    expect(readParse(parseMessage({ name: '', sql: 'SELECT 1', paramTypes: types })).paramTypes).toEqual(types);
    expect(readParameterDescription(parameterDescriptionMessage(types))).toEqual(types);
  });

  it('reads the names and result formats readBind reads, and refuses the same truncated frames', () => {
    fc.assert(fc.property(bindArbitrary, fc.nat(), (bind, cut) => {
      const frame = bindMessage(bind);
      const { portal, statement, resultFormats } = readBind(frame);
      expect(readBindTarget(frame)).toEqual({ portal, statement, resultFormats });
      const truncated = frame.subarray(0, 5 + (cut % (frame.length - 5)));
      let full: unknown;
      let target: unknown;
      try { readBind(truncated); } catch (error) { full = error; }
      try { readBindTarget(truncated); } catch (error) { target = error; }
      if (full !== undefined) expect(target).toBeDefined();
    }), { numRuns: 300 });
  });
});

describe('statement and portal names', () => {
  it('read alike however they follow one another', () => {
    const names = fc.array(fc.constantFrom('s1', 's2', 'S1', 's1x', 'ü', 'x'.repeat(63), 'é'), { minLength: 1, maxLength: 12 });
    fc.assert(fc.property(names, (sequence) => {
      for (const name of sequence) expect(readBindTarget(bindMessage({ portal: name, statement: name, paramFormats: [], values: [], resultFormats: [] }))).toMatchObject({ portal: name, statement: name });
    }));
  });

  it('are refused past 63 bytes, where PostgreSQL stops telling them apart', () => {
    const bind = (statement: string): Buffer => bindMessage({ portal: '', statement, paramFormats: [], values: [], resultFormats: [] });
    expect(readBindTarget(bind('a'.repeat(63))).statement).toBe('a'.repeat(63));
    expect(() => readBindTarget(bind(`${'a'.repeat(63)}X`))).toThrow(ProtocolViolation);
    expect(() => readBindTarget(bind(`${'é'.repeat(31)}x`))).not.toThrow();
    expect(() => readBindTarget(bind('é'.repeat(32)))).toThrow(/longer than 63 bytes/);
    expect(() => readParse(parseMessage({ name: 'p'.repeat(64), sql: 'SELECT 1', paramTypes: [] }))).toThrow(ProtocolViolation);
    expect(() => readTarget(describeMessage('P', 'p'.repeat(64)))).toThrow(ProtocolViolation);
    expect(() => readExecutePortal(Buffer.concat([Buffer.from([0x45, 0, 0, 0, 73]), Buffer.from('p'.repeat(64)), Buffer.from([0, 0, 0, 0, 0])]))).toThrow(ProtocolViolation);
  });

  it('refuse invalid UTF-8 even right after a valid name read', () => {
    const valid = Buffer.from('ü');
    expect(readBindTarget(bindMessage({ portal: '', statement: 'ü', paramFormats: [], values: [], resultFormats: [] })).statement).toBe('ü');
    const invalid = Buffer.from([valid[0] as number]);
    const frame = Buffer.concat([Buffer.from([0x42, 0, 0, 0, 0, 0]), invalid, Buffer.from([0, 0, 0, 0, 0, 0, 0])]);
    frame.writeInt32BE(frame.length - 1, 1);
    expect(() => readBindTarget(frame)).toThrow(/valid UTF-8/);
  });
});

describe('commandTagStartsWith', () => {
  it('answers as a whole-word prefix match on the decoded tag would', () => {
    const words = ['CREATE', 'ALTER', 'DROP', 'SECURITY LABEL'];
    const wordsPattern = /^(CREATE|ALTER|DROP|SECURITY LABEL)\b/;
    const tag = fc.oneof(
      fc.constantFrom('CREATE TABLE', 'CREATED', 'CREATE', 'ALTER_X', 'ALTER9', 'DROP', 'DROPS', 'SECURITY LABEL', 'SECURITY LABELS', 'SELECT 1', 'INSERT 0 1', '', 'CREATEé', 'DROP-x'),
      fc.tuple(fc.constantFrom(...words, 'SEL', ''), fc.string({ maxLength: 6 })).map(([word, rest]) => `${word}${rest}`.replace(/\0/g, '')),
    );
    fc.assert(fc.property(tag, (text) => {
      expect(commandTagStartsWith(commandCompleteMessage(text), words)).toBe(wordsPattern.test(text));
    }), { numRuns: 500 });
  });
});

describe('server → client messages', () => {
  it('read back as written', () => {
    const fields = [
      { name: 'ssn', tableOid: 3_000_000_000, attnum: 2, typeOid: 25, typmod: -1, format: 0 },
      { name: 'n', tableOid: 0, attnum: 0, typeOid: 1700, typmod: 655366, format: 1 },
    ];
    expect(readRowDescription(rowDescriptionMessage(fields))).toEqual(fields);
    expect(readParameterDescription(parameterDescriptionMessage([25, 4294967295]))).toEqual([25, 4294967295]);
    const row = dataRowMessage([Buffer.from('ab'), null, Buffer.alloc(0)]);
    expect(row.readInt32BE(1)).toBe(row.length - 1);
    expect(dataRowFields(row).map((range) => (range === null ? null : row.toString('utf8', range[0], range[1])))).toEqual(['ab', null, '']);
    const error = errorResponse({ severity: 'ERROR', code: '0A000', message: 'refused', hint: 'set x' });
    expect(Object.fromEntries(parseErrorFields(error.subarray(5)))).toEqual({ S: 'ERROR', V: 'ERROR', C: '0A000', M: 'refused', H: 'set x' });
    const types: string[] = [];
    forEachFrame(Buffer.concat([commandCompleteMessage('SELECT 1'), readyForQuery('T')]), (type, first) => types.push(`${String.fromCharCode(type)}${String.fromCharCode(first)}`));
    expect(types).toEqual(['CS', 'ZT']);
  });
});
