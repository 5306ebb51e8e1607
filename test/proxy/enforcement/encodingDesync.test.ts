/**
 * SQL text pgveil reads otherwise than the server: pgveil decodes it as UTF-8, invalid bytes
 * becoming U+FFFD, and lexes it with standard strings. A session whose client_encoding or
 * standard_conforming_strings differ (SQL_ASCII, which the server does not validate; LATIN1;
 * backslash escapes) can write text where the two readings part: `$\xFF$ … $\xFE$` closes for
 * pgveil (both tags read `$\uFFFD$`) but not for the server, so a `/*` after it hides the rest from
 * pgveil only. Each hostile text, sent as raw frames as an account that may store only tokens (or
 * see only masks), on a SQL_ASCII database and on a UTF8 one, must be refused or harmless: no
 * plaintext stored, none sent back. The settings can also change where pgveil does not see it (a
 * prepared statement, a column default calling set_config): such text pipelined behind them is
 * refused too, while text behind a BEGIN (as JDBC sends it) goes through.
 */
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { int16Bytes as int16, int32Bytes as int32, openRawSession, rawFrame as frame, type BackendMessage, type RawSession } from '../support/rawProtocol.js';
import { ANALYST, startPolicyHarness, SUPPORT, type PolicyHarness, type TestAccount } from './support/policyHarness.js';

const SSN = '123-45-6789';
const PHONE = '+1 555 010 4477';
const HIDE = ['$', [0xff], '$ $', [0xfe], '$ /* $', [0xff], '$'] as const; // pgveil: `$�$ $�$ /* $�$`; the server: `$\xFF$ $\xFE$ /* $\xFF$`
const HIDDEN_DO = " DO $q$ BEGIN EXECUTE 'INSERT INTO cust' || 'omers (ssn, note) VALUES (''" + SSN + "'', ''hidden'')'; END $q$; -- */";

const bytes = (...parts: readonly (string | readonly number[])[]): Buffer =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));
const cstring = (body: Buffer): Buffer => Buffer.concat([body, Buffer.from([0])]);
const query = (...parts: readonly (string | readonly number[])[]): Buffer[] => [frame('Q', cstring(bytes(...parts)))];
const texts = (messages: BackendMessage[]): string => messages.map((m) => `${m.type} ${m.body.toString('latin1')}`).join('\n');

/** Hostile texts: each as the frames sent, and the account sending them. */
const ATTEMPTS: Record<string, { account: TestAccount; frames: Buffer[] }> = {
  'an INSERT hidden after dollar tags that differ only in invalid bytes': { account: ANALYST, frames: query('SELECT ', ...HIDE, "; INSERT INTO customers (ssn, note) VALUES ('" + SSN + "', 'x'); -- */") },
  'a DO running dynamic SQL, hidden the same way': { account: ANALYST, frames: query('SELECT ', ...HIDE, ';', HIDDEN_DO) },
  'the same, inside a SET that reads as settings only': { account: ANALYST, frames: query('SET application_name = ', ...HIDE, ';', HIDDEN_DO) },
  'a read by query_to_xml hidden the same way': {
    account: SUPPORT, frames: query('SELECT ', ...HIDE, ", query_to_xml('SELECT phone FROM cust' || 'omers WHERE phone IS NOT NULL', false, false, '') -- */"),
  },
  'the hidden read in a Parse': {
    account: SUPPORT,
    frames: [
      frame('P', cstring(Buffer.alloc(0)), cstring(bytes('SELECT ', ...HIDE, ", query_to_xml('SELECT phone FROM cust' || 'omers WHERE phone IS NOT NULL', false, false, '') -- */")), int16(0)),
      frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.alloc(0)), int16(0), int16(0), int16(0)), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync(),
    ],
  },
  'a backslash quote pgveil reads inside a string': {
    account: ANALYST, frames: query("SELECT '\\'' ; DO $q$ BEGIN EXECUTE $e$INSERT INTO cust$e$ || $e$omers (ssn, note) VALUES ($v$" + SSN + '$v$, $v$hidden$v$)$e$; END $q$; -- \''),
  },
  'a protected literal beside invalid bytes in a quoted name, a string, an E string and a comment': {
    account: ANALYST,
    frames: query('INSERT INTO customers AS "c', [0xc0, 0xaf], "\" (ssn, note) VALUES ('", SSN, "', E'", [0xed, 0xa0, 0x80], "\\', '", [0xff], "') /* ", [0xe0, 0x2a], '/'),
  },
  'a Bind value for a parameter hidden from pgveil': {
    account: ANALYST,
    frames: [
      frame('P', cstring(Buffer.alloc(0)), cstring(bytes('INSERT INTO customers (note, ssn) VALUES (', ...HIDE, ', $1) -- */, NULL)')), int16(0)),
      frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.alloc(0)), int16(0), int16(1), int32(SSN.length), Buffer.from(SSN), int16(0)), serialize.execute({}), serialize.sync(),
    ],
  },
};

