/**
 * A portal's rows are planned under the policies in force when they arrive. A reload between a
 * portal's RowDescription and its rows — the rows of a Describe sent with Flush or in an earlier
 * batch of a transaction, or a suspended portal executed again — must not let them out under the
 * plan of before: a revoked reveal gives no plaintext, and a newly protected column's stored
 * value is rewritten rather than passed through.
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { commandCompleteMessage, dataRowMessage, readyForQuery, rowDescriptionMessage, typedMessage } from '../../../src/proxy/protocol/messages.js';
import { relationOf } from './support/catalogFixtures.js';
import { back, completed, engine, front, harness, prepared, sentToClient, session, type FakeSession } from './support/reloadableHooks.js';

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
