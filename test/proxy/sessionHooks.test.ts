/** The seam for column policies: hooks rewrite, refuse in order, and fail safely, on real sessions. */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { serialize } from 'pg-protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROP, type RunningProxy, type SessionHooks } from '../../src/proxy/index.js';
import * as messages from '../../src/proxy/protocol/messages.js';
import { errorResponse } from '../../src/proxy/protocol/messages.js';
import { parseErrorFields } from '../../src/proxy/protocol/errorFields.js';
import { ProtocolState } from '../../src/proxy/session/protocolState.js';
import { SessionFatal } from '../../src/proxy/session/sessionFatal.js';
import { SessionRelay } from '../../src/proxy/session/sessionRelay.js';
import { backendMessageLimits, frontendMessageLimits } from '../../src/proxy/protocol/messageLimits.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { connected, startTestProxy, viaProxy } from './support/proxyHarness.js';
import { openRawSession } from './support/rawProtocol.js';

let database: TestPostgres;
let proxy: RunningProxy;

function replaceText(message: Buffer, from: string, to: string): Buffer {
  const text = message.toString('latin1').replace(from, to);
  const bytes = Buffer.from(text, 'latin1');
  bytes.writeInt32BE(bytes.length - 1, 1);
  return bytes;
}

const hooks: SessionHooks & { failNext: boolean; failNextHeader: boolean; endNext: boolean; streamRows: boolean; seen: string[] } = {
  failNext: false,
  endNext: false,
  failNextHeader: false,
  streamRows: false,
  seen: [],
  frontendTypes: 'QP',
  backendTypes: '',
  backendOnDemandTypes: 'D',
  wantsBackendMessage() {
    return !this.streamRows;
  },
  frontendHeaderTypes: 'S',
  backendHeaderTypes: 'Z',
  onFrontendHeader(type) {
    this.seen.push(`>${String.fromCharCode(type)}`);
  },
  onBackendHeader(type, firstBodyByte) {
    if (this.failNextHeader) {
      this.failNextHeader = false;
      throw new Error('header hook failure for the test');
    }
    this.seen.push(`<${String.fromCharCode(type)}${String.fromCharCode(firstBodyByte)}`);
  },
  onFrontendMessage(message, context) {
    this.seen.push(`>${String.fromCharCode(message[0] as number)}`);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('hook failure for the test');
    }
    if (message[0] === 0x51) return Promise.resolve(replaceText(message, "'plain'", "'rewritten'"));
    if (message.includes('forbidden')) {
      context.replyInOrder(errorResponse({ severity: 'ERROR', code: '42501', message: 'refused by policy' }));
      context.discardUntilSync();
      return DROP;
    }
    return undefined;
  },
  onBackendMessage(message) {
    this.seen.push(`<${String.fromCharCode(message[0] as number)}`);
    if (this.endNext) {
      this.endNext = false;
      throw new SessionFatal('40001', 'ended by the hook for the test', { hint: 'Run it again.' });
    }
    return message.includes('secret') ? replaceText(message, 'secret', 'masked') : undefined;
  },
};

beforeAll(async () => {
  database = await startTestPostgres();
  proxy = await startTestProxy(database, { hooks: () => hooks });
});

afterAll(async () => {
  await proxy?.close();
  await database?.stop();
});

