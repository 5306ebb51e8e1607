/**
 * Texts that touch no protected column are answered at once, from cached analyses and a
 * StatementContext kept between messages. What the answer depends on can change: the session's
 * search_path, the policy file, the catalog (DDL). After each change, a text answered as plain
 * before is analysed again and protected or refused as a fresh session would; statements the
 * rules refuse are refused from the cache as they were the first time.
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { commandCompleteMessage, dataRowMessage, readyForQuery, rowDescriptionMessage, typedMessage } from '../../../src/proxy/protocol/messages.js';
import type { MessageVerdict } from '../../../src/proxy/session/sessionHooks.js';
import { relationOf } from './support/catalogFixtures.js';
import { deliverBackend } from './support/hookRouting.js';
import { back, completed, front, frontNow, harness as reloadableHarness, prepared, session, type Harness } from './support/reloadableHooks.js';

const POLICIES = `
columns:
  crm.customers.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext, support: mask } }
`;
const WITH_NOTE = `${POLICIES}  public.accounts.note: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
`;

const CUSTOMER_COLUMNS = [
  { attnum: 1, name: 'id', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'ssn', typeOid: 25, typmod: -1 },
];
const PUBLIC_CUSTOMERS = relationOf(16400, 'public', 'customers', CUSTOMER_COLUMNS);
const CRM_CUSTOMERS = relationOf(16401, 'crm', 'customers', CUSTOMER_COLUMNS);
const ACCOUNTS = relationOf(16500, 'public', 'accounts', [
  { attnum: 1, name: 'aid', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'note', typeOid: 25, typmod: -1 },
]);

const harness = (relations: Parameters<typeof reloadableHarness>[0]): Promise<Harness> => reloadableHarness(relations, POLICIES);

function sqlOf(verdict: Buffer | undefined): string | undefined {
  return verdict === undefined ? undefined : verdict.toString('utf8', 5, verdict.length - 1);
}

const INSERT = "INSERT INTO customers (ssn) VALUES ('123-45-6789')";
const INSERT_NOTE = "INSERT INTO accounts (note) VALUES ('123-45-6789')";

describe('the plain fast path', () => {
  it('answers a text that touches no protected column at once, with the same bytes', async () => {
    const s = session(await harness([CRM_CUSTOMERS, ACCOUNTS]), ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1'); // the catalog's first load
    for (const aid of [1, 22, 333]) {
      const verdict = frontNow(s, serialize.query(`SELECT note FROM accounts WHERE aid = ${aid}`));
      expect(verdict).toBeUndefined();
      s.state.frontendMessage(0x51);
      s.state.clearExpected();
      await back(s, commandCompleteMessage('SELECT 1'));
      await back(s, readyForQuery('I'));
    }
  });

  it('refuses from the cache what it refused the first time (statement rules, protected mentions)', async () => {
    const s = session(await harness([CRM_CUSTOMERS, ACCOUNTS]), ['support']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    for (const sql of ["COPY accounts FROM '/etc/passwd'", 'DO $$ BEGIN PERFORM 1 FROM crm.customers; END $$', 'CREATE VIEW v AS SELECT 1']) {
      for (let round = 0; round < 2; round++) {
        const verdict = await front(s, serialize.query(sql));
        expect(sqlOf(verdict)).toBe('pgveil refused this statement');
        await back(s, readyForQuery('I'));
      }
    }
  });

  it('analyses a text again after search_path changes what its names denote', async () => {
    const s = session(await harness([PUBLIC_CUSTOMERS, CRM_CUSTOMERS]), ['app']);
    await completed(s, 'SET search_path TO public', 'SET');
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
    await completed(s, 'SET search_path TO crm', 'SET');
    const protectedInsert = sqlOf(await completed(s, INSERT, 'INSERT 0 1'));
    expect(protectedInsert).toBeDefined();
    expect(protectedInsert).not.toContain('123-45-6789');
    await completed(s, 'SET search_path TO public', 'SET');
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
  });

  it('analyses a text again after a SET that the server has not answered yet, and after one that failed', async () => {
    const s = session(await harness([PUBLIC_CUSTOMERS, CRM_CUSTOMERS]), ['app']);
    await completed(s, 'SET search_path TO public', 'SET');
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
    // One Query: the SET is assumed to succeed for the INSERT after it.
    const both = sqlOf(await front(s, serialize.query(`SET search_path TO crm; ${INSERT}`)));
    expect(both).toBeDefined();
    expect(both).not.toContain('123-45-6789');
    await back(s, typedMessage('E', Buffer.from('SERROR\0C42P01\0Mfailed\0\0')));
    await back(s, readyForQuery('I'));
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
  });

  it('analyses a text again after a policy reload', async () => {
    const h = await harness([CRM_CUSTOMERS, ACCOUNTS]);
    const s = session(h, ['app']);
    expect(await completed(s, INSERT_NOTE, 'INSERT 0 1')).toBeUndefined();
    h.reload(WITH_NOTE);
    const protectedInsert = sqlOf(await completed(s, INSERT_NOTE, 'INSERT 0 1'));
    expect(protectedInsert).toBeDefined();
    expect(protectedInsert).not.toContain('123-45-6789');
    h.reload(POLICIES);
    expect(await completed(s, INSERT_NOTE, 'INSERT 0 1')).toBeUndefined();
  });

  it('plans a result again after a policy reload, though its RowDescription repeats byte for byte', async () => {
    const h = await harness([CRM_CUSTOMERS, ACCOUNTS]);
    const s = session(h, ['app']);
    const description = rowDescriptionMessage([{ name: 'note', tableOid: 16500, attnum: 2, typeOid: 25, typmod: -1, format: 0 }]);
    const stored = '123-45-6789';
    const select = async (): Promise<MessageVerdict[]> => {
      await front(s, serialize.query('SELECT note FROM accounts'));
      const verdicts: MessageVerdict[] = [];
      for (const frame of [description, dataRowMessage([Buffer.from(stored)]), commandCompleteMessage('SELECT 1'), readyForQuery('I')]) {
        verdicts.push(await deliverBackend(s.hooks, s.context, s.state, frame));
      }
      return verdicts;
    };
    expect((await select())[1]).toBeUndefined(); // no policy on the column: the row passes
    h.reload(WITH_NOTE);
    const revealed = await select();
    expect(revealed[1]?.length).toBe(0); // held for its batch
    expect(revealed[2]).toBeDefined();
    expect(revealed[2]?.includes(stored)).toBe(false);
    h.reload(POLICIES);
    expect((await select())[1]).toBeUndefined();
  });

  it('plans a described portal as its RowDescription arrives: rows with no planned column stream by unread', async () => {
    const h = await harness([CRM_CUSTOMERS, ACCOUNTS]);
    const s = session(h, ['app']);
    await prepared(s, 'q', 'SELECT note FROM accounts WHERE aid = $1');
    const description = rowDescriptionMessage([{ name: 'note', tableOid: 16500, attnum: 2, typeOid: 25, typmod: -1, format: 0 }]);
    const stored = '123-45-6789';
    /** Bind, Describe portal, Execute, Sync as libpq sends them; whether the row is asked for whole, and what is sent for it. */
    const run = async (): Promise<{ whole: boolean | undefined; row: MessageVerdict; complete: MessageVerdict }> => {
      for (const frame of [serialize.bind({ statement: 'q', values: ['1'] }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]) await front(s, frame);
      await back(s, typedMessage('2', Buffer.alloc(0)));
      await back(s, description);
      const row = dataRowMessage([Buffer.from(stored)]);
      s.state.backendMessage(0x44, 0);
      const whole = s.hooks.wantsBackendMessage?.(0x44, row, 0, row.length, s.context);
      const rowVerdict = await deliverBackend(s.hooks, s.context, s.state, row);
      const complete = await deliverBackend(s.hooks, s.context, s.state, commandCompleteMessage('SELECT 1'));
      await back(s, readyForQuery('I'));
      return { whole, row: rowVerdict, complete };
    };
    const plain = await run();
    expect(plain.whole).toBe(false);
    expect(plain.row).toBeUndefined();
    h.reload(WITH_NOTE);
    const revealed = await run();
    expect(revealed.whole).toBe(true);
    expect(revealed.row?.length).toBe(0); // held for its batch
    expect(revealed.complete?.includes(stored)).toBe(false);
    h.reload(POLICIES);
    expect((await run()).whole).toBe(false);
  });

  it('analyses a text again after DDL puts a protected table first on the path', async () => {
    const h = await harness([PUBLIC_CUSTOMERS]);
    const s = session(h, ['app']);
    await completed(s, 'SET search_path TO crm, public', 'SET');
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
    expect(await completed(s, INSERT, 'INSERT 0 1')).toBeUndefined();
    h.relations = [PUBLIC_CUSTOMERS, CRM_CUSTOMERS];
    await completed(s, 'CREATE TABLE crm.customers (id int, ssn text)', 'CREATE TABLE');
    const protectedInsert = sqlOf(await completed(s, INSERT, 'INSERT 0 1'));
    expect(protectedInsert).toBeDefined();
    expect(protectedInsert).not.toContain('123-45-6789');
  });

  it('plans a prepared statement known to be plain once, and binds it at once', async () => {
    const s = session(await harness([CRM_CUSTOMERS, ACCOUNTS]), ['app']);
    await completed(s, 'SELECT 1', 'SELECT 1');
    expect(frontNow(s, serialize.parse({ name: 'q', text: 'SELECT note FROM accounts WHERE aid = $1', types: [] }))).toBeUndefined();
    s.state.frontendMessage(0x50);
    await front(s, serialize.sync());
    await back(s, typedMessage('1', Buffer.alloc(0)));
    await back(s, readyForQuery('I'));
    for (const aid of ['1', '2']) {
      expect(frontNow(s, serialize.bind({ statement: 'q', values: [aid] }))).toBeUndefined();
      s.state.frontendMessage(0x42);
      s.state.clearExpected();
      await front(s, serialize.execute({}));
      await front(s, serialize.sync());
      await back(s, typedMessage('2', Buffer.alloc(0)));
      await back(s, commandCompleteMessage('SELECT 1'));
      await back(s, readyForQuery('I'));
    }
  });
});
