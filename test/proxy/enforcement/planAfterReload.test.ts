/**
 * Rows leave under the policies in force when they leave. A reload between a portal's
 * RowDescription and its rows — the rows of a Describe sent with Flush or in an earlier batch of
 * a transaction, or a suspended portal executed again — or while rows of a result (a portal's or
 * a simple Query's) are held for their batch must not let them out under the plan of before: a
 * revoked reveal gives no plaintext, a newly protected column's stored value is rewritten rather
 * than passed through, and the rows keep their order. A COPY TO whose columns a reload changes
 * ends instead.
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { commandCompleteMessage, copyDataMessage, dataRowMessage, readyForQuery, rowDescriptionMessage, typedMessage } from '../../../src/proxy/protocol/messages.js';
import { SessionFatal } from '../../../src/proxy/session/sessionFatal.js';
import { relationOf } from './support/catalogFixtures.js';
import { back, completed, engine, front, harness, prepared, sentToClient, session, type FakeSession } from './support/reloadableHooks.js';
import { deliverBackend } from './support/hookRouting.js';

const ACCOUNTS = relationOf(16500, 'public', 'accounts', [
  { attnum: 1, name: 'aid', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'note', typeOid: 25, typmod: -1 },
]);
const NONE = 'columns: {}\n';
const REVEAL = `
columns:
  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
`;
const MASKED = `
columns:
  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: mask } }
`;
const PLAIN = '123-45-6789';
const description = rowDescriptionMessage([{ name: 'note', tableOid: 16500, attnum: 2, typeOid: 25, typmod: -1, format: 0 }]);
const bindComplete = typedMessage('2', Buffer.alloc(0));

async function storedToken(): Promise<string> {
  return (await engine.protect('ssn', [PLAIN], { method: 'fpe', scope: 's' })).result[0] as string;
}

/** A session inside a transaction block, with statement q prepared. */
async function preparedInBlock(policies: string): Promise<{ s: FakeSession; reload: (text: string) => void }> {
  const h = await harness([ACCOUNTS], policies);
  const s = session(h, ['app']);
  await completed(s, 'SELECT 1', 'SELECT 1');
  await front(s, serialize.query('BEGIN'));
  await back(s, commandCompleteMessage('BEGIN'));
  await back(s, readyForQuery('T'));
  await front(s, serialize.parse({ name: 'q', text: 'SELECT note FROM accounts WHERE aid = $1', types: [] }));
  await front(s, serialize.sync());
  await back(s, typedMessage('1', Buffer.alloc(0)));
  await back(s, readyForQuery('T'));
  return { s, reload: (text) => h.reload(text) };
}

/** Bind p, Describe p; the reload comes after its RowDescription, in a batch of its own or before the rows of the same one. */
async function rowsAfterReload(before: string, after: string, batches: 'separate' | 'same'): Promise<{ out: Buffer; stored: string }> {
  const { s, reload } = await preparedInBlock(before);
  const stored = await storedToken();
  await front(s, serialize.bind({ portal: 'p', statement: 'q', values: ['1'] }));
  await front(s, serialize.describe({ type: 'P', name: 'p' }));
  if (batches === 'separate') {
    await front(s, serialize.sync());
    await back(s, bindComplete);
    await back(s, description);
    await back(s, readyForQuery('T'));
    reload(after);
    await front(s, serialize.execute({ portal: 'p' }));
    await front(s, serialize.sync());
  } else {
    await front(s, serialize.execute({ portal: 'p' }));
    await front(s, serialize.sync());
    await back(s, bindComplete);
    await back(s, description);
    reload(after);
  }
  const out = await sentToClient(s, [dataRowMessage([Buffer.from(stored)]), commandCompleteMessage('SELECT 1'), readyForQuery('T')]);
  return { out, stored };
}

