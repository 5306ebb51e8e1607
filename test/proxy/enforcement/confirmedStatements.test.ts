/**
 * pgveil's view of named statements and portals follows what the server confirmed, never what
 * was sent: a Parse that fails (duplicate name, refused by pgveil, bad type OID) leaves the
 * statement the server still holds, and pgveil keeps protecting its Binds. The reverse holds too:
 * a statement the server replaced or dropped no longer tokenises unrelated values.
 */
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openRawSession, type BackendMessage, type RawSession } from '../support/rawProtocol.js';
import { APP, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';

const PLAINTEXT_SSN = '123-45-6789';
const PROTECTED_INSERT = "INSERT INTO customers (ssn, note) VALUES ($1, 'confirmed')";
/** pgveil refuses it: a DO block naming a protected table cannot be analysed. */
const REFUSED_BY_PGVEIL = 'DO $$ BEGIN PERFORM ssn FROM customers; END $$';

let harness: PolicyHarness;
let direct: pg.Client;
const sessions: RawSession[] = [];

beforeAll(async () => {
  harness = await startPolicyHarness();
  direct = await harness.direct();
});

afterAll(async () => {
  for (const session of sessions) session.close();
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});

beforeEach(async () => {
  await direct.query('DELETE FROM customers');
});

async function raw(account = APP): Promise<RawSession> {
  const session = await openRawSession(harness.via(account));
  sessions.push(session);
  return session;
}

/** The fields of an ErrorResponse, by their one-letter code. */
function errorFields(message: BackendMessage): Map<string, string> {
  const fields = new Map<string, string>();
  let at = 0;
  while (at < message.body.length && message.body[at] !== 0) {
    const code = String.fromCharCode(message.body[at] as number);
    const end = message.body.indexOf(0, at + 1);
    fields.set(code, message.body.toString('utf8', at + 1, end));
    at = end + 1;
  }
  return fields;
}

function errorCodes(messages: BackendMessage[]): string[] {
  return messages.filter((m) => m.type === 'E').map((m) => errorFields(m).get('C') ?? '');
}

/** The first column of each DataRow, as text. */
function dataValues(messages: BackendMessage[]): string[] {
  return messages.filter((m) => m.type === 'D').map((m) => {
    const length = m.body.readInt32BE(2);
    return m.body.toString('utf8', 6, 6 + length);
  });
}

async function storedSsns(): Promise<string[]> {
  return (await direct.query<{ ssn: string }>("SELECT ssn FROM customers WHERE note = 'confirmed'")).rows.map((r) => r.ssn);
}

async function expectProtectedAtRest(): Promise<void> {
  const stored = await storedSsns();
  expect(stored.length).toBeGreaterThan(0);
  expect(stored).not.toContain(PLAINTEXT_SSN);
}

function bindAndRun(statement: string, value: string): Buffer[] {
  return [serialize.bind({ statement, values: [value] }), serialize.execute(), serialize.sync()];
}

describe('a failed re-Parse leaves the statement the server holds', () => {
  const replacements: [string, Buffer][] = [
    ['a duplicate name the server refuses (42P05)', serialize.parse({ name: 's1', text: 'SELECT $1::text' })],
    ['a Parse pgveil refuses', serialize.parse({ name: 's1', text: REFUSED_BY_PGVEIL })],
    ['a bad parameter type OID', serialize.parse({ name: 's1', text: 'SELECT $1', types: [999_999] })],
  ];

  for (const [label, replacement] of replacements) {
    it(`${label}: a later Bind is still protected`, async () => {
      const session = await raw();
      session.send([serialize.parse({ name: 's1', text: PROTECTED_INSERT }), serialize.sync()]);
      expect(errorCodes(await session.readUntilReady())).toEqual([]);
      session.send([replacement, serialize.sync()]);
      expect(errorCodes(await session.readUntilReady())).toHaveLength(1);
      session.send(bindAndRun('s1', PLAINTEXT_SSN));
      expect(errorCodes(await session.readUntilReady())).toEqual([]);
      await expectProtectedAtRest();
    });
  }

  it('pipelined in one write across Syncs, a duplicate of the same statement still protects', async () => {
    const session = await raw();
    session.send([
      serialize.parse({ name: 's2', text: PROTECTED_INSERT }), serialize.sync(),
      serialize.parse({ name: 's2', text: PROTECTED_INSERT }), serialize.sync(),
      ...bindAndRun('s2', PLAINTEXT_SSN),
    ]);
    const codes = errorCodes(await session.readUntilReady(3));
    expect(codes).toEqual(['42P05']);
    await expectProtectedAtRest();
  });

  it('pipelined across Syncs, a Bind that may meet either of two different statements is refused', async () => {
    const session = await raw();
    session.send([
      serialize.parse({ name: 's3', text: PROTECTED_INSERT }), serialize.sync(),
      serialize.parse({ name: 's3', text: 'SELECT $1::text' }), serialize.sync(),
      ...bindAndRun('s3', PLAINTEXT_SSN),
    ]);
    const messages = await session.readUntilReady(3);
    expect(errorCodes(messages)).toEqual(['42P05', '0A000']);
    expect(messages.map((m) => m.body.toString('utf8')).join('')).not.toContain(PLAINTEXT_SSN);
    expect(await storedSsns()).toEqual([]);
    // Once the server answered, the name is certain again: the INSERT, protected.
    session.send(bindAndRun('s3', PLAINTEXT_SSN));
    expect(errorCodes(await session.readUntilReady())).toEqual([]);
    await expectProtectedAtRest();
  });

  it('in the same batch, a Bind after a replacing Parse runs only if that Parse succeeded', async () => {
    const session = await raw();
    session.send([serialize.parse({ name: 's4', text: PROTECTED_INSERT }), serialize.sync()]);
    await session.readUntilReady();
    session.send([serialize.parse({ name: 's4', text: 'SELECT $1::text' }), ...bindAndRun('s4', PLAINTEXT_SSN)]);
    expect(errorCodes(await session.readUntilReady())).toEqual(['42P05']);
    expect(await storedSsns()).toEqual([]);
  });

  it('the unnamed statement is gone after a failed Parse of it, as the server drops it first', async () => {
    const session = await raw();
    session.send([serialize.parse({ text: PROTECTED_INSERT }), serialize.sync()]);
    await session.readUntilReady();
    session.send([serialize.parse({ text: 'SELECT $1', types: [999_999] }), serialize.sync()]);
    await session.readUntilReady();
    session.send(bindAndRun('', PLAINTEXT_SSN));
    expect(errorCodes(await session.readUntilReady())).toEqual(['26000']);
    expect(await storedSsns()).toEqual([]);
  });
});

describe('a statement the server replaced or dropped no longer protects unrelated values', () => {
  it('after a failed duplicate Parse, the plain statement the server kept returns the value unchanged', async () => {
    const session = await raw();
    session.send([serialize.parse({ name: 'p1', text: 'SELECT $1::text' }), serialize.sync()]);
    await session.readUntilReady();
    session.send([serialize.parse({ name: 'p1', text: PROTECTED_INSERT }), serialize.sync()]);
    expect(errorCodes(await session.readUntilReady())).toEqual(['42P05']);
    session.send(bindAndRun('p1', PLAINTEXT_SSN));
    expect(dataValues(await session.readUntilReady())).toEqual([PLAINTEXT_SSN]);
    expect(await storedSsns()).toEqual([]);
  });

  it('after DEALLOCATE and an SQL PREPARE of the name, Binds follow the new statement', async () => {
    const session = await raw();
    session.send([serialize.parse({ name: 'p2', text: PROTECTED_INSERT }), serialize.sync()]);
    await session.readUntilReady();
    session.send(serialize.query('DEALLOCATE p2; PREPARE p2(text) AS SELECT $1'));
    expect(errorCodes(await session.readUntilReady())).toEqual([]);
    session.send(bindAndRun('p2', PLAINTEXT_SSN));
    expect(dataValues(await session.readUntilReady())).toEqual([PLAINTEXT_SSN]);
    expect(await storedSsns()).toEqual([]);
  });

  it('after DEALLOCATE ALL and after DISCARD ALL, a Bind of the old name is refused like the server would', async () => {
    for (const drop of ['DEALLOCATE ALL', 'DISCARD ALL']) {
      const session = await raw();
      session.send([serialize.parse({ name: 'p3', text: PROTECTED_INSERT }), serialize.sync()]);
      await session.readUntilReady();
      session.send(serialize.query(drop));
      expect(errorCodes(await session.readUntilReady())).toEqual([]);
      session.send(bindAndRun('p3', PLAINTEXT_SSN));
      expect(errorCodes(await session.readUntilReady())).toEqual(['26000']);
    }
    expect(await storedSsns()).toEqual([]);
  });

  it('a Close the server confirmed drops the statement', async () => {
    const session = await raw();
    session.send([serialize.parse({ name: 'p4', text: PROTECTED_INSERT }), serialize.sync()]);
    await session.readUntilReady();
    session.send([serialize.close({ type: 'S', name: 'p4' }), serialize.sync()]);
    await session.readUntilReady();
    session.send([serialize.parse({ name: 'p4', text: 'SELECT $1::text' }), ...bindAndRun('p4', PLAINTEXT_SSN)]);
    expect(dataValues(await session.readUntilReady())).toEqual([PLAINTEXT_SSN]);
  });
});

describe('SQL EXECUTE of a statement with protected parameters', () => {
  it('protects its constant arguments (also under EXPLAIN ANALYZE): no plaintext is stored', async () => {
    const session = await raw();
    session.send([serialize.parse({ name: 'e1', text: PROTECTED_INSERT }), serialize.sync()]);
    await session.readUntilReady();
    for (const sql of [`EXECUTE e1('${PLAINTEXT_SSN}')`, `EXPLAIN ANALYZE EXECUTE e1('${PLAINTEXT_SSN}')`]) {
      session.send(serialize.query(sql));
      const messages = await session.readUntilReady();
      expect(errorCodes(messages)).toEqual([]);
      expect(messages.map((m) => m.body.toString('utf8')).join('')).not.toContain(PLAINTEXT_SSN);
    }
    // CREATE TABLE AS EXECUTE of an INSERT fails in PostgreSQL itself; its argument is protected all the same.
    session.send(serialize.query(`CREATE TABLE copied AS EXECUTE e1('${PLAINTEXT_SSN}')`));
    expect(errorCodes(await session.readUntilReady())).toHaveLength(1);
    const stored = await storedSsns();
    expect(stored).toHaveLength(2);
    expect(stored).not.toContain(PLAINTEXT_SSN);
    session.send(serialize.query('EXECUTE e1(upper($$x$$))'));
    expect(errorCodes(await session.readUntilReady())).toEqual(['0A000']);
    await direct.query("DELETE FROM customers WHERE note = 'confirmed'");
  });

  it('EXECUTE with arguments of a name pgveil never saw prepared is refused; a plain PREPARE then EXECUTE works', async () => {
    const session = await raw();
    session.send(serialize.query(`EXECUTE unknown_to_pgveil('${PLAINTEXT_SSN}')`));
    expect(errorCodes(await session.readUntilReady())).toEqual(['26000']);
    session.send(serialize.query('PREPARE plain(int) AS SELECT $1 + 1; EXECUTE plain(41)'));
    const messages = await session.readUntilReady();
    expect(errorCodes(messages)).toEqual([]);
    expect(dataValues(messages)).toEqual(['42']);
  });
});

describe('portals follow the server too', () => {
  it('a named portal the server kept after a failed re-Bind is read with its real description (masked for support)', async () => {
    await direct.query("INSERT INTO customers (phone, note) VALUES ('+1 (555) 010-4477', 'confirmed')");
    const session = await raw(SUPPORT);
    session.send(serialize.query('BEGIN'));
    await session.readUntilReady();
    session.send([
      serialize.parse({ name: 'ph', text: "SELECT phone FROM customers WHERE note = 'confirmed'" }),
      serialize.parse({ name: 'harmless', text: "SELECT 'nothing'::text AS phone" }),
      // Described: its rows need no description of their own, and name no protected column.
      serialize.describe({ type: 'S', name: 'harmless' }),
      serialize.bind({ portal: 'c1', statement: 'ph' }), serialize.sync(),
    ]);
    expect(errorCodes(await session.readUntilReady())).toEqual([]);
    session.send([serialize.bind({ portal: 'c1', statement: 'harmless' }), serialize.sync()]);
    expect(errorCodes(await session.readUntilReady())).toEqual(['42P03']);
    session.send(serialize.query('ROLLBACK'));
    await session.readUntilReady();
    // A savepoint keeps the transaction usable after the failed Bind; the server's c2 is still the phone query.
    session.send(serialize.query('BEGIN'));
    await session.readUntilReady();
    session.send([
      serialize.parse({ name: 'ph2', text: "SELECT phone FROM customers WHERE note = 'confirmed'" }),
      serialize.parse({ name: 'harmless2', text: "SELECT 'nothing'::text AS phone" }),
      serialize.describe({ type: 'S', name: 'harmless2' }),
      serialize.bind({ portal: 'c2', statement: 'ph2' }), serialize.sync(),
    ]);
    await session.readUntilReady();
    session.send(serialize.query('SAVEPOINT before_rebind'));
    await session.readUntilReady();
    session.send([serialize.bind({ portal: 'c2', statement: 'harmless2' }), serialize.sync()]);
    expect(errorCodes(await session.readUntilReady())).toEqual(['42P03']);
    session.send(serialize.query('ROLLBACK TO SAVEPOINT before_rebind'));
    await session.readUntilReady();
    session.send([serialize.execute({ portal: 'c2' }), serialize.sync()]);
    const messages = await session.readUntilReady();
    expect(errorCodes(messages)).toEqual([]);
    const values = dataValues(messages);
    expect(values).toHaveLength(1);
    expect(values).not.toContain('+1 (555) 010-4477');
    session.send(serialize.query('ROLLBACK'));
    await session.readUntilReady();
  });
});
