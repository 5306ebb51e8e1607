/**
 * A Bind forwarded as sent (a statement pgveil is sure of, no parameter to protect) and the
 * Describe and Execute of the portal it just bound are read in place, not handed to the hook whole
 * (FrontendPolicy.wantsWhole), with the reply the whole path would attach. The rows of such an
 * Execute are still revealed; a Bind with a value to protect, or of a statement pgveil does not
 * know, still goes the whole way (protected, or refused); and whatever ends the portal in between —
 * here a refused FunctionCall, whose failure ends the implicit transaction — sends Execute the whole
 * way again, where pgveil describes the portal it is no longer sure of before its rows come.
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { commandCompleteMessage, dataRowMessage, errorResponse, readyForQuery, rowDescriptionMessage, typedMessage } from '../../../src/proxy/protocol/messages.js';
import type { MessageVerdict, SessionHooks } from '../../../src/proxy/session/sessionHooks.js';
import { relationOf } from './support/catalogFixtures.js';
import { deliverFrontend } from './support/hookRouting.js';
import { back, engine, harness, prepared, sentToClient, session, type FakeSession } from './support/reloadableHooks.js';

const ACCOUNTS = relationOf(16500, 'public', 'accounts', [
  { attnum: 1, name: 'aid', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'note', typeOid: 25, typmod: -1 },
]);
const REVEAL = `
columns:
  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
`;
const PLAIN = '123-45-6789';
const description = rowDescriptionMessage([{ name: 'note', tableOid: 16500, attnum: 2, typeOid: 25, typmod: -1, format: 0 }]);
const D = 0x44;
const E = 0x45;

/** A session with statement q prepared, and the types of the messages its hooks were handed whole. */
async function preparedSession(): Promise<{ s: FakeSession; whole: number[]; front: (frame: Buffer) => Promise<MessageVerdict> }> {
  const s = session(await harness([ACCOUNTS], REVEAL), ['app']);
  const whole: number[] = [];
  const counted: SessionHooks = {
    ...s.hooks,
    onFrontendMessage: (message, context) => {
      whole.push(message[0] as number);
      return s.hooks.onFrontendMessage(message, context);
    },
  };
  const front = (frame: Buffer): Promise<MessageVerdict> => deliverFrontend(counted, s.context, s.state, frame);
  await prepared(s, 'q', 'SELECT note FROM accounts WHERE aid = $1', front);
  whole.length = 0;
  return { s, whole, front };
}

describe('Describe and Execute of the portal a Bind just bound', () => {
  it('are read in place, and the rows of the Execute are revealed as before', async () => {
    const { s, whole, front } = await preparedSession();
    const stored = (await engine.protect('ssn', [PLAIN], { method: 'fpe', scope: 's' })).result[0] as string;
    for (let round = 0; round < 3; round++) {
      whole.length = 0;
      for (const frame of [serialize.bind({ statement: 'q', values: ['1'] }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]) {
        expect(await front(frame)).toBeUndefined();
      }
      expect(whole).toEqual([]);
      await back(s, typedMessage('2', Buffer.alloc(0)));
      await back(s, description);
      const out = await sentToClient(s, [dataRowMessage([Buffer.from(stored)]), commandCompleteMessage('SELECT 1'), readyForQuery('I')]);
      expect(out.includes(PLAIN)).toBe(true);
      expect(out.includes(stored)).toBe(false);
      expect(s.state.stagedSlots).toBe(0);
    }
  });

  it('leave a Bind with a value to protect to the whole path, which protects it', async () => {
    const { s, whole, front } = await preparedSession();
    await prepared(s, 'w', 'SELECT aid FROM accounts WHERE note = $1', front);
    whole.length = 0;
    const sent = await front(serialize.bind({ statement: 'w', values: [PLAIN] }));
    expect(whole).toEqual([0x42]);
    expect(sent).toBeDefined();
    expect((sent as Buffer).includes(PLAIN)).toBe(false);
  });

  it('leave a Bind of a statement pgveil does not know to the whole path, which refuses it', async () => {
    const { whole, front } = await preparedSession();
    const sent = await front(serialize.bind({ statement: 'never-prepared', values: [] }));
    expect(whole).toEqual([0x42]);
    // A Bind that fails upstream goes instead: of a statement no client can have prepared.
    expect((sent as Buffer)[0]).toBe(0x42);
    expect((sent as Buffer).includes('pgveil refused')).toBe(true);
    expect((sent as Buffer).includes('never-prepared')).toBe(false);
  });

  it('are taken whole after a refused FunctionCall ended the portal, and the Execute is described first', async () => {
    const { s, whole, front } = await preparedSession();
    await front(serialize.bind({ statement: 'q', values: ['1'] }));
    await front(serialize.flush());
    await back(s, typedMessage('2', Buffer.alloc(0)));
    const call = Buffer.concat([Buffer.from('F'), Buffer.from([0, 0, 0, 14]), Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0])]);
    expect(await front(call)).toBeDefined(); // refused: a call that fails upstream goes instead
    await back(s, errorResponse({ severity: 'ERROR', code: '42883', message: 'pgveil refused the message' }));
    await back(s, readyForQuery('I'));
    whole.length = 0;
    expect(await front(serialize.describe({ type: 'P' }))).toBeUndefined();
    const execute = await front(serialize.execute({}));
    expect(whole).toEqual([D, E]);
    expect(execute?.[0]).toBe(D); // pgveil's own Describe of the portal, then the Execute
  });
});