describe('rows of a described portal after a policy reload', () => {
  it.each(['separate', 'same'] as const)('a revoked reveal gives no plaintext (reload and rows in %s batches)', async (batches) => {
    const { out, stored } = await rowsAfterReload(REVEAL, MASKED, batches);
    expect(out.includes(PLAIN)).toBe(false);
    expect(out.includes(stored)).toBe(false);
  });

  it.each(['separate', 'same'] as const)('a newly protected column is rewritten, not passed through (%s batches)', async (batches) => {
    const { out, stored } = await rowsAfterReload(NONE, REVEAL, batches);
    expect(out.includes(stored)).toBe(false);
    expect(out.includes(PLAIN)).toBe(true);
  });

  it('a suspended portal executed again after a revocation gives no plaintext', async () => {
    const { s, reload } = await preparedInBlock(REVEAL);
    const stored = await storedToken();
    await front(s, serialize.bind({ portal: 'p', statement: 'q', values: ['1'] }));
    await front(s, serialize.describe({ type: 'P', name: 'p' }));
    await front(s, serialize.execute({ portal: 'p', rows: 1 }));
    await front(s, serialize.sync());
    await back(s, bindComplete);
    await back(s, description);
    const first = await sentToClient(s, [dataRowMessage([Buffer.from(stored)]), typedMessage('s', Buffer.alloc(0)), readyForQuery('T')]);
    expect(first.includes(PLAIN)).toBe(true);
    reload(MASKED);
    await front(s, serialize.execute({ portal: 'p', rows: 1 }));
    await front(s, serialize.sync());
    const second = await sentToClient(s, [dataRowMessage([Buffer.from(stored)]), commandCompleteMessage('SELECT 1'), readyForQuery('T')]);
    expect(second.includes(PLAIN)).toBe(false);
  });

  it('the unnamed portal described before a Flush gives no plaintext once the reveal is revoked', async () => {
    const h = await harness([ACCOUNTS], REVEAL);
    const s = session(h, ['app']);
    await prepared(s, 'q', 'SELECT note FROM accounts WHERE aid = $1');
    const stored = await storedToken();
    await front(s, serialize.bind({ statement: 'q', values: ['1'] }));
    await front(s, serialize.describe({ type: 'P' }));
    await front(s, serialize.flush());
    await back(s, bindComplete);
    await back(s, description);
    h.reload(MASKED);
    await front(s, serialize.execute({}));
    await front(s, serialize.sync());
    const out = await sentToClient(s, [dataRowMessage([Buffer.from(stored)]), commandCompleteMessage('SELECT 1'), readyForQuery('I')]);
    expect(out.includes(PLAIN)).toBe(false);
  });
});

describe('rows held for a batch when the policies change within their result', () => {
  const OTHER = '987-65-4321';

  /** Bind p, Describe p, Execute p; a first row arrives (and is held for its batch), then the reload, then a second row. */
  async function rowsAcrossReload(before: string, after: string): Promise<{ out: Buffer; stored: [string, string] }> {
    const { s, reload } = await preparedInBlock(before);
    const stored = (await engine.protect('ssn', [PLAIN, OTHER], { method: 'fpe', scope: 's' })).result as [string, string];
    await front(s, serialize.bind({ portal: 'p', statement: 'q', values: ['1'] }));
    await front(s, serialize.describe({ type: 'P', name: 'p' }));
    await front(s, serialize.execute({ portal: 'p' }));
    await front(s, serialize.sync());
    await back(s, bindComplete);
    await back(s, description);
    const first = await sentToClient(s, [dataRowMessage([Buffer.from(stored[0])])]);
    reload(after);
    const rest = await sentToClient(s, [dataRowMessage([Buffer.from(stored[1])]), commandCompleteMessage('SELECT 2'), readyForQuery('T')]);
    return { out: Buffer.concat([first, rest]), stored };
  }

  it('a revoked reveal gives no plaintext for the row after it, nor for the row still held from before it', async () => {
    const { out, stored } = await rowsAcrossReload(REVEAL, MASKED);
    for (const value of [PLAIN, OTHER, ...stored]) expect(out.includes(value)).toBe(false);
    expect(out.indexOf('SELECT 2')).toBeGreaterThan(0);
  });

  it('rows keep their order when the column stops being protected mid-result', async () => {
    const { out, stored } = await rowsAcrossReload(REVEAL, NONE);
    const first = out.indexOf(stored[0]);
    const second = out.indexOf(stored[1]);
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    expect(out.indexOf('SELECT 2')).toBeGreaterThan(second);
    expect(out.includes(PLAIN)).toBe(false);
  });

  it('a row arriving after its column became protected is rewritten, and follows the row before it', async () => {
    const { out, stored } = await rowsAcrossReload(NONE, REVEAL);
    expect(out.includes(stored[0])).toBe(true);
    expect(out.indexOf(OTHER)).toBeGreaterThan(out.indexOf(stored[0]));
  });
});

