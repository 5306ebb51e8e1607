/**
 * A Sync sent while a COPY FROM STDIN may start or runs. PostgreSQL ignores a Sync in COPY IN mode
 * and answers one that arrives once the COPY failed, or when it never started: if pgveil counted
 * one answer too many or too few, later replies would be tied to the wrong statements (a masked
 * column's rows planned as nothing). libpq's PQexecParams and tokio-postgres send Execute, Sync
 * before the CopyInResponse: pgveil holds that Sync until the server has either opened the COPY
 * (then the server is never sent it) or answered otherwise. A Sync during the COPY's data ends the
 * session (whether PostgreSQL reads it before or after a failure depends on the rows).
 * Sent as raw frames, by SUPPORT (masks only) and ANALYST (tokens only).
 */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { openRawSession, rawFrame as frame, type BackendMessage, type RawSession } from '../support/rawProtocol.js';
import { ANALYST, useDirectHarness, SUPPORT, type TestAccount } from './support/policyHarness.js';

const SSN = '123-45-6789';
const PHONE = '+1 555 010 4477';

const texts = (messages: BackendMessage[]): string => messages.map((m) => `${m.type} ${m.body.toString('latin1')}`).join('\n');
const types = (messages: BackendMessage[]): string => messages.map((m) => m.type).join('');
const extended = (sql: string): Buffer[] => [serialize.parse({ text: sql }), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({})];
const copyData = (text: string): Buffer => frame('d', Buffer.from(text));

const h = useDirectHarness(`
    INSERT INTO customers (phone, note) VALUES ('${PHONE}', 'stored plaintext (passthrough)');
    CREATE TABLE refusing_copies (n int);
    CREATE FUNCTION refuse_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no rows today'; END $$;
    CREATE TRIGGER refuse BEFORE INSERT ON refusing_copies FOR EACH STATEMENT EXECUTE FUNCTION refuse_statement();
    GRANT ALL ON refusing_copies TO PUBLIC;
`);

async function session(account: TestAccount, run: (raw: RawSession) => Promise<void>): Promise<void> {
  const raw = await openRawSession(h.harness.via(account));
  try {
    await run(raw);
  } finally {
    raw.close();
  }
}

/** The session still ties each reply to its statement: SUPPORT reads the passthrough phone masked. */
async function expectMaskedPhone(raw: RawSession): Promise<void> {
  raw.send(serialize.query("SELECT phone FROM customers WHERE note = 'stored plaintext (passthrough)'"));
  const replies = await raw.readUntilReady();
  expect(types(replies)).toBe('TDCZ');
  expect(texts(replies)).not.toContain(PHONE);
  expect(texts(replies)).toMatch(/\*{3} 4477/); // its mask
}

