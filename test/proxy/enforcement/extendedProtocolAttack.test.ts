/**
 * Attacks on the extended query protocol, sent as raw frames by accounts that may store only
 * tokens (ANALYST) or see only masks (SUPPORT): each must be refused or harmless — no plaintext
 * stored, none sent back.
 *
 * The server analyses a prepared statement's text again at Bind whenever its plan was
 * invalidated (DDL on what it reads, another search_path), and `FETCH c` / `EXECUTE q` read
 * whatever the cursor or statement is when they run: what pgveil learnt at Parse or from a
 * Describe of the statement may then name other tables than the rows come from or the values go
 * to. Rows are planned from a Describe of the portal only; a Bind is checked against what the
 * text means now; DDL not yet visible to the catalog that drops, renames or moves a relation
 * hiding a protected one of the same name makes the unqualified name wait for the commit.
 */
import { serialize } from 'pg-protocol';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { RawSession } from '../support/rawProtocol.js';
import { ANALYST, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
import { ATTACK_PHONE, ATTACK_SSN, attempt as attemptAs, messageTexts, simple } from './support/rawAttempts.js';

const SSN = ATTACK_SSN;
const PHONE = ATTACK_PHONE;
const texts = messageTexts;
/** The ErrorResponse pgveil sends for a refusal: its SQLSTATE, then its message. */
const refusedWith = (sqlState: string, words: RegExp): RegExp => new RegExp(`^E SERROR\0VERROR\0C${sqlState}\0Mpgveil refused the [^\0]*${words.source}`, 'm');

const h = useDirectHarness();

beforeEach(async () => {
  await h.direct.query('DELETE FROM customers');
  await h.direct.query('INSERT INTO customers (phone, note) VALUES ($1, $2)', [PHONE, 'stored plaintext (passthrough)']);
});

const attempt = (account: TestAccount, run: (session: RawSession) => Promise<string>): Promise<string> => attemptAs(h, account, run);

describe('a statement described before its names meant something else', () => {
  it('a temp table shadowing customers, described, then dropped: the re-planned statement reads public.customers', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE TEMP TABLE customers (phone text)');
      expect(seen).not.toMatch(/^E /m);
      session.send([
        serialize.parse({ name: 's1', text: 'SELECT phone FROM customers' }),
        serialize.describe({ type: 'S', name: 's1' }),
        serialize.sync(),
      ]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'DROP TABLE pg_temp.customers');
      session.send([serialize.bind({ statement: 's1', portal: '' }), serialize.execute({ portal: '' }), serialize.sync()]);
      const rows = texts(await session.readUntilReady());
      expect(rows).toMatch(/^D .*4477$/m); // the row came, masked
      return seen + rows;
    });
  });
});

describe('a statement parsed while its table name meant another table, bound after DDL', () => {
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk CASCADE');
  });

  it('an INSERT parsed on search_path pg_temp, bound after the temp table is dropped and the path reset', async () => {
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'CREATE TEMP TABLE customers (ssn text, note text)');
      seen += await simple(session, 'SET search_path = pg_temp');
      session.send([serialize.parse({ name: 'w1', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      seen += await simple(session, 'DROP TABLE pg_temp.customers');
      seen += await simple(session, 'SET search_path = public');
      session.send([serialize.bind({ statement: 'w1', values: [SSN, 'w1'] }), serialize.execute({}), serialize.sync()]);
      const replies = texts(await session.readUntilReady());
      expect(replies).toMatch(refusedWith('0A000', /Bind: the statement was prepared under another search_path/));
      return seen + replies;
    });
  });

  it('an INSERT parsed on search_path atk, public while atk.customers exists, bound after it is dropped', async () => {
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'CREATE SCHEMA IF NOT EXISTS atk; CREATE TABLE atk.customers (ssn text, note text)');
      seen += await simple(session, 'SET search_path = atk, public');
      session.send([serialize.parse({ name: 'w2', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      seen += await simple(session, 'DROP TABLE atk.customers');
      session.send([serialize.bind({ statement: 'w2', values: [SSN, 'w2'] }), serialize.execute({}), serialize.sync()]);
      const replies = texts(await session.readUntilReady());
      // Parsed, the name stood in for public.customers (values protected, not taken as its data);
      // bound after the shadow went away, the text means public.customers itself: prepare it again.
      expect(replies, replies).toMatch(refusedWith('0A000', /Bind: the statement was prepared under another search_path, catalog/));
      const stored = await h.direct.query("SELECT ssn FROM public.customers WHERE note = 'w2'");
      expect(stored.rows).toHaveLength(0);
      return seen + replies;
    });
  });
});

