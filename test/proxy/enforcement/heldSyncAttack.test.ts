/**
 * Attacks on the accounting of a Sync sent while a COPY FROM STDIN may start (FrontendPolicy
 * syncMessage / syncOnceCopyDecided, ProtocolState's COPY IN state). Each asserts the safe outcome:
 * no plaintext stored, no unmasked value returned, the session consistent or ended.
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { openRawSession, rawFrame as frame, type BackendMessage, type RawSession } from '../support/rawProtocol.js';
import { ANALYST, useDirectHarness, SUPPORT, type TestAccount } from './support/policyHarness.js';

const SSN = '987-65-4321';
const SSN_2 = '876-54-3219';
const SSN_3 = '765-43-2198';
const PHONE = '+1 555 010 9911';
const NOTE = 'held-sync attack phone';

const texts = (messages: BackendMessage[]): string => messages.map((m) => `${m.type} ${m.body.toString('latin1')}`).join('\n');
const types = (messages: BackendMessage[]): string => messages.map((m) => m.type).join('');
const extended = (sql: string): Buffer[] => [serialize.parse({ text: sql }), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({})];
const copyData = (text: string): Buffer => frame('d', Buffer.from(text));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const h = useDirectHarness(`
    INSERT INTO customers (phone, note) VALUES ('${PHONE}', '${NOTE}');
    CREATE TABLE locked_copies (n int);
    CREATE TABLE refusing_copies (n int);
    CREATE FUNCTION refuse_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no rows today'; END $$;
    CREATE TRIGGER refuse BEFORE INSERT ON refusing_copies FOR EACH STATEMENT EXECUTE FUNCTION refuse_statement();
    CREATE VIEW copy_view AS SELECT n FROM locked_copies;
`);

/** Runs `run` in a raw session; whatever it does, no byte the session received holds the phone in the clear. */
async function session(account: TestAccount, run: (raw: RawSession) => Promise<void>): Promise<void> {
  const raw = await openRawSession(h.harness.via(account));
  const received: Buffer[] = [];
  raw.socket.on('data', (chunk: Buffer) => received.push(chunk));
  try {
    await run(raw);
  } finally {
    raw.close();
    expect(Buffer.concat(received).toString('latin1')).not.toContain(PHONE);
  }
}

/** Messages until `ms` pass with fewer than one more ReadyForQuery (those after the last ReadyForQuery are left unread). */
async function collect(raw: RawSession, ms: number): Promise<BackendMessage[]> {
  const got: BackendMessage[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      got.push(...await raw.readUntilReady(1, left));
    } catch {
      break;
    }
  }
  return got;
}

const SELECT_PHONE = `SELECT phone FROM customers WHERE note = '${NOTE}'`;

/** The phone came back, masked, and never in the clear. */
function expectMasked(replies: BackendMessage[]): void {
  expect(texts(replies)).not.toContain(PHONE);
  expect(texts(replies)).toMatch(/\*{3} 9911/);
}

/** The session still ties each reply to its statement: the phone is read masked. */
async function expectMaskedPhone(raw: RawSession): Promise<void> {
  raw.send(serialize.query(SELECT_PHONE));
  const replies = await raw.readUntilReady();
  expect(types(replies)).toBe('TDCZ');
  expectMasked(replies);
}

/** The upstream backend of a session waiting on a lock for a COPY of `table`. */
async function waitingBackend(table: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const found = await h.direct.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [`COPY ${table}%`]);
    if (found.rows[0] !== undefined) return found.rows[0].pid;
    await sleep(50);
  }
  throw new Error('no backend waits for the COPY');
}

async function expectNoPlaintextSsn(ssn = SSN): Promise<void> {
  const stored = await h.direct.query<{ n: string }>('SELECT count(*) AS n FROM customers WHERE ssn = $1', [ssn]);
  expect(stored.rows[0]?.n).toBe('0');
}