describe('session hooks', () => {
  it('rewrite messages both ways, asynchronously too', async () => {
    const client = await connected(viaProxy(proxy));
    expect((await client.query("SELECT 'plain' AS v")).rows).toEqual([{ v: 'rewritten' }]);
    expect((await client.query("SELECT 'secret' AS v, $1::text AS w", ['x'])).rows).toEqual([{ v: 'masked', w: 'x' }]);
    await client.end();
  });

  it('answer a refused message in order and discard until Sync', async () => {
    const session = await openRawSession(viaProxy(proxy));
    const batch = (sql: string): Buffer[] => [serialize.parse({ text: sql }), serialize.bind(), serialize.execute(), serialize.sync()];
    session.send([...batch('SELECT 1'), ...batch('SELECT forbidden'), ...batch('SELECT 3')]);
    const messages = await session.readUntilReady(3);
    expect(messages.map((m) => m.type).join('')).toBe('12DCZEZ12DCZ');
    const error = messages.find((m) => m.type === 'E');
    expect(Object.fromEntries(parseErrorFields(error?.body ?? Buffer.alloc(0)))).toMatchObject({ C: '42501', M: 'refused by policy' });
    session.close();
  });

  it.each([['hook', 'failNext'], ['header hook', 'failNextHeader']] as const)('end only the session whose %s throws, with a FATAL', async (_, flag) => {
    const session = await openRawSession(viaProxy(proxy));
    hooks[flag] = true;
    session.send(serialize.query('SELECT 1'));
    const messages = await session.readUntilClosed();
    const last = messages[messages.length - 1];
    expect(last?.type).toBe('E');
    expect(Object.fromEntries(parseErrorFields(last?.body ?? Buffer.alloc(0)))).toMatchObject({ S: 'FATAL', C: 'XX000' });
    // The query's own reply never completes: a failing Query hook stops it upstream, a failing ReadyForQuery header is the last of it.
    expect(messages.some((m) => m.type === 'Z')).toBe(false);
    const client = await connected(viaProxy(proxy));
    expect((await client.query('SELECT 5 AS n')).rows).toEqual([{ n: 5 }]);
    await client.end();
  });
});

describe('a hook ending the session on purpose', () => {
  it('sends its own FATAL (code, message, hint) and leaves other sessions alone', async () => {
    const session = await openRawSession(viaProxy(proxy));
    hooks.endNext = true;
    session.send(serialize.query('SELECT 1'));
    const messages = await session.readUntilClosed();
    const last = messages[messages.length - 1];
    expect(last?.type).toBe('E');
    expect(Object.fromEntries(parseErrorFields(last?.body ?? Buffer.alloc(0)))).toMatchObject({
      S: 'FATAL', C: '40001', M: 'ended by the hook for the test', H: 'Run it again.',
    });
    const client = await connected(viaProxy(proxy));
    expect((await client.query('SELECT 6 AS n')).rows).toEqual([{ n: 6 }]);
    await client.end();
  });
});

describe('header types', () => {
  it('are told in order with the intercepted messages, and pass as they came', async () => {
    const session = await openRawSession(viaProxy(proxy));
    hooks.seen.length = 0;
    const batch = (sql: string): Buffer[] => [serialize.parse({ text: sql }), serialize.bind(), serialize.execute(), serialize.sync()];
    session.send([...batch('SELECT 1'), ...batch('BEGIN'), ...batch('SELECT 3')]);
    const messages = await session.readUntilReady(3);
    expect(messages.map((m) => m.type).join('')).toBe('12DCZ12CZ12DCZ');
    expect(messages.filter((m) => m.type === 'Z').map((m) => m.body.toString('latin1'))).toEqual(['I', 'T', 'T']);
    expect(hooks.seen.filter((event) => event.startsWith('>'))).toEqual(['>P', '>S', '>P', '>S', '>P', '>S']);
    expect(hooks.seen.filter((event) => event.startsWith('<'))).toEqual(['<D', '<ZI', '<ZT', '<D', '<ZT']);
    session.close();
  });
});

