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
import { type SessionContext, type SessionHooks } from '../../../src/proxy/session/sessionHooks.js';

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

/** A session as the hooks see it: what they answer in order is collected. */
interface FakeSession {
  readonly hooks: SessionHooks;
  readonly context: SessionContext;
  readonly replies: Buffer[];
}

const engine = createEngine({ masterKey: randomBytes(32) });
let policies: PolicySet;
let policyHooks: PolicyHooks;

function session(roles: string[]): FakeSession {
  const replies: Buffer[] = [];
  const context: SessionContext = {
    account: { email: `${roles.join('-')}@example.com`, roles },
    clientDatabase: 'app', upstreamDatabase: 'app', upstreamUser: 'pgveil',
    serverParameters: new Map([['DateStyle', 'ISO, MDY'], ['client_encoding', 'UTF8'], ['search_path', '"$user", public']]),
    state: { transactionStatus: 'I', pendingReplies: 0, upstreamSkippingUntilSync: false, proxyDiscardingUntilSync: false, copyMode: 'none' },
    replyInOrder: (messages) => { replies.push(messages); },
    discardUntilSync: () => undefined,
  };
  return { hooks: policyHooks.factory(context), context, replies };
}

async function front(s: FakeSession, frame: Buffer): Promise<Buffer | undefined> {
  return s.hooks.onFrontendMessage(frame, s.context);
}

async function back(s: FakeSession, frame: Buffer): Promise<Buffer | undefined> {
  return s.hooks.onBackendMessage(frame, s.context);
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
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(payload.length + 4, 1);
  return Buffer.concat([header, payload]);
}

function errorResponse(code: string): Buffer {
  return frame('E', Buffer.from(`SERROR\0C${code}\0Mupstream error\0\0`, 'utf8'));
}

function rowDescription(fields: { name: string; tableOid: number; attnum: number; typeOid: number }[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0, fields.length])];
  for (const field of fields) {
    const fixed = Buffer.alloc(18);
    fixed.writeInt32BE(field.tableOid, 0);
    fixed.writeInt16BE(field.attnum, 4);
    fixed.writeInt32BE(field.typeOid, 6);
    fixed.writeInt16BE(-1, 10);
    fixed.writeInt32BE(-1, 12);
    fixed.writeInt16BE(0, 16);
    parts.push(Buffer.from(`${field.name}\0`, 'utf8'), fixed);
  }
  return frame('T', Buffer.concat(parts));
}

function dataRow(values: (string | null)[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0, values.length])];
  for (const value of values) {
    const length = Buffer.alloc(4);
    if (value === null) {
      length.writeInt32BE(-1);
      parts.push(length);
    } else {
      const bytes = Buffer.from(value, 'utf8');
      length.writeInt32BE(bytes.length);
      parts.push(length, bytes);
    }
  }
  return frame('D', Buffer.concat(parts));
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
      for (const message of [dataRow([stored, 'n']), frame('C', Buffer.from('SELECT 1\0'))]) {
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
