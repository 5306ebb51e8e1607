/**
 * The enforcement hooks frame by frame, with a fake session and a catalog given in memory: no
 * database and no socket, so each message handler's verdict is checked alone and fast.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'pg-protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/index.js';
import { parsePolicies, type PolicySet } from '../../../src/policy/index.js';
import type { CatalogSnapshot } from '../../../src/proxy/enforcement/catalog/catalogSnapshot.js';
import { createPolicyHooks, type PolicyHooks } from '../../../src/proxy/enforcement/index.js';
import { relationOf, snapshotOf } from './support/catalogFixtures.js';
import { deliverBackend, deliverFrontend } from './support/hookRouting.js';
import { type SessionContext, type SessionHooks } from '../../../src/proxy/session/sessionHooks.js';
import { ProtocolState } from '../../../src/proxy/session/protocolState.js';
import {
  commandCompleteMessage, copyDataMessage, dataRowMessage, errorResponse as errorResponseMessage, readyForQuery as readyForQueryMessage,
  rowDescriptionMessage, typedMessage,
} from '../../../src/proxy/protocol/messages.js';

const TEXT = 25;
const INT4 = 23;
const CUSTOMERS_OID = 16400;

const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext, support: mask } }
`;

function snapshot(): CatalogSnapshot {
  return snapshotOf([relationOf(CUSTOMERS_OID, 'public', 'customers', [
    { attnum: 1, name: 'id', typeOid: INT4, typmod: -1 },
    { attnum: 2, name: 'ssn', typeOid: TEXT, typmod: -1 },
    { attnum: 3, name: 'note', typeOid: TEXT, typmod: -1 },
  ])], { currentUser: 'pgveil', defaultSearchPath: '"$user", public' });
}

/**
 * A session as the hooks see it: its ProtocolState follows what is forwarded, as the relay's does,
 * and what the hooks answer in order is collected.
 */
interface FakeSession {
  readonly hooks: SessionHooks;
  readonly context: SessionContext;
  readonly state: ProtocolState<unknown>;
  readonly replies: Buffer[];
}

const engine = createEngine({ masterKey: randomBytes(32) });
let policies: PolicySet;
let policyHooks: PolicyHooks;

function session(roles: string[]): FakeSession {
  const replies: Buffer[] = [];
  const state = new ProtocolState<unknown>();
  const context: SessionContext = {
    account: { email: `${roles.join('-')}@example.com`, roles },
    clientDatabase: 'app', upstreamDatabase: 'app', upstreamUser: 'pgveil',
    serverParameters: new Map([['DateStyle', 'ISO, MDY'], ['client_encoding', 'UTF8'], ['search_path', '"$user", public']]),
    state,
    replies: state,
    replyInOrder: (messages) => { replies.push(messages); },
    discardUntilSync: () => undefined,
    end: () => undefined,
  };
  return { hooks: policyHooks.factory(context), context, state, replies };
}

async function front(s: FakeSession, frame: Buffer): Promise<Buffer | undefined> {
  return deliverFrontend(s.hooks, s.context, s.state, frame);
}

async function back(s: FakeSession, frame: Buffer): Promise<Buffer | undefined> {
  return deliverBackend(s.hooks, s.context, s.state, frame);
}

/** The SQL text of a Query frame. */
function queryText(frame: Buffer): string {
  expect(String.fromCharCode(frame[0] as number)).toBe('Q');
  expect(frame.readInt32BE(1)).toBe(frame.length - 1);
  return frame.toString('utf8', 5, frame.length - 1);
}

/** The SQLSTATE of the first ErrorResponse among `frames`. */
function sqlStateOf(frames: Buffer[]): string | undefined {
  for (const frame of frames) {
    if (frame[0] !== 0x45) continue;
    let at = 5;
    while (at < frame.length && frame[at] !== 0) {
      const field = String.fromCharCode(frame[at] as number);
      const end = frame.indexOf(0, at + 1);
      if (field === 'C') return frame.toString('utf8', at + 1, end);
      at = end + 1;
    }
  }
  return undefined;
}

function frame(type: string, payload: Buffer): Buffer {
  return typedMessage(type, payload);
}

function errorResponse(code: string): Buffer {
  return errorResponseMessage({ severity: 'ERROR', code, message: 'upstream error' });
}