describe('Sync pipelined behind an Execute of COPY FROM STDIN (libpq PQexecParams)', () => {
  it('the COPY runs, its rows stored protected, and later replies keep their statements', async () => {
    await session(ANALYST, async (raw) => {
      raw.send([...extended('COPY customers (ssn, note) FROM STDIN'), serialize.sync()]);
      const opening = await raw.readUntil('G');
      expect(types(opening)).toBe('12nG');
      raw.send([copyData(`${SSN}\tlibpq copy\n`), frame('c'), serialize.sync()]);
      const done = await raw.readUntilReady();
      expect(texts(done)).toMatch(/^C COPY 1/m);
      expect(types(done)).toBe('CZ');
    });
    const stored = await h.direct.query<{ ssn: string }>("SELECT ssn FROM customers WHERE note = 'libpq copy'");
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]?.ssn).toMatch(/^\d{3}-\d{2}-\d{4}$/);
    expect(stored.rows[0]?.ssn).not.toBe(SSN);
    await session(SUPPORT, async (raw) => {
      raw.send(serialize.query('CREATE TEMP TABLE scratch (n int)'));
      expect(types(await raw.readUntilReady())).toBe('CZ');
      raw.send([...extended('COPY pg_temp.scratch FROM STDIN'), serialize.sync(), copyData('1\n'), frame('c'), serialize.sync()]);
      expect(types(await raw.readUntilReady())).toBe('12nGCZ');
      await expectMaskedPhone(raw);
    });
  });

  it('a COPY that fails once opened, before reading its rows, is answered by the Sync after its data', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY refusing_copies FROM STDIN'), serialize.sync(), copyData('1\n'), frame('c'), serialize.sync()]);
      const replies = await raw.readUntilReady();
      expect(types(replies)).toBe('12nGEZ');
      // The trigger's own message is withheld from this masked session (a function chooses what it says).
      expect(texts(replies)).toMatch(/^E .*CP0001\0.*pgveil withheld/m);
      expect(texts(replies)).not.toContain('no rows today');
      await expectMaskedPhone(raw);
    });
  });

  it('a COPY that fails before it opens: the held Sync is answered', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send([...extended('COPY pg_temp.missing FROM STDIN'), serialize.sync()]);
      const replies = await raw.readUntilReady();
      expect(types(replies)).toBe('12nEZ');
      await expectMaskedPhone(raw);
    });
  });

  it('two COPYs in one simple Query, each with a Sync sent before it opens', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send(serialize.query('CREATE TEMP TABLE scratch (n int)'));
      expect(types(await raw.readUntilReady())).toBe('CZ');
      raw.send([serialize.query('COPY pg_temp.scratch FROM STDIN; COPY pg_temp.scratch FROM STDIN'), serialize.sync(),
        copyData('1\n'), frame('c'), serialize.sync(), copyData('2\n'), frame('c')]);
      const replies = await raw.readUntilReady();
      expect(types(replies)).toBe('GCGCZ');
      await expectMaskedPhone(raw);
    });
  });

  it('a Parse pipelined into the COPY: PostgreSQL ends the session itself', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send(serialize.query('CREATE TEMP TABLE scratch (n int)'));
      expect(types(await raw.readUntilReady())).toBe('CZ');
      raw.send([...extended('COPY pg_temp.scratch FROM STDIN'), serialize.sync(), serialize.parse({ text: 'SELECT 1' }), serialize.sync()]);
      const replies = await raw.readUntilClosed();
      expect(types(replies)).toBe('12nGEE');
      expect(texts(replies)).toMatch(/unexpected message type 0x50 during COPY[^]*protocol synchronization was lost/);
    });
  });
});

describe('Sync during the COPY', () => {
  it('after CopyData the server may already have failed the COPY: the session ends, and nothing hidden runs', async () => {
    await session(ANALYST, async (raw) => {
      raw.send(serialize.query('CREATE TEMP TABLE scratch (n int)'));
      expect(types(await raw.readUntilReady())).toBe('CZ');
      raw.send(serialize.query('COPY pg_temp.scratch FROM STDIN'));
      await raw.readUntil('G');
      raw.send([copyData('notanint\n'), serialize.sync(), serialize.query("SELECT set_config('client_encoding', 'LATIN1', false), pg_sleep(1)")]);
      const replies = texts(await raw.readUntilClosed());
      expect(replies).toMatch(/08P01/);
      expect(replies).toMatch(/a Sync arrived while a COPY FROM STDIN was running/);
    });
  });

  it('behind a message pgveil refused in the same batch: the session ends', async () => {
    await session(SUPPORT, async (raw) => {
      raw.send(serialize.query('CREATE TEMP TABLE scratch (n int)'));
      expect(types(await raw.readUntilReady())).toBe('CZ');
      raw.send([...extended('COPY pg_temp.scratch FROM STDIN'), serialize.parse({ text: 'SELECT ssn FROM customers WHERE ssn > 0' }), serialize.sync()]);
      const replies = texts(await raw.readUntilClosed());
      expect(replies).toMatch(/08P01/);
      expect(replies).not.toContain(PHONE);
    });
  });
});