const SETTINGS: Record<string, string | undefined> = {
  'client_encoding UTF8': undefined,
  'client_encoding SQL_ASCII': "SET client_encoding TO 'SQL_ASCII'",
  'client_encoding LATIN1': "SET client_encoding TO 'LATIN1'",
  'standard_conforming_strings off': 'SET standard_conforming_strings = off',
};

let server: TestPostgres;
const harnesses: Record<string, PolicyHarness> = {};
const directs: Record<string, pg.Client> = {};

/** A database of `encoding` on the one test server (started by the first call, stopped with the first harness). */
async function databaseIn(encoding: string): Promise<TestPostgres> {
  const first = server === undefined;
  server ??= await startTestPostgres();
  const name = `desync_${encoding.toLowerCase()}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
  await admin.end();
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return { ...server, database: name, url: url.toString(), stop: first ? server.stop : async () => undefined };
}

beforeAll(async () => {
  for (const encoding of ['SQL_ASCII', 'UTF8']) {
    harnesses[encoding] = await startPolicyHarness(undefined, undefined, { startDatabase: () => databaseIn(encoding) });
    directs[encoding] = await (harnesses[encoding] as PolicyHarness).direct();
    await (directs[encoding] as pg.Client).query('INSERT INTO customers (phone, note) VALUES ($1, $2)', [PHONE, 'stored plaintext (passthrough)']);
  }
});

afterAll(async () => {
  for (const encoding of ['UTF8', 'SQL_ASCII']) {
    await directs[encoding]?.end().catch(() => undefined);
    await harnesses[encoding]?.stop();
  }
});

describe.each(['SQL_ASCII', 'UTF8'])('a %s database', (encoding) => {
  it.each(Object.keys(SETTINGS))('under %s, stores no plaintext and sends none back', async (setting) => {
    const harness = harnesses[encoding] as PolicyHarness;
    const direct = directs[encoding] as pg.Client;
    for (const [name, { account, frames }] of Object.entries(ATTEMPTS)) {
      const session = await openRawSession(harness.via(account));
      try {
        const set = SETTINGS[setting];
        if (set !== undefined) {
          session.send(serialize.query(set));
          expect(texts(await session.readUntilReady()), name).not.toMatch(/^E /m);
        }
        session.send(frames);
        expect.soft(texts(await session.readUntilReady()), name).not.toContain(PHONE);
        const stored = await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', [SSN]);
        expect.soft(stored.rows[0]?.n, name).toBe(0);
      } finally {
        session.close();
        // Whatever an attempt stored (a token at most) is cleared for the next one.
        await direct.query("DELETE FROM customers WHERE note IS DISTINCT FROM 'stored plaintext (passthrough)'");
      }
    }
  });
});

/** Runs `attempt` in a raw session of ANALYST on the UTF8 database, then checks that no plaintext SSN was stored. */
async function attemptAsAnalyst(attempt: (session: RawSession) => Promise<void>): Promise<void> {
  const session = await openRawSession((harnesses.UTF8 as PolicyHarness).via(ANALYST));
  try {
    await attempt(session);
    const stored = await (directs.UTF8 as pg.Client).query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE ssn = $1', [SSN]);
    expect(stored.rows[0]?.n).toBe(0);
  } finally {
    session.close();
  }
}

describe('text pipelined behind a statement that changes the settings out of sight', () => {
  const PREPARED = { setup: "PREPARE encoding AS SELECT set_config('client_encoding', 'LATIN1', false)", run: 'EXECUTE encoding' };
  const DEFAULTED = { setup: "CREATE TEMP TABLE settings_default (x text DEFAULT set_config('client_encoding', 'LATIN1', false))", run: 'INSERT INTO pg_temp.settings_default DEFAULT VALUES' };

  it.each([['a prepared statement', PREPARED], ['a column default', DEFAULTED]])('%s calling set_config: the hidden INSERT is refused', async (_, { setup, run }) => {
    await attemptAsAnalyst(async (session) => {
      session.send(serialize.query(setup));
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      session.send([...query(run), ...query('SELECT ', ...HIDE, ';', HIDDEN_DO)]);
      const replies = texts(await session.readUntilReady(2));
      expect(replies).toMatch(/may not follow, unanswered, a statement that may change client_encoding/);
    });
  });

  it('an Execute answered under a Flush, its ReadyForQuery not yet due, still leaves the settings in doubt', async () => {
    await attemptAsAnalyst(async (session) => {
      session.send([frame('P', cstring(Buffer.from('encoding')), cstring(Buffer.from("SELECT set_config('client_encoding', 'LATIN1', false)")), int16(0)), serialize.sync()]);
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      session.send([frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.from('encoding')), int16(0), int16(0), int16(0)), serialize.execute({}), serialize.flush()]);
      await new Promise((resolve) => setTimeout(resolve, 300)); // its CommandComplete is back, its Sync not sent
      session.send([...query('SELECT ', ...HIDE, "; INSERT INTO customers (ssn, note) VALUES ('" + SSN + "', 'flush'); -- */"), serialize.sync()]);
      expect(texts(await session.readUntilReady(2))).toMatch(/may not follow, unanswered, a statement that may change client_encoding/);
    });
  });

  it.each([['the hidden INSERT', false], ['a COPY read as SJIS', true]])('a SET prepared in one batch and executed in the next counts too: %s is refused', async (_, copy) => {
    await attemptAsAnalyst(async (session) => {
      const encoding = copy ? 'SJIS' : 'LATIN1';
      session.send([frame('P', cstring(Buffer.from('encoding')), cstring(Buffer.from(`SET client_encoding TO '${encoding}'`)), int16(0)), serialize.sync()]);
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      const run = [frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.from('encoding')), int16(0), int16(0), int16(0)), serialize.execute({})];
      const after = copy
        ? [...query("COPY customers (note, ssn) FROM STDIN WITH (FORMAT csv, DELIMITER '|', QUOTE '@')"), frame('d', bytes('x', [0x81], '@|' + SSN + '\n', [0x81], '@|\n')), frame('c')]
        : query('SELECT ', ...HIDE, "; INSERT INTO customers (ssn, note) VALUES ('" + SSN + "', 'prepared set'); -- */");
      session.send([...run, ...after, serialize.sync()]);
      expect(texts(await session.readUntilReady(2))).toMatch(copy ? /pgveil refused the COPY: it loads protected columns/ : /may not follow, unanswered/);
    });
  });

  it('a COPY into a protected table behind a statement that may change client_encoding is refused: its rows could be read as SJIS', async () => {
    await attemptAsAnalyst(async (session) => {
      session.send(serialize.query("PREPARE encoding AS SELECT set_config('client_encoding', 'SJIS', false)"));
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      // In SJIS 0x81 0x40 is one character: the server reads row 1 as (x, 123-45-6789), pgveil as one quoted field.
      session.send([...query("EXECUTE encoding; COPY customers (note, ssn) FROM STDIN WITH (FORMAT csv, DELIMITER '|', QUOTE '@')"),
        frame('d', bytes('x', [0x81], '@|' + SSN + '\n', [0x81], '@|\n')), frame('c')]);
      expect(texts(await session.readUntilReady())).toMatch(/pgveil refused the COPY: it loads protected columns/);
    });
  });

  // In SJIS 0x81 0x40 is one character: the server reads row 1 as (x, 123-45-6789), pgveil as one quoted field.
  const SJIS_ROWS = frame('d', bytes('x', [0x81], '@|' + SSN + '\n', [0x81], '@|\n'));
  const PREPARED_COPY = "COPY customers (note, ssn) FROM STDIN WITH (FORMAT csv, DELIMITER '|', QUOTE '@')";
  const runCopy = [frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.from('copy')), int16(0), int16(0), int16(0)), serialize.execute({})];

  it('a COPY prepared under UTF8, executed behind a statement that may change client_encoding, is refused', async () => {
    await attemptAsAnalyst(async (session) => {
      session.send([frame('P', cstring(Buffer.from('copy')), cstring(Buffer.from(PREPARED_COPY)), int16(0)), serialize.sync()]);
      session.send(serialize.query("PREPARE encoding AS SELECT set_config('client_encoding', 'SJIS', false)"));
      expect(texts(await session.readUntilReady(2))).not.toMatch(/^E /m);
      session.send([...query('EXECUTE encoding'), ...runCopy, serialize.sync(), SJIS_ROWS, frame('c'), serialize.sync()]);
      const replies = texts(await session.readUntilReady(2).catch(async () => session.readUntilClosed(2000)));
      expect(replies).toMatch(/pgveil refused the COPY: it loads protected columns, and when it starts client_encoding may not be UTF8/);
    });
  });

  it('a COPY prepared under UTF8, executed once the session is in SJIS, is refused', async () => {
    await attemptAsAnalyst(async (session) => {
      session.send([frame('P', cstring(Buffer.from('copy')), cstring(Buffer.from(PREPARED_COPY)), int16(0)), serialize.sync()]);
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      session.send(serialize.query("SET client_encoding TO 'SJIS'"));
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      session.send([...runCopy, serialize.sync(), SJIS_ROWS, frame('c'), serialize.sync()]);
      const replies = texts(await session.readUntilReady(1).catch(async () => session.readUntilClosed(2000)));
      expect(replies).toMatch(/pgveil refused the COPY: it loads protected columns, and when it starts client_encoding may not be UTF8/);
    });
  });

  it('a second COPY in the same text as a first, behind an EXECUTE that may change client_encoding, is refused', async () => {
    await attemptAsAnalyst(async (session) => {
      session.send(serialize.query("PREPARE encoding AS SELECT set_config('client_encoding', 'SJIS', false)"));
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      session.send(query("COPY customers (ssn, note) FROM STDIN; EXECUTE encoding; COPY customers (note, ssn) FROM STDIN WITH (FORMAT csv, DELIMITER '|', QUOTE '@')"));
      expect(texts(await session.readUntilReady())).toMatch(/pgveil refused the COPY: it loads protected columns/);
    });
  });

  it.each([['csv', 'h\r' + SSN + ',crheader\r'], ['text', 'h\r' + SSN + '\tcrheader\r'], ['csv', SSN + ',a\rb\n']])('a COPY (%s) row with a carriage return that does not end its line is refused, header included', async (format, data) => {
    await attemptAsAnalyst(async (session) => {
      session.send([...query(`COPY customers (ssn, note) FROM STDIN WITH (FORMAT ${format}, HEADER ${data.startsWith('h') ? 'true' : 'false'})`), frame('d', Buffer.from(data)), frame('c')]);
      const replies = texts(await session.readUntilReady());
      expect(replies).toMatch(/22P04/);
      expect(replies).toMatch(/carriage return that does not end its line/);
    });
  });

  it('a BEGIN pipelined before non-ASCII text changes nothing: the row is stored, protected', async () => {
    const harness = harnesses.UTF8 as PolicyHarness;
    const direct = directs.UTF8 as pg.Client;
    const session = await openRawSession(harness.via(ANALYST));
    const unnamed = (sql: string): Buffer[] => [
      frame('P', cstring(Buffer.alloc(0)), cstring(Buffer.from(sql)), int16(0)),
      frame('B', cstring(Buffer.alloc(0)), cstring(Buffer.alloc(0)), int16(0), int16(0), int16(0)), serialize.execute({}),
    ];
    try {
      session.send([...unnamed('BEGIN'), ...unnamed("INSERT INTO customers (ssn, note) VALUES ('" + SSN + "', 'Chloé \\ García')"), ...unnamed('COMMIT'), serialize.sync()]);
      expect(texts(await session.readUntilReady())).not.toMatch(/^E /m);
      const { rows } = await direct.query<{ ssn: string }>("SELECT ssn FROM customers WHERE note = 'Chloé \\ García'");
      expect(rows).toHaveLength(1);
      expect(rows[0]?.ssn).not.toBe(SSN);
    } finally {
      session.close();
      await direct.query("DELETE FROM customers WHERE note IS DISTINCT FROM 'stored plaintext (passthrough)'");
    }
  });
});