describe('a shadowing table moved out of the way by DDL not yet committed', () => {
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk2 CASCADE');
  });

  it.each([
    ['renamed', 'ALTER TABLE atk2.customers RENAME TO gone', /statement: DDL of this session .* named customers/],
    ['dropped', 'DROP TABLE atk2.customers', /statement: DDL of this session .* named customers/],
    ['moved (a rule of its own refuses it)', 'ALTER TABLE atk2.customers SET SCHEMA atk2b', /statement: AlterObjectSchema falls under the rule "ddl"/],
  ])('%s in the open transaction: a Query then names customers', async (_, ddl, refusal) => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk2 CASCADE; DROP SCHEMA IF EXISTS atk2b CASCADE; CREATE SCHEMA atk2; CREATE SCHEMA atk2b; CREATE TABLE atk2.customers (ssn text, note text)');
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'SET search_path = atk2, public');
      seen += await simple(session, 'BEGIN');
      seen += await simple(session, ddl);
      seen += await simple(session, `INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'q')`);
      seen += await simple(session, 'COMMIT');
      expect(seen).toMatch(refusedWith(refusal.source.includes('ddl') ? '42501' : '0A000', refusal));
      return seen;
    });
  });

  it('renamed in the open transaction: a statement parsed before is bound', async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk2 CASCADE; CREATE SCHEMA atk2; CREATE TABLE atk2.customers (ssn text, note text)');
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'SET search_path = atk2, public');
      session.send([serialize.parse({ name: 'w3', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'BEGIN');
      seen += await simple(session, 'ALTER TABLE atk2.customers RENAME TO gone');
      session.send([serialize.bind({ statement: 'w3', values: [SSN, 'w3'] }), serialize.execute({}), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).toMatch(refusedWith('0A000', /Bind: DDL of this session .* named customers/));
      seen += await simple(session, 'COMMIT');
      return seen;
    });
  });

  it('renamed by a prepared DDL statement executed in the same batch as the Bind', async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk2 CASCADE; CREATE SCHEMA atk2; CREATE TABLE atk2.customers (ssn text, note text)');
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'SET search_path = atk2, public');
      session.send([serialize.parse({ name: 'w4', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      session.send([serialize.parse({ name: 'ddl', text: 'ALTER TABLE atk2.customers RENAME TO gone' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      session.send([
        serialize.bind({ statement: 'ddl' }), serialize.execute({}),
        serialize.bind({ statement: 'w4', values: [SSN, 'w4'] }), serialize.execute({}), serialize.sync(),
      ]);
      seen += texts(await session.readUntilReady());
      expect(seen).toMatch(refusedWith('0A000', /Bind: DDL of this session .* named customers/));
      return seen;
    });
  });

  it('renamed by a prepared DDL statement, then a Parse in the same batch names customers', async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk2 CASCADE; CREATE SCHEMA atk2; CREATE TABLE atk2.customers (ssn text, note text)');
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'SET search_path = atk2, public');
      session.send([serialize.parse({ name: 'ddl', text: 'ALTER TABLE atk2.customers RENAME TO gone' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      session.send([
        serialize.bind({ statement: 'ddl' }), serialize.execute({}),
        serialize.parse({ name: '', text: `INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'p')` }),
        serialize.bind({}), serialize.execute({}), serialize.sync(),
      ]);
      seen += texts(await session.readUntilReady());
      expect(seen).toMatch(refusedWith('0A000', /statement: DDL of this session .* named customers/));
      return seen;
    });
  });
});

describe('a statement described before what it reads changed, with no DDL', () => {
  it('FETCH described while the cursor read note, run after it was declared again over phone', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'BEGIN; DECLARE c CURSOR FOR SELECT note FROM customers');
      session.send([serialize.parse({ name: 'f1', text: 'FETCH 1 FROM c' }), serialize.describe({ type: 'S', name: 'f1' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'CLOSE c; DECLARE c CURSOR FOR SELECT phone FROM customers');
      expect(seen).not.toMatch(/^E /m);
      session.send([serialize.bind({ statement: 'f1' }), serialize.execute({}), serialize.sync()]);
      const rows = texts(await session.readUntilReady());
      expect(rows).toMatch(/^D .*4477$/m);
      return seen + rows + await simple(session, 'COMMIT');
    });
  });

  it('EXECUTE described while the prepared statement read note, run after it was prepared again over phone', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'PREPARE q AS SELECT note FROM customers');
      session.send([serialize.parse({ name: 'x1', text: 'EXECUTE q' }), serialize.describe({ type: 'S', name: 'x1' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'DEALLOCATE q; PREPARE q AS SELECT phone FROM customers');
      expect(seen).not.toMatch(/^E /m);
      session.send([serialize.bind({ statement: 'x1' }), serialize.execute({}), serialize.sync()]);
      const rows = texts(await session.readUntilReady());
      expect(rows).toMatch(/^D .*4477$/m);
      return seen + rows;
    });
  });
});