describe('rows of a simple Query after a policy reload', () => {
  const OTHER = '987-65-4321';

  /** A Query whose RowDescription and first row arrive before the reload (`at`: 'description' — only its RowDescription), the rest after. */
  async function queryAcrossReload(before: string, after: string, at: 'description' | 'row'): Promise<{ out: Buffer; stored: [string, string] }> {
    const h = await harness([ACCOUNTS], before);
    const s = session(h, ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    const stored = (await engine.protect('ssn', [PLAIN, OTHER], { method: 'fpe', scope: 's' })).result as [string, string];
    await front(s, serialize.query('SELECT note FROM accounts'));
    const rows = [dataRowMessage([Buffer.from(stored[0])]), dataRowMessage([Buffer.from(stored[1])])];
    const early = at === 'row' ? [description, rows[0] as Buffer] : [description];
    const first = await sentToClient(s, early);
    h.reload(after);
    const rest = await sentToClient(s, [...rows.slice(early.length - 1), commandCompleteMessage('SELECT 2'), readyForQuery('I')]);
    return { out: Buffer.concat([first, rest]), stored };
  }

  it('rows arriving after a revoked reveal give no plaintext', async () => {
    const { out, stored } = await queryAcrossReload(REVEAL, MASKED, 'description');
    for (const value of [PLAIN, OTHER, ...stored]) expect(out.includes(value)).toBe(false);
  });

  it('a revoked reveal gives no plaintext for the row after it, nor for the row still held from before it', async () => {
    const { out, stored } = await queryAcrossReload(REVEAL, MASKED, 'row');
    for (const value of [PLAIN, OTHER, ...stored]) expect(out.includes(value)).toBe(false);
  });

  it('rows arriving after their column became protected are rewritten, in order', async () => {
    const { out, stored } = await queryAcrossReload(NONE, REVEAL, 'row');
    expect(out.includes(stored[0])).toBe(true);
    expect(out.includes(stored[1])).toBe(false);
    expect(out.indexOf(OTHER)).toBeGreaterThan(out.indexOf(stored[0]));
  });

  it('rows keep their order when the column stops being protected mid-result', async () => {
    const { out, stored } = await queryAcrossReload(REVEAL, NONE, 'row');
    expect(out.indexOf(stored[0])).toBeGreaterThan(-1);
    expect(out.indexOf(stored[1])).toBeGreaterThan(out.indexOf(stored[0]));
  });

  it('rows still held when the reveal is revoked after the last of them give no plaintext', async () => {
    const h = await harness([ACCOUNTS], REVEAL);
    const s = session(h, ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    const stored = (await engine.protect('ssn', [PLAIN, OTHER], { method: 'fpe', scope: 's' })).result as [string, string];
    await front(s, serialize.query('SELECT note FROM accounts'));
    const held = await sentToClient(s, [description, ...stored.map((token) => dataRowMessage([Buffer.from(token)]))]);
    h.reload(MASKED);
    const out = Buffer.concat([held, await sentToClient(s, [commandCompleteMessage('SELECT 2'), readyForQuery('I')])]);
    for (const value of [PLAIN, OTHER, ...stored]) expect(out.includes(value)).toBe(false);
    expect(out.includes('SELECT 2')).toBe(true);
  });
});

describe('COPY TO STDOUT after a policy reload', () => {
  const OTHER = '987-65-4321';
  /** CopyOutResponse of two text-format columns. */
  const copyOutResponse = typedMessage('H', Buffer.from([0, 0, 2, 0, 0, 0, 0]));
  const UNRELATED = `${REVEAL}  public.other.secret: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }\n`;

  /** `COPY accounts TO STDOUT`; the reload comes after the CopyOutResponse and the first row ('row'), or before the CopyOutResponse ('start'). */
  async function copyAcrossReload(before: string, after: string, at: 'start' | 'row'): Promise<{ first: Buffer; rest: Promise<Buffer>; stored: string[] }> {
    const h = await harness([ACCOUNTS], before);
    const s = session(h, ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    const stored = (await engine.protect('ssn', [PLAIN, OTHER], { method: 'fpe', scope: 's' })).result as string[];
    await front(s, serialize.query('COPY accounts (aid, note) TO STDOUT'));
    const rows = stored.map((token, i) => copyDataMessage(Buffer.from(`${i + 1}\t${token}\n`)));
    const early = at === 'row' ? [copyOutResponse, rows[0] as Buffer] : [];
    const first = await sentToClient(s, early);
    h.reload(after);
    const rest = sentToClient(s, [...(at === 'row' ? [] : [copyOutResponse, rows[0] as Buffer]), rows[1] as Buffer, typedMessage('c', Buffer.alloc(0)), commandCompleteMessage('COPY 2'), readyForQuery('I')]);
    return { first, rest, stored };
  }

  it('a revoked reveal ends the COPY under way with a FATAL naming the reload, and no plaintext after it', async () => {
    const { first, rest } = await copyAcrossReload(REVEAL, MASKED, 'row');
    const ended = await rest.then(() => undefined, (error: unknown) => error);
    expect(ended).toBeInstanceOf(SessionFatal);
    expect((ended as SessionFatal).fields).toMatchObject({ code: '40001', message: expect.stringContaining('the policy file was reloaded') });
    expect(first.equals(copyOutResponse)).toBe(true); // the first row was still held for its batch, and is never sent
  });

  it('a COPY whose CopyOutResponse comes after the reload starts under the new policies: masked, not ended', async () => {
    const { first, rest, stored } = await copyAcrossReload(REVEAL, MASKED, 'start');
    const out = Buffer.concat([first, await rest]).toString('latin1');
    for (const value of [PLAIN, OTHER, ...stored]) expect(out.includes(value)).toBe(false);
    expect(out).toContain('***-**-6789');
    expect(out).toContain('COPY 2');
  });

  it('a COPY prepared before a reload and executed after it starts under the new policies', async () => {
    const h = await harness([ACCOUNTS], REVEAL);
    const s = session(h, ['app']);
    await prepared(s, 'c', 'COPY accounts (aid, note) TO STDOUT');
    h.reload(MASKED);
    const token = (await engine.protect('ssn', [PLAIN], { method: 'fpe', scope: 's' })).result[0] as string;
    await front(s, serialize.bind({ portal: '', statement: 'c', values: [] }));
    await front(s, serialize.execute({ portal: '' }));
    await front(s, serialize.sync());
    // BindComplete, then NoData for the Describe pgveil sends before an undescribed Execute.
    const out = (await sentToClient(s, [typedMessage('2', Buffer.alloc(0)), typedMessage('n', Buffer.alloc(0)), copyOutResponse, copyDataMessage(Buffer.from(`1\t${token}\n`)),
      typedMessage('c', Buffer.alloc(0)), commandCompleteMessage('COPY 1'), readyForQuery('I')])).toString('latin1');
    expect(out.includes(PLAIN)).toBe(false);
    expect(out.includes(token)).toBe(false);
    expect(out).toContain('***-**-6789');
  });

  it('a COPY prepared before a reload that now refuses it ends the session when the server begins it', async () => {
    const VISITS = relationOf(16600, 'public', 'visits', [{ attnum: 1, name: 'id', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'seen', typeOid: 1082, typmod: -1 }]);
    const seen = (view: string): string => `columns:\n  public.visits.seen: { kind: date, method: fpe, scope: s, reveal: { app: ${view} } }\n`;
    const h = await harness([ACCOUNTS, VISITS], seen('plaintext'));
    const s = session(h, ['app']);
    await prepared(s, 'c', 'COPY visits (id, seen) TO STDOUT (FORMAT binary)');
    // A mask does not fit a date in binary: under the new policies this COPY is refused, but the server has begun it.
    h.reload(seen('mask'));
    await front(s, serialize.bind({ portal: '', statement: 'c', values: [] }));
    await front(s, serialize.execute({ portal: '' }));
    await front(s, serialize.sync());
    const binaryCopyOut = typedMessage('H', Buffer.from([1, 0, 2, 0, 1, 0, 1]));
    const ended = await sentToClient(s, [typedMessage('2', Buffer.alloc(0)), typedMessage('n', Buffer.alloc(0)), binaryCopyOut]).then(() => undefined, (error: unknown) => error);
    expect(ended).toBeInstanceOf(SessionFatal);
    expect((ended as SessionFatal).fields.message).toContain('while it waited to run');
  });

  const TOKEN = `columns:\n  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: token } }\n`;
  const REDACT = `columns:\n  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: redact } }\n`;

  it.each([['redact', REDACT], ['mask', MASKED]])('a COPY that planned no column (tokens) ends when a reload has it %s them', async (_, after) => {
    const { first, rest } = await copyAcrossReload(TOKEN, after, 'row');
    const ended = await rest.then(() => undefined, (error: unknown) => error);
    expect(ended).toBeInstanceOf(SessionFatal);
    expect(first.length).toBeGreaterThan(copyOutResponse.length); // its first row streamed by unread, as stored
  });

  it('COPY (query) TO STDOUT ends when a reload has this session see a table it reads other than as stored', async () => {
    const h = await harness([ACCOUNTS], TOKEN);
    const s = session(h, ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    await front(s, serialize.query('COPY (SELECT aid, note FROM accounts) TO STDOUT'));
    await sentToClient(s, [copyOutResponse, copyDataMessage(Buffer.from('1\tx\n'))]);
    h.reload(MASKED);
    const ended = await sentToClient(s, [copyDataMessage(Buffer.from('2\ty\n'))]).then(() => undefined, (error: unknown) => error);
    expect(ended).toBeInstanceOf(SessionFatal);
  });

  it('a reload that leaves the COPY\'s columns as they were lets it run on, revealed', async () => {
    const { first, rest } = await copyAcrossReload(REVEAL, UNRELATED, 'row');
    const out = Buffer.concat([first, await rest]).toString('latin1');
    expect(out.indexOf(PLAIN)).toBeGreaterThan(-1);
    expect(out.indexOf(OTHER)).toBeGreaterThan(out.indexOf(PLAIN));
  });
});

describe('a reload while a batch of rows is being rewritten', () => {
  /** A simple Query's 1 200 revealed rows are flushed; the reload to `after` lands between two slices of their rewrite (512 values each). */
  async function reloadDuringRewrite(after: string): Promise<{ outcome: unknown; plains: string[] }> {
    const h = await harness([ACCOUNTS], REVEAL);
    const s = session(h, ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    const plains = Array.from({ length: 1200 }, (_, i) => `123-45-${1000 + i}`);
    const stored = (await engine.protect('ssn', plains, { method: 'fpe', scope: 's' })).result as string[];
    await front(s, serialize.query('SELECT note FROM accounts'));
    await sentToClient(s, [description]);
    for (let i = 0; i < stored.length; i++) s.state.backendMessage(0x44, 0);
    await s.hooks.onBackendMessage(Buffer.concat(stored.map((token) => dataRowMessage([Buffer.from(token)]))), s.context);
    const flushing = deliverBackend(s.hooks, s.context, s.state, commandCompleteMessage('SELECT 1200'));
    await new Promise((resolve) => setImmediate(resolve));
    h.reload(after);
    return { outcome: await Promise.resolve(flushing).then((bytes) => bytes, (error: unknown) => error), plains };
  }

  it('ends the session rather than let the batch out revealed', async () => {
    const { outcome } = await reloadDuringRewrite(MASKED);
    expect(outcome).toBeInstanceOf(SessionFatal);
    expect((outcome as SessionFatal).fields.message).toContain('while its rows were being revealed');
  });

  it('lets the batch out when the reload leaves the result\'s columns alone', async () => {
    const { outcome, plains } = await reloadDuringRewrite(`${REVEAL}  public.other.secret: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }\n`);
    const out = (outcome as Buffer).toString('latin1');
    expect(plains.every((plain) => out.includes(plain))).toBe(true);
  });
});