describe('a Sync that arrives while the CopyInResponse waits for a catalog reading', () => {
  // DDL makes the catalog stale: the CopyInResponse of a COPY into a protected table then waits for
  // a reading (BackendPolicy.copyStart), the COPY already taken off its reply, while PostgreSQL has
  // opened it. A COPY FREEZE outside the transaction that created the table fails right after
  // opening: a Sync forwarded then is answered, and must be counted, or the Query behind it is
  // taken as skipped and its rows leave unplanned (the phone in the clear).
  it.each([0, 40])('a prepared COPY FREEZE failing right after it opens, Sync + Query %i ms after its Execute', async (delay) => {
    await session(ANALYST, async (raw) => {
      raw.send([serialize.parse({ name: 'cp', text: 'COPY customers (ssn, note) FROM STDIN (FREEZE)' }),
        serialize.parse({ name: 'ddl', text: 'DROP TABLE IF EXISTS no_such_table' }), serialize.sync()]);
      expect(types(await raw.readUntilReady())).toBe('11Z');
      // The DDL completes (the catalog goes stale) after the COPY's Bind was checked, before its CopyInResponse.
      raw.send([serialize.bind({ statement: 'ddl' }), serialize.execute({}), serialize.bind({ statement: 'cp' }), serialize.execute({})]);
      if (delay > 0) await sleep(delay);
      raw.send([serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await collect(raw, 1_500);
      expect(texts(replies)).not.toContain(PHONE);
      if (raw.socket.destroyed || /08P01/.test(texts(replies))) return; // ended: fine
      // The held Sync was dropped (PostgreSQL skips the Query, after the COPY's error, up to a Sync):
      // the client ends the COPY, as libpq does, and syncs.
      raw.send([frame('c'), serialize.sync()]);
      const rest = await raw.readUntilReady(1, 3_000);
      expect(texts(rest)).not.toContain(PHONE);
      await expectMaskedPhone(raw);
    });
  });
});

describe('the same miscount, on the write path', () => {
  it('a statement redefined behind the uncounted Sync keeps its old (unprotected) plan: a Bind of plaintext is not stored', async () => {
    await session(ANALYST, async (raw) => {
      raw.send([serialize.parse({ name: 's1', text: 'INSERT INTO customers (note) VALUES ($1)' }),
        serialize.parse({ name: 'cp', text: 'COPY customers (ssn, note) FROM STDIN (FREEZE)' }),
        serialize.parse({ name: 'ddl', text: 'DROP TABLE IF EXISTS no_such_table' }), serialize.sync()]);
      expect(types(await raw.readUntilReady())).toBe('111Z');
      raw.send([serialize.bind({ statement: 'ddl' }), serialize.execute({}), serialize.bind({ statement: 'cp' }), serialize.execute({}),
        serialize.sync(), serialize.query("DEALLOCATE s1; PREPARE s1 (text) AS INSERT INTO customers (ssn, note) VALUES ($1, 'write attack')")]);
      await collect(raw, 1_500);
      raw.send([serialize.bind({ statement: 's1', values: [SSN] }), serialize.execute({}), serialize.sync()]);
      await collect(raw, 1_500);
    });
    await expectNoPlaintextSsn();
  });
});

describe('a Sync held while the COPY cannot open (its table locked)', () => {
  async function locked(run: (raw: RawSession) => Promise<void>): Promise<void> {
    const locker = await h.harness.direct();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE locked_copies IN ACCESS EXCLUSIVE MODE');
    try {
      await session(SUPPORT, run);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end().catch(() => undefined);
    }
  }

  it('other sessions run meanwhile; a cancel answers the held Sync, and the Query behind it is masked', async () => {
    await locked(async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const pid = await waitingBackend('locked_copies');
      await session(SUPPORT, expectMaskedPhone);
      const other = await h.harness.connect(ANALYST);
      expect((await other.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      await other.end();
      await h.direct.query('SELECT pg_cancel_backend($1)', [pid]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toBe('12nEZTDCZ');
      expectMasked(replies);
      await expectMaskedPhone(raw);
    });
  });

  it('statement_timeout while the Sync is held', async () => {
    await locked(async (raw) => {
      raw.send(serialize.query("SET statement_timeout = '300ms'"));
      await raw.readUntilReady();
      raw.send([...extended('COPY locked_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toBe('12nEZTDCZ');
      expect(texts(replies)).toContain('statement timeout');
      expectMasked(replies);
      raw.send(serialize.query('RESET statement_timeout'));
      await raw.readUntilReady();
      await expectMaskedPhone(raw);
    });
  });

  it('the client goes away while its Sync is held: its upstream backend goes too', async () => {
    await locked(async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), serialize.sync()]);
      const pid = await waitingBackend('locked_copies');
      raw.close();
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        await sleep(50);
        gone = (await h.direct.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0;
      }
      expect(gone).toBe(true);
    });
  });

  it('the table unlocks: the COPY opens, the held Sync is dropped, and a Query pipelined behind it ends the session', async () => {
    const locker = await h.harness.direct();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE locked_copies IN ACCESS EXCLUSIVE MODE');
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      await waitingBackend('locked_copies');
      await locker.query('ROLLBACK');
      await locker.end();
      const replies = await raw.readUntilClosed();
      expect(texts(replies)).not.toContain(PHONE);
      expect(texts(replies)).toMatch(/unexpected message type 0x51 during COPY/);
    });
  });
});

describe('COPY messages and errors around a held Sync', () => {
  it('CopyDone before the CopyInResponse, then Sync: answered once', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), frame('c'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toBe('12nGCZTDCZ');
      expectMasked(replies);
      await expectMaskedPhone(raw);
    });
  });

  it('CopyFail before the CopyInResponse, then Sync: answered once', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), frame('f', Buffer.from('client gave up\0')), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toBe('12nGEZTDCZ');
      expectMasked(replies);
      await expectMaskedPhone(raw);
    });
  });

  it('data, CopyDone and Sync all before the CopyInResponse', async () => {
    await session(ANALYST, async (raw) => {
      raw.send([...extended('COPY customers (ssn, note) FROM STDIN'), serialize.sync(), copyData(`${SSN_2}\tall at once\n`), frame('c'), serialize.sync(),
        serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toBe('12nGCZTDCZ');
      expectMasked(replies);
    });
    await expectNoPlaintextSsn(SSN_2);
  });

  it('a COPY failed by its BEFORE STATEMENT trigger in a simple Query, with a Sync and a Query behind', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([serialize.query('COPY refusing_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await collect(raw, 1_500);
      expectMasked(replies);
      await expectMaskedPhone(raw);
    });
  });

  it('a COPY into a view (fails once opened) behind an earlier failing Execute in the same batch', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('SELECT 1/0'), ...extended('COPY copy_view FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(2);
      expect(types(replies)).toMatch(/^1E?Z?.*EZ?TDCZ$|^1EZTDCZ$/);
      expectMasked(replies);
      raw.send([...extended('COPY copy_view FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const opened = await raw.readUntil('E');
      expect(types(opened)).toBe('12nGE');
      expect(texts(opened)).toContain('cannot copy to view');
      // The held Sync was dropped: PostgreSQL skips the Query up to the client's next Sync.
      raw.send([frame('c'), serialize.sync()]);
      expect(types(await raw.readUntilReady())).toBe('Z');
      await expectMaskedPhone(raw);
    });
  });

  it('COPY in an aborted transaction block, with Syncs held', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send(serialize.query('BEGIN'));
      await raw.readUntilReady();
      raw.send([...extended('COPY refusing_copies FROM STDIN'), serialize.sync(), copyData('1\n'), frame('c'), serialize.sync()]);
      const failed = await raw.readUntilReady();
      expect(types(failed)).toBe('12nGEZ');
      raw.send([...extended('COPY locked_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const aborted = await raw.readUntilReady(2);
      expect(types(aborted)).toBe('EZEZ');
      raw.send(serialize.query('ROLLBACK'));
      await raw.readUntilReady();
      await expectMaskedPhone(raw);
    });
  });

  it('two COPY Executes and a Sync in one batch: PostgreSQL ends the session', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), ...extended('COPY locked_copies FROM STDIN'), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await collect(raw, 1_500);
      expect(texts(replies)).not.toContain(PHONE);
    });
  });

  it('Flush and Describe/Close of another statement between the COPY Execute and its Sync', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY locked_copies FROM STDIN'), frame('H'), serialize.sync(), frame('H'), copyData('7\n'), frame('c'), serialize.sync(),
        serialize.describe({ type: 'S', name: '' }), serialize.close({ type: 'P', name: '' }), serialize.sync(), serialize.query(SELECT_PHONE)]);
      const replies = await raw.readUntilReady(3);
      expect(texts(replies)).not.toContain(PHONE);
      expectMasked(replies);
      await expectMaskedPhone(raw);
    });
  });
});