describe('row-limited Executes and result formats', () => {
  beforeEach(async () => {
    for (let i = 0; i < 4; i++) await h.direct.query('INSERT INTO customers (phone, note) VALUES ($1, $2)', [PHONE, `n${i}`]);
  });

  it('a portal suspended, other portals and statements in between, resumed in later batches', async () => {
    const seen = await attempt(SUPPORT, async (session) => {
      let out = await simple(session, 'BEGIN');
      session.send([
        serialize.parse({ name: 'ph', text: 'SELECT note, phone FROM customers ORDER BY id' }),
        serialize.bind({ statement: 'ph', portal: 'p1', binary: false }),
        serialize.execute({ portal: 'p1', rows: 1 }),
        serialize.parse({ name: 'nt', text: 'SELECT note FROM customers ORDER BY id' }),
        serialize.bind({ statement: 'nt', portal: 'p2' }),
        serialize.execute({ portal: 'p2', rows: 1 }),
        serialize.execute({ portal: 'p1', rows: 1 }),
        serialize.sync(),
      ]);
      out += texts(await session.readUntilReady());
      out += await simple(session, 'SELECT 1');
      session.send([
        serialize.parse({ name: '', text: 'SELECT note FROM customers' }), serialize.bind({}), serialize.execute({ rows: 1 }),
        serialize.execute({ portal: 'p1', rows: 1 }), serialize.execute({ portal: 'p2', rows: 1 }), serialize.execute({}),
        serialize.flush(),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      session.send([serialize.describe({ type: 'P', name: 'p1' }), serialize.execute({ portal: 'p1' }), serialize.sync()]);
      out += texts(await session.readUntilReady());
      return out + await simple(session, 'COMMIT');
    });
    expect(seen.match(/^D .*4477$/gm)?.length).toBe(5);
    expect(seen).not.toMatch(/^E /m);
  });

  it('a portal suspended, then a policy reload, then resumed: the rows follow the policies in force', async () => {
    // support's masks stay masks: the reload changes only another column (a new generation of policies).
    const seen = await attempt(SUPPORT, async (session) => {
      let out = await simple(session, 'BEGIN');
      session.send([
        serialize.parse({ name: 'ph', text: 'SELECT phone FROM customers ORDER BY id' }),
        serialize.bind({ statement: 'ph', portal: 'p1' }), serialize.execute({ portal: 'p1', rows: 1 }), serialize.sync(),
      ]);
      out += texts(await session.readUntilReady());
      const { readFile, writeFile } = await import('node:fs/promises');
      const before = await readFile(h.harness.policyFile, 'utf8');
      await writeFile(h.harness.policyFile, before.replace('scope: payments', 'scope: payments2'));
      await h.harness.store.reload();
      try {
        session.send([serialize.execute({ portal: 'p1', rows: 2 }), serialize.sync()]);
        out += texts(await session.readUntilReady());
      } finally {
        await writeFile(h.harness.policyFile, before);
        await h.harness.store.reload();
      }
      return out + await simple(session, 'COMMIT');
    });
    expect(seen.match(/^D .*4477$/gm)?.length).toBe(3);
  });

  it.each([
    ['all binary', [1]],
    ['phone binary, note text', [0, 1]],
    ['phone text, note binary', [1, 0]],
  ])('result formats %s, described by statement only and by portal', async (_, formats) => {
    const seen = await attempt(SUPPORT, async (session) => {
      session.send([
        serialize.parse({ name: 'bf', text: 'SELECT note, phone FROM customers ORDER BY id' }),
        serialize.describe({ type: 'S', name: 'bf' }),
        rawBind('', 'bf', formats), serialize.execute({}),
        rawBind('', 'bf', formats), serialize.describe({ type: 'P' }), serialize.execute({ rows: 2 }),
        serialize.sync(),
      ]);
      return texts(await session.readUntilReady());
    });
    expect(seen.match(/4477/g)?.length).toBe(5 + 2);
  });
});

/** A Bind with no parameters and these result format codes (pg-protocol's serializer writes one code at most). */
function rawBind(portal: string, statement: string, formats: readonly number[]): Buffer {
  const parts = [Buffer.from(`${portal}\0${statement}\0`), Buffer.from([0, 0, 0, 0])];
  const codes = Buffer.alloc(2 + 2 * formats.length);
  codes.writeInt16BE(formats.length, 0);
  formats.forEach((format, i) => codes.writeInt16BE(format, 2 + 2 * i));
  parts.push(codes);
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write('B', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

describe('SQL PREPARE of a name shadowing a protected table, EXECUTE after the shadow is dropped', () => {
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk3 CASCADE');
  });

  it.each([
    ['EXECUTE in a Query', (session: RawSession) => simple(session, `EXECUTE ins('${SSN}', 'e')`)],
    ['EXECUTE in a Parse', async (session: RawSession) => {
      session.send([serialize.parse({ text: `EXECUTE ins('${SSN}', 'e')` }), serialize.bind({}), serialize.execute({}), serialize.sync()]);
      return texts(await session.readUntilReady());
    }],
    ['a Bind of the SQL-prepared name', async (session: RawSession) => {
      session.send([serialize.bind({ statement: 'ins', values: [SSN, 'b'] }), serialize.execute({}), serialize.sync()]);
      return texts(await session.readUntilReady());
    }],
  ])('%s', async (_, run) => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk3 CASCADE; CREATE SCHEMA atk3');
    await attempt(ANALYST, async (session) => {
      // Created through pgveil, so that its catalog sees the table hiding public.customers.
      let seen = await simple(session, 'CREATE TABLE atk3.customers (ssn text, note text)');
      seen += await simple(session, 'SET search_path = atk3, public');
      // The name shadows public.customers: it is taken as public.customers, whose plan does not depend on the path.
      seen += await simple(session, 'PREPARE ins(text, text) AS INSERT INTO customers (ssn, note) VALUES ($1, $2)');
      expect(seen).not.toMatch(/^E /m);
      seen += await simple(session, 'DROP TABLE atk3.customers');
      return seen + await run(session);
    });
  });
});