describe('on-demand types', () => {
  it('reach the hook whole only while it wants them; the rest stream through as sent', async () => {
    const client = await connected(viaProxy(proxy));
    hooks.seen.length = 0;
    hooks.streamRows = true;
    try {
      expect((await client.query("SELECT 'secret' AS v FROM generate_series(1, 3)")).rows).toEqual([{ v: 'secret' }, { v: 'secret' }, { v: 'secret' }]);
      expect(hooks.seen).not.toContain('<D');
    } finally {
      hooks.streamRows = false;
    }
    expect((await client.query("SELECT 'secret' AS v FROM generate_series(1, 2)")).rows).toEqual([{ v: 'masked' }, { v: 'masked' }]);
    expect(hooks.seen.filter((event) => event === '<D')).toHaveLength(2);
    await client.end();
  });

  it('are followed in the session state once each, whatever the hook answers and however the bytes are cut', () => {
    const { dataRowMessage, commandCompleteMessage, readyForQuery, rowDescriptionMessage, typedMessage } = messages;
    const field = { name: 'v', tableOid: 0, attnum: 0, typeOid: 25, typmod: -1, format: 0 };
    // Parse, Describe statement twice, Bind, Describe portal, Execute, Sync: each RowDescription answers its own Describe.
    const frontend = Buffer.concat([serialize.parse({ text: 'SELECT 1' }), serialize.describe({ type: 'S' }), serialize.describe({ type: 'S' }), serialize.bind(), serialize.describe({ type: 'P' }), serialize.execute(), serialize.sync()]);
    const backend = Buffer.concat([
      typedMessage('1', Buffer.alloc(0)), typedMessage('t', Buffer.alloc(2)), rowDescriptionMessage([field]), typedMessage('t', Buffer.alloc(2)),
      rowDescriptionMessage([field, field]), typedMessage('2', Buffer.alloc(0)), rowDescriptionMessage([field]),
      dataRowMessage([Buffer.from('x'.repeat(40))]), commandCompleteMessage('SELECT 1'), readyForQuery('I'),
    ]);
    for (const cut of [backend.length, 64, 7, 3, 1]) {
      for (const answer of ['in place', 'whole', 'alternately'] as const) {
        const client = Object.assign(new EventEmitter(), { written: [] as Buffer[], write(bytes: Buffer) { this.written.push(Buffer.from(bytes)); return true; }, cork: () => undefined, uncork: () => undefined, pause: () => undefined, resume: () => undefined });
        const upstream = Object.assign(new EventEmitter(), { write: () => true, cork: () => undefined, uncork: () => undefined, pause: () => undefined, resume: () => undefined });
        const followed: string[] = [];
        const asked: string[] = [];
        let state: ProtocolState<unknown> | undefined;
        let asks = 0;
        new SessionRelay({
          client: client as unknown as Duplex, upstream: upstream as unknown as Duplex,
          hooksFactory: (context) => {
            state = context.state as ProtocolState<unknown>;
            const follow = state.backendMessage.bind(state);
            state.backendMessage = (type, firstBodyByte) => {
              followed.push(String.fromCharCode(type));
              return follow(type, firstBodyByte);
            };
            return {
              frontendTypes: '', backendTypes: '', backendOnDemandTypes: 'TC',
              wantsBackendMessage: (type, chunk, start, end) => {
                asked.push(`${String.fromCharCode(type)}${end < 0 ? ' cut' : ''} ${context.state.pendingReplies}`);
                if (end >= 0) expect(chunk[start]).toBe(type);
                return answer === 'whole' || (answer === 'alternately' && asks++ % 2 === 1);
              },
              onFrontendMessage: () => undefined,
              onBackendMessage: () => undefined,
            };
          },
          frontendLimits: frontendMessageLimits(1 << 20), backendLimits: backendMessageLimits(), idleTimeoutMs: 0,
          logger: pino({ level: 'silent' }), cancelUpstream: () => undefined, onClosed: () => undefined,
        }, { account: { email: 'a@example.com', roles: [] }, clientDatabase: 'd', upstreamDatabase: 'd', serverParameters: new Map() }).start(frontend, Buffer.alloc(0));
        for (let at = 0; at < backend.length; at += cut) upstream.emit('data', backend.subarray(at, at + cut));
        const where = `cut ${cut}, ${answer}`;
        expect(Buffer.concat(client.written).equals(backend), where).toBe(true);
        expect(followed.join(''), where).toBe('1tTtT2TDCZ');
        // Each asked with the state already past it: the Describes, then the Execute, answered one by one.
        expect(asked.map((entry) => entry.replace(' cut', '')), where).toEqual(['T 5', 'T 4', 'T 2', 'C 1']);
        expect(state?.pendingReplies, where).toBe(0);
      }
    }
  });

  it('leave the client paused while a hook is at work on what came with the login', async () => {
    const calls: string[] = [];
    const socket = (name: string) => Object.assign(new EventEmitter(), {
      write: () => true, cork: () => undefined, uncork: () => undefined, destroy: () => undefined, end: () => undefined,
      pause: () => { calls.push(`${name} pause`); }, resume: () => { calls.push(`${name} resume`); },
    });
    let answer: (() => void) | undefined;
    new SessionRelay({
      client: socket('client') as unknown as Duplex, upstream: socket('upstream') as unknown as Duplex,
      hooksFactory: () => ({
        frontendTypes: 'Q', backendTypes: '',
        onFrontendMessage: () => new Promise<undefined>((resolve) => { answer = () => resolve(undefined); }),
        onBackendMessage: () => undefined,
      }),
      frontendLimits: frontendMessageLimits(1 << 20), backendLimits: backendMessageLimits(), idleTimeoutMs: 0,
      logger: pino({ level: 'silent' }), cancelUpstream: () => undefined, onClosed: () => undefined,
    }, { account: { email: 'a@example.com', roles: [] }, clientDatabase: 'd', upstreamDatabase: 'd', serverParameters: new Map() })
      .start(serialize.query('SELECT 1'), Buffer.alloc(0));
    // The upstream flows; the client waits for the hook (what it sends meanwhile is not read on).
    expect(calls.filter((call) => call.startsWith('client'))).toEqual(['client pause']);
    expect(calls).toContain('upstream resume');
    answer?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.filter((call) => call.startsWith('client'))).toEqual(['client pause', 'client resume']);
  });

  it('are only DataRow, CopyData, NoticeResponse, RowDescription and CommandComplete', () => {
    const sink = Object.assign(new EventEmitter(), { write: () => true, cork: () => undefined, uncork: () => undefined, pause: () => undefined, resume: () => undefined });
    const create = (types: string, runTypes = ''): SessionRelay => new SessionRelay({
      client: sink as unknown as Duplex, upstream: sink as unknown as Duplex,
      hooksFactory: () => ({ ...hooks, backendOnDemandTypes: types, backendRunTypes: runTypes }),
      frontendLimits: frontendMessageLimits(1 << 20), backendLimits: backendMessageLimits(), idleTimeoutMs: 0,
      logger: pino({ level: 'silent' }), cancelUpstream: () => undefined, onClosed: () => undefined,
    }, { account: { email: 'a@example.com', roles: [] }, clientDatabase: 'd', upstreamDatabase: 'd', serverParameters: new Map() });
    expect(() => create('DdNTC')).not.toThrow();
    expect(() => create('DZ')).toThrow(/cannot take backend type Z on demand/);
    expect(() => create('DE')).toThrow(/cannot take backend type E on demand/);
    // In runs (several back to back, the state told once): DataRow only.
    expect(() => create('DdN', 'D')).not.toThrow();
    expect(() => create('DdN', 'DC')).toThrow(/cannot take backend type C in runs/);
    expect(() => create('DdN', 'd')).toThrow(/cannot take backend type d in runs/);
  });
});