function rowDescription(fields: { name: string; tableOid: number; attnum: number; typeOid: number }[]): Buffer {
  return rowDescriptionMessage(fields.map((field) => ({ ...field, typmod: -1, format: 0 })));
}

function dataRow(values: (string | null)[]): Buffer {
  return dataRowMessage(values.map((value) => (value === null ? null : Buffer.from(value, 'utf8'))));
}

function framesOf(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 1 + bytes.readInt32BE(at + 1)) frames.push(bytes.subarray(at, at + 1 + bytes.readInt32BE(at + 1)));
  return frames;
}

function dataRowValues(row: Buffer): (string | null)[] {
  const count = row.readInt16BE(5);
  const values: (string | null)[] = [];
  let at = 7;
  for (let i = 0; i < count; i++) {
    const length = row.readInt32BE(at);
    at += 4;
    values.push(length < 0 ? null : row.toString('utf8', at, at + length));
    if (length > 0) at += length;
  }
  return values;
}

beforeAll(async () => {
  policies = parsePolicies(POLICIES, 'policies.yaml');
  policyHooks = await createPolicyHooks({
    policies: { current: policies, onChange: () => () => undefined },
    engine,
    upstream: { host: '127.0.0.1', port: 1, user: 'pgveil', sslmode: 'disable' },
    logger: pino({ level: 'silent' }),
    catalogLoader: async () => snapshot(),
  });
});

afterAll(() => policyHooks?.close());

describe('a Query frame', () => {
  it('is forwarded with the protected literal replaced by its fpe value, and a well-formed length', async () => {
    const s = session(['app']);
    const verdict = await front(s, serialize.query("INSERT INTO customers (id, ssn, note) VALUES (1, '123-45-6789', 'kept')"));
    expect(verdict).toBeDefined();
    const sql = queryText(verdict as Buffer);
    expect(sql).not.toContain('123-45-6789');
    expect(sql).toContain("'kept'");
    expect(sql).toMatch(/VALUES \(1, '\d{3}-\d{2}-\d{4}', 'kept'\)/);
  });

  it('is forwarded unchanged (the same frame) when it touches no protected column', async () => {
    const s = session(['app']);
    const query = serialize.query("INSERT INTO customers (id, note) VALUES (2, 'plain')");
    expect(await front(s, query)).toBeUndefined();
  });

  it('is replaced by a statement that fails upstream when a protected value passes the bound, whose error becomes 54000', async () => {
    const s = session(['app']);
    const verdict = await front(s, serialize.query(`INSERT INTO customers (ssn) VALUES ('${'1'.repeat(5000)}')`));
    expect(verdict).toBeDefined();
    expect(queryText(verdict as Buffer)).not.toContain('1111111111');
    const answer = await back(s, errorResponse('42601'));
    expect(sqlStateOf([answer as Buffer])).toBe('54000');
    expect((answer as Buffer).toString('utf8')).toContain('proxy.maxProtectedValueBytes');
  });
});