describe('COPY data that arrives while the CopyInResponse waits for a catalog reading', () => {
  it('is not dropped nor sent unprotected: the COPY, behind DDL that may change client_encoding, is failed and the session goes on', async () => {
    await session(ANALYST, async (raw) => {
      raw.send([serialize.parse({ name: 'cp', text: 'COPY customers (ssn, note) FROM STDIN' }),
        serialize.parse({ name: 'ddl', text: 'DROP TABLE IF EXISTS no_such_table' }), serialize.sync()]);
      expect(types(await raw.readUntilReady())).toBe('11Z');
      raw.send([serialize.bind({ statement: 'ddl' }), serialize.execute({}), serialize.bind({ statement: 'cp' }), serialize.execute({}),
        serialize.sync(), copyData(`${SSN_3}\tcopied during a catalog reading\n`), frame('c'), serialize.sync()]);
      const replies = await raw.readUntilReady(1, 5_000);
      expect(types(replies)).toBe('2NC2GEZ');
      expect(texts(replies)).toMatch(/pgveil refused the COPY: it loads protected columns, and when it starts client_encoding may not be UTF8/);
      await expectMaskedPhone(raw);
    });
    await expectNoPlaintextSsn(SSN_3);
    const stored = await h.direct.query("SELECT ssn FROM customers WHERE note = 'copied during a catalog reading'");
    expect(stored.rows).toHaveLength(0);
  });
});