describe('ProtocolState', () => {
  const code = (letter: string): number => letter.charCodeAt(0);
  const front = (state: ProtocolState<string>, letters: string): void => {
    for (const letter of letters) state.frontendMessage(code(letter));
  };

  it('releases an injected reply once the replies before it are out', () => {
    const state = new ProtocolState<string>();
    front(state, 'PBES');
    expect(state.replyInOrder(Buffer.from('injected'))).toBe(true);
    front(state, 'S');
    expect(state.backendMessage(code('1'), 0)).toBe(false);
    expect(state.backendMessage(code('2'), 0)).toBe(false);
    expect(state.backendMessage(code('C'), 0)).toBe(false);
    expect(state.backendMessage(code('Z'), code('I'))).toBe(true);
    expect(state.takeDueInjections().map(String)).toEqual(['injected']);
    expect(state.pendingReplies).toBe(1);
    state.backendMessage(code('Z'), code('T'));
    expect(state.pendingReplies).toBe(0);
    expect(state.transactionStatus).toBe('T');
  });

  it('drops what PostgreSQL skips after an extended-protocol error, injected replies included', () => {
    const state = new ProtocolState<string>();
    front(state, 'PB');
    state.replyInOrder(Buffer.from('never'));
    front(state, 'E');
    state.backendMessage(code('E'), 0);
    expect(state.upstreamSkippingUntilSync).toBe(true);
    front(state, 'BE');
    expect(state.pendingReplies).toBe(0);
    front(state, 'S');
    expect(state.upstreamSkippingUntilSync).toBe(false);
    expect(state.backendMessage(code('Z'), code('I'))).toBe(false);
    expect(state.pendingReplies).toBe(0);
  });

  it('answers immediately when nothing is pending, and follows COPY IN', () => {
    const state = new ProtocolState<string>();
    expect(state.replyInOrder(Buffer.from('now'))).toBe(false);
    front(state, 'Q');
    state.backendMessage(code('G'), 0);
    expect(state.copyMode).toBe('in');
    front(state, 'dddSc');
    state.backendMessage(code('C'), 0);
    state.backendMessage(code('Z'), code('I'));
    expect(state.pendingReplies).toBe(0);
    expect(state.copyMode).toBe('none');
  });

  it('carries a hook’s payloads with the entries of the messages they were attached to', () => {
    const state = new ProtocolState<string>();
    const unanswered: string[] = [];
    state.onUnanswered((payload, outcome) => unanswered.push(`${payload}:${outcome}`));
    state.expect(code('P'), 'parse');
    state.expect(code('B'), 'bind');
    front(state, 'HPB'); // Flush gets no entry and takes no payload
    state.clearExpected();
    state.expect(code('D'), 'describe');
    state.expect(code('E'), 'execute');
    state.expect(code('S'), 'sync');
    front(state, 'DES');
    expect(state.head).toBe('parse');
    state.backendMessage(code('1'), 0);
    expect([state.current, state.answered]).toEqual(['parse', 'parse']);
    state.backendMessage(code('2'), 0);
    expect(state.answered).toBe('bind');
    state.backendMessage(code('E'), 0);
    expect(state.current).toBe('describe');
    expect(unanswered).toEqual(['describe:failed', 'execute:skipped']);
    expect(state.someOwed((payload) => payload === 'sync')).toBe(true);
    state.backendMessage(code('Z'), code('I'));
    expect([state.current, state.answered]).toEqual(['sync', 'sync']);
    expect(state.head).toBeUndefined();
  });

  it('drops a payload whose message was not forwarded, and one for a Sync sent in COPY IN', () => {
    const state = new ProtocolState<string>();
    const unanswered: string[] = [];
    state.onUnanswered((payload, outcome) => unanswered.push(`${payload}:${outcome}`));
    state.expect(code('Q'), 'dropped');
    state.clearExpected();
    state.expect(code('Q'), 'query');
    front(state, 'Q');
    state.backendMessage(code('G'), 0);
    state.expect(code('S'), 'ignored sync');
    front(state, 'S');
    state.clearExpected();
    expect(state.someOwed((payload) => payload !== 'query')).toBe(false);
    state.backendMessage(code('E'), 0);
    expect(unanswered).toEqual(['query:failed']);
    state.backendMessage(code('Z'), code('I'));
    expect(state.answered).toBe('query');
    expect(state.pendingReplies).toBe(0);
  });
});