describe('Parse, ParseComplete and Bind frames', () => {
  it('protect the Bind value of a parameter feeding a protected column once the server confirmed the Parse', async () => {
    const s = session(['app']);
    expect(await front(s, serialize.parse({ name: 'ins', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)', types: [] }))).toBeUndefined();
    await back(s, frame('1', Buffer.alloc(0))); // ParseComplete
    const bound = await front(s, serialize.bind({ statement: 'ins', values: ['123-45-6789', 'kept'] }));
    expect(bound).toBeDefined();
    const text = (bound as Buffer).toString('utf8');
    expect(text).not.toContain('123-45-6789');
    expect(text).toContain('kept');
    expect(text).toMatch(/\d{3}-\d{2}-\d{4}/);
  });

  it('refuse a Bind of a statement the server never confirmed: the value is not forwarded, the error is 26000', async () => {
    const s = session(['app']);
    const verdict = await front(s, serialize.bind({ statement: 'never-parsed', values: ['123-45-6789'] }));
    expect(verdict).toBeDefined();
    expect((verdict as Buffer).toString('utf8')).not.toContain('123-45-6789');
    const answer = await back(s, errorResponse('26000'));
    expect(sqlStateOf([answer ?? errorResponse('26000')])).toBe('26000');
    expect((answer ?? Buffer.alloc(0)).toString('utf8')).toContain('never-parsed');
  });
});

describe('RowDescription and DataRow frames', () => {
  it('reveal the protected column to a plaintext role, mask it for another, leave other columns alone', async () => {
    const stored = (await engine.protect('ssn', ['123-45-6789'], { method: 'fpe', scope: 's' })).result[0] as string;
    const seen: Record<string, (string | null)[]> = {};
    for (const role of ['app', 'support', 'analyst']) {
      const s = session([role]);
      await front(s, serialize.query('SELECT ssn, note FROM customers'));
      await back(s, rowDescription([
        { name: 'ssn', tableOid: CUSTOMERS_OID, attnum: 2, typeOid: TEXT },
        { name: 'note', tableOid: CUSTOMERS_OID, attnum: 3, typeOid: TEXT },
      ]));
      // Rows may be held and sent in a batch: collect everything up to CommandComplete.
      const sent: Buffer[] = [];
      for (const message of [dataRow([stored, 'n']), commandComplete('SELECT 1')]) {
        const verdict = await back(s, message);
        sent.push(verdict ?? message);
      }
      const rows = framesOf(Buffer.concat(sent)).filter((message) => message[0] === 0x44);
      expect(rows).toHaveLength(1);
      seen[role] = dataRowValues(rows[0] as Buffer);
    }
    expect(seen['app']).toEqual(['123-45-6789', 'n']);
    expect(seen['support']?.[0]).not.toBe('123-45-6789');
    expect(seen['support']?.[0]).not.toBe(stored);
    expect(seen['support']?.[1]).toBe('n');
    expect(seen['analyst']).toEqual([stored, 'n']);
  });
});

/** Every frame a backend message turns into (held rows flushed later count where they come out). */
async function backAll(s: FakeSession, messages: Buffer[]): Promise<Buffer[]> {
  const sent: Buffer[] = [];
  for (const message of messages) {
    const verdict = await back(s, message);
    sent.push(verdict ?? message);
  }
  return framesOf(Buffer.concat(sent));
}

const PARSE_COMPLETE = frame('1', Buffer.alloc(0));
const BIND_COMPLETE = frame('2', Buffer.alloc(0));
const CLOSE_COMPLETE = frame('3', Buffer.alloc(0));
const NO_DATA = frame('n', Buffer.alloc(0));
const COPY_DONE = frame('c', Buffer.alloc(0));

function readyForQuery(status: 'I' | 'T' | 'E' = 'I'): Buffer {
  return readyForQueryMessage(status);
}

function commandComplete(tag: string): Buffer {
  return commandCompleteMessage(tag);
}

/** CopyInResponse ('G') or CopyOutResponse ('H') of `columns` text-format columns. */
function copyResponse(type: 'G' | 'H', columns: number): Buffer {
  const body = Buffer.alloc(3 + 2 * columns);
  body.writeInt16BE(columns, 1);
  return frame(type, body);
}

function copyDataOf(text: string): Buffer {
  return copyDataMessage(Buffer.from(text, 'utf8'));
}

/** The bodies of the CopyData frames among `frames`, joined. */
function copyText(frames: Buffer[]): string {
  return frames.filter((message) => message[0] === 0x64).map((message) => message.toString('utf8', 5)).join('');
}

async function storedSsn(value: string): Promise<string> {
  return (await engine.protect('ssn', [value], { method: 'fpe', scope: 's' })).result[0] as string;
}

describe('COPY FROM STDIN frames', () => {
  it('protect the protected field of rows split across CopyData messages, and pass the other fields', async () => {
    const s = session(['app']);
    expect(await front(s, serialize.query('COPY customers (id, ssn, note) FROM STDIN'))).toBeUndefined();
    await back(s, copyResponse('G', 3));
    const forwarded: Buffer[] = [];
    for (const part of ['1\t123-4', '5-6789\tfirst\n2\t987-65-', '4321\tsecond\n']) {
      const verdict = await front(s, copyDataOf(part));
      forwarded.push(verdict ?? copyDataOf(part));
    }
    const done = await front(s, serialize.copyDone());
    forwarded.push(done ?? serialize.copyDone());
    const frames = framesOf(Buffer.concat(forwarded));
    expect(frames.at(-1)?.[0]).toBe(0x63); // CopyDone still ends the stream
    const text = copyText(frames);
    expect(text).not.toContain('123-45-6789');
    expect(text).not.toContain('987-65-4321');
    const rows = text.split('\n').filter((row) => row !== '');
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.split('\t'))).toEqual([
      ['1', await storedSsn('123-45-6789'), 'first'],
      ['2', await storedSsn('987-65-4321'), 'second'],
    ]);
  });

  it('fail the COPY upstream with CopyFail when a row is refused, drop the rest, and answer with pgveil’s error', async () => {
    const s = session(['app']);
    await front(s, serialize.query('COPY customers (id, ssn) FROM STDIN'));
    await back(s, copyResponse('G', 2));
    const refused = await front(s, copyDataOf(`1\t${'1'.repeat(5000)}\n`));
    expect(refused?.[0]).toBe(0x66); // CopyFail
    expect((refused as Buffer).toString('utf8')).not.toContain('11111');
    expect(await front(s, copyDataOf('2\t123-45-6789\n'))).toHaveLength(0);
    expect(await front(s, serialize.copyDone())).toHaveLength(0);
    const answer = await back(s, errorResponse('57014'));
    expect(sqlStateOf([answer as Buffer])).toBe('54000');
    expect(await back(s, readyForQuery())).toBeUndefined();
  });

  it('fail a COPY pgveil did not see coming: its data never reaches the server', async () => {
    const s = session(['app']);
    // A function may run COPY FROM STDIN: the Query itself names no COPY.
    await front(s, serialize.query('SELECT 1'));
    await back(s, copyResponse('G', 2));
    const verdict = await front(s, copyDataOf('1\t123-45-6789\n'));
    expect(verdict?.[0]).toBe(0x66);
    expect((verdict as Buffer).toString('utf8')).not.toContain('123-45-6789');
    const answer = await back(s, errorResponse('57014'));
    expect(sqlStateOf([answer as Buffer])).toBe('0A000');
  });

  it('drop CopyData no COPY will take', async () => {
    const s = session(['app']);
    expect(await front(s, copyDataOf('1\t123-45-6789\n'))).toHaveLength(0);
    expect(await front(s, serialize.copyFail('client gave up'))).toHaveLength(0);
  });

  it('forward a CopyFail of the client to the COPY it ends', async () => {
    const s = session(['app']);
    await front(s, serialize.query('COPY customers (id, ssn) FROM STDIN'));
    await back(s, copyResponse('G', 2));
    expect(await front(s, serialize.copyFail('client gave up'))).toBeUndefined();
    const answer = await back(s, errorResponse('57014'));
    expect(sqlStateOf([answer ?? errorResponse('57014')])).toBe('57014');
  });
});

describe('COPY TO STDOUT frames', () => {
  it('reveal the protected field of each row to a plaintext role, and keep it stored for a role that sees tokens', async () => {
    const stored = await storedSsn('123-45-6789');
    const texts: Record<string, string> = {};
    for (const role of ['app', 'analyst']) {
      const s = session([role]);
      await front(s, serialize.query('COPY customers (id, ssn, note) TO STDOUT'));
      const frames = await backAll(s, [copyResponse('H', 3), copyDataOf(`1\t${stored}\tn\n`), COPY_DONE, commandComplete('COPY 1')]);
      expect(frames.map((message) => String.fromCharCode(message[0] as number)).join('')).toBe('HdcC');
      texts[role] = copyText(frames);
    }
    expect(texts['app']).toBe('1\t123-45-6789\tn\n');
    expect(texts['analyst']).toBe(`1\t${stored}\tn\n`);
  });
});

describe('FunctionCall frames', () => {
  it('are replaced by a call that fails upstream, whose error becomes pgveil’s 0A000 naming SELECT', async () => {
    const s = session(['app']);
    const call = frame('F', Buffer.from([0, 0, 0x04, 0x00, 0, 0, 0, 1, 0, 0, 0, 3, 0x31, 0x32, 0x33, 0, 0]));
    const verdict = await front(s, call);
    expect(verdict?.[0]).toBe(0x46);
    expect(verdict?.equals(call)).toBe(false);
    expect((verdict as Buffer).readInt32BE(5)).toBe(0); // no function has OID 0
    const answer = await back(s, errorResponse('42883'));
    expect(sqlStateOf([answer as Buffer])).toBe('0A000');
    expect((answer as Buffer).toString('utf8')).toContain('SELECT');
    expect(await back(s, readyForQuery())).toBeUndefined();
  });
});

describe('Close frames', () => {
  it('forget a statement once the server confirmed the Close: a later Bind of it is refused with 26000', async () => {
    const s = session(['app']);
    await front(s, serialize.parse({ name: 'ins', text: 'INSERT INTO customers (ssn) VALUES ($1)', types: [] }));
    await backAll(s, [PARSE_COMPLETE]);
    expect(await front(s, serialize.close({ type: 'S', name: 'ins' }))).toBeUndefined();
    await front(s, serialize.sync());
    await backAll(s, [CLOSE_COMPLETE, readyForQuery()]);
    const bound = await front(s, serialize.bind({ statement: 'ins', values: ['123-45-6789'] }));
    expect((bound as Buffer).toString('utf8')).not.toContain('123-45-6789');
    const answer = await back(s, errorResponse('26000'));
    expect(sqlStateOf([answer as Buffer])).toBe('26000');
  });

  it('that failed leave the statement in place: a later Bind of it is still protected', async () => {
    const s = session(['app']);
    await front(s, serialize.parse({ name: 'ins', text: 'INSERT INTO customers (ssn) VALUES ($1)', types: [] }));
    await front(s, serialize.sync());
    await backAll(s, [PARSE_COMPLETE, readyForQuery()]);
    await front(s, serialize.describe({ type: 'S', name: 'missing' }));
    await front(s, serialize.close({ type: 'S', name: 'ins' }));
    await front(s, serialize.sync());
    await backAll(s, [errorResponse('26000'), readyForQuery()]);
    const bound = await front(s, serialize.bind({ statement: 'ins', values: ['123-45-6789'] }));
    expect(bound?.[0]).toBe(0x42);
    const text = (bound as Buffer).toString('utf8');
    expect(text).not.toContain('123-45-6789');
    expect(text).toContain(await storedSsn('123-45-6789'));
  });
});

describe('Describe portal frames', () => {
  it('plan the portal’s rows from the RowDescription they answer', async () => {
    const stored = await storedSsn('123-45-6789');
    const s = session(['app']);
    await front(s, serialize.parse({ text: 'SELECT ssn, note FROM customers', types: [] }));
    await front(s, serialize.bind({}));
    expect(await front(s, serialize.describe({ type: 'P' }))).toBeUndefined();
    expect(await front(s, serialize.execute({}))).toBeUndefined(); // described: no Describe of pgveil's own
    await front(s, serialize.sync());
    const frames = await backAll(s, [
      PARSE_COMPLETE, BIND_COMPLETE,
      rowDescription([{ name: 'ssn', tableOid: CUSTOMERS_OID, attnum: 2, typeOid: TEXT }, { name: 'note', tableOid: CUSTOMERS_OID, attnum: 3, typeOid: TEXT }]),
      dataRow([stored, 'n']), commandComplete('SELECT 1'), readyForQuery(),
    ]);
    expect(frames.map((message) => String.fromCharCode(message[0] as number)).join('')).toBe('12TDCZ');
    expect(dataRowValues(frames[3] as Buffer)).toEqual(['123-45-6789', 'n']);
  });

  it('are sent by pgveil before an Execute of an undescribed portal, and their reply is dropped', async () => {
    const stored = await storedSsn('123-45-6789');
    const s = session(['app']);
    await front(s, serialize.parse({ text: 'SELECT ssn FROM customers', types: [] }));
    await front(s, serialize.bind({}));
    const execute = serialize.execute({});
    const sent = await front(s, execute);
    const frontFrames = framesOf(sent as Buffer);
    expect(frontFrames.map((message) => String.fromCharCode(message[0] as number)).join('')).toBe('DE');
    expect(frontFrames[0]?.equals(serialize.describe({ type: 'P' }))).toBe(true);
    await front(s, serialize.sync());
    const frames = await backAll(s, [
      PARSE_COMPLETE, BIND_COMPLETE, rowDescription([{ name: 'ssn', tableOid: CUSTOMERS_OID, attnum: 2, typeOid: TEXT }]),
      dataRow([stored]), commandComplete('SELECT 1'), readyForQuery(),
    ]);
    expect(frames.map((message) => String.fromCharCode(message[0] as number)).join('')).toBe('12DCZ');
    expect(dataRowValues(frames[2] as Buffer)).toEqual(['123-45-6789']);
  });

  it('answered by NoData leave the rows of a later result alone', async () => {
    const s = session(['app']);
    await front(s, serialize.parse({ text: "INSERT INTO customers (note) VALUES ('x')", types: [] }));
    await front(s, serialize.bind({}));
    await front(s, serialize.describe({ type: 'P' }));
    await front(s, serialize.execute({}));
    await front(s, serialize.sync());
    const frames = await backAll(s, [PARSE_COMPLETE, BIND_COMPLETE, NO_DATA, commandComplete('INSERT 0 1'), readyForQuery()]);
    expect(frames.map((message) => String.fromCharCode(message[0] as number)).join('')).toBe('12nCZ');
  });
});

describe('ErrorResponse frames and the pipeline after a refusal', () => {
  it('replace the error of a refused Parse, and drop the pipeline until Sync', async () => {
    const s = session(['app']);
    const parse = await front(s, serialize.parse({ name: 'big', text: `INSERT INTO customers (ssn) VALUES ('${'1'.repeat(5000)}')`, types: [] }));
    expect(parse?.[0]).toBe(0x50);
    expect((parse as Buffer).toString('utf8')).not.toContain('11111');
    for (const message of [serialize.bind({ statement: 'big' }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.close({ type: 'S', name: 'big' })]) {
      expect(await front(s, message)).toHaveLength(0);
    }
    expect(await front(s, serialize.sync())).toBeUndefined();
    const answer = await back(s, errorResponse('42601'));
    expect(sqlStateOf([answer as Buffer])).toBe('54000');
    expect(await back(s, readyForQuery())).toBeUndefined();
    // After the Sync, messages are handled again.
    expect(await front(s, serialize.query("INSERT INTO customers (note) VALUES ('x')"))).toBeUndefined();
  });

  it('pass the server’s own errors unchanged', async () => {
    const s = session(['app']);
    await front(s, serialize.query('SELECT missing FROM customers'));
    const error = errorResponse('42703');
    expect(await back(s, error)).toBeUndefined();
  });

  it('after an error the server skips to Sync: the refusal of a later message in the batch is not used for another error', async () => {
    const s = session(['app']);
    await front(s, serialize.parse({ text: 'SELECT missing FROM customers', types: [] }));
    await front(s, serialize.bind({ statement: 'never-parsed' })); // refused: its error would be 26000
    await front(s, serialize.sync());
    expect(await back(s, errorResponse('42703'))).toBeUndefined();
    expect(await back(s, readyForQuery())).toBeUndefined();
    // The next batch's error is the server's own again.
    await front(s, serialize.query('SELECT missing FROM customers'));
    expect(await back(s, errorResponse('42703'))).toBeUndefined();
  });
});

describe('settings changed out of sight', () => {
  const risky = serialize.query("SELECT 'café' AS word");

  it('text with a non-ASCII character is refused until the session is idle after an Execute that may have changed them', async () => {
    const s = session(['app']);
    // A plain SELECT may call a function, or read a view, that calls set_config; PostgreSQL reports it at ReadyForQuery.
    const batch = [serialize.parse({ text: 'SELECT now()' }), serialize.bind({}), serialize.execute({})];
    for (const message of [...batch, serialize.sync(), ...batch, serialize.flush()]) await front(s, message);
    const answers = [frame('1', Buffer.alloc(0)), frame('2', Buffer.alloc(0)), rowDescription([{ name: 'now', tableOid: 0, attnum: 0, typeOid: TEXT }]), dataRow(['2026-11-27']), commandCompleteMessage('SELECT 1')];
    // The first batch is answered to its ReadyForQuery, the second (flushed, no Sync) to its CommandComplete.
    for (const message of [...answers, readyForQueryMessage('I'), ...answers]) await back(s, message);
    expect(queryText(await front(s, risky) as Buffer)).toBe('pgveil refused this statement');
    await front(s, serialize.sync());
    for (const message of [errorResponse('42601'), readyForQueryMessage('I'), readyForQueryMessage('I')]) await back(s, message);
    // Idle: the settings are known again, and the same text goes through unchanged.
    expect(await front(s, risky)).toBeUndefined();
  });

  it('a BEGIN does not count, nor a batch that only began a transaction', async () => {
    const s = session(['app']);
    for (const message of [serialize.parse({ text: 'BEGIN' }), serialize.bind({}), serialize.execute({}), serialize.sync()]) await front(s, message);
    expect(await front(s, risky)).toBeUndefined();
  });
});
