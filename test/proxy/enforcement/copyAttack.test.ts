/**
 * Attacks on COPY through the proxy, as accounts that may store only tokens (analyst) or see only
 * masks (support): option spellings pgveil could read otherwise than PostgreSQL, frames split at
 * awkward places, binary streams. Each must be refused or harmless: no plaintext stored, none sent back.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serialize } from 'pg-protocol';
import { int16Bytes as int16, openRawSession, rawFrame as frame, type BackendMessage, type RawSession } from '../support/rawProtocol.js';
import { ANALYST, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';

const SSN = '123-45-6789';
let harness: PolicyHarness;
let direct: pg.Client;
let analyst: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  direct = await harness.direct();
  analyst = await harness.connect(ANALYST);
});
afterAll(async () => {
  await analyst?.end().catch(() => undefined);
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});

async function copyIn(client: pg.Client, sql: string, data: (Buffer | string)[]): Promise<{ code?: string; message: string } | undefined> {
  try {
    await pipeline(Readable.from(data.map((d) => (typeof d === 'string' ? Buffer.from(d, 'utf8') : d))), client.query(copyFrom(sql)));
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

/** Every protected column's stored text in the customers table that holds the plaintext SSN. */
async function plaintextStored(): Promise<string[]> {
  const rows = (await direct.query('SELECT concat_ws(\'|\', full_name, email, ssn, card_number) AS r FROM customers c')).rows as { r: string }[];
  return rows.map((row) => row.r).filter((r) => r.includes(SSN) || r.includes('123456789'));
}

describe('COPY FROM STDIN options pgveil might read otherwise than PostgreSQL', () => {
  const cases: [string, string, string[]][] = [
    ['DELIMITER * (a star, not a string)', 'COPY customers (note, ssn, full_name) FROM STDIN WITH (DELIMITER *)', [`a*${SSN}*b\t111-22-3333\tc\n`]],
    ["DELIMITER ('|') (a list)", "COPY customers (note, ssn, full_name) FROM STDIN WITH (DELIMITER ('|'))", [`a|${SSN}|b\t111-22-3333\tc\n`]],
    ['FORMAT (csv) (a list)', 'COPY customers (note, ssn, full_name) FROM STDIN WITH (FORMAT (csv))', [`a,${SSN},b\t111-22-3333\tc\n`]],
    ['NULL 1.5 (a float)', 'COPY customers (note, ssn) FROM STDIN WITH (NULL 1.5)', ['fl\t\\N\n']],
  ];
  for (const [name, sql, data] of cases) {
    it(`${name}: refused or harmless`, async () => {
      await direct.query('TRUNCATE customers');
      const error = await copyIn(analyst, sql, data);
      expect(error?.code).toBe('0A000');
      expect(error?.message).toMatch(/COPY option (delimiter|format|null) must be a quoted string constant/);
      expect(await plaintextStored()).toEqual([]);
    });
  }
});

async function copyOut(client: pg.Client, sql: string): Promise<{ data: string; error?: { code?: string; message: string } }> {
  const chunks: Buffer[] = [];
  try {
    await pipeline(client.query(copyTo(sql)), new Writable({ write(chunk: Buffer, _e, done) { chunks.push(chunk); done(); } }));
    return { data: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    return { data: Buffer.concat(chunks).toString('utf8'), error: error as { code?: string; message: string } };
  }
}

const PHONE = '+1 555 010 4477';

describe('COPY TO STDOUT options pgveil might read otherwise than PostgreSQL', () => {
  const cases: [string, string][] = [
    ['FORMAT (csv) (a list)', 'COPY customers (note, phone, id) TO STDOUT WITH (FORMAT (csv))'],
    ['FORMAT csv, DELIMITER * (a star)', 'COPY customers (note, phone, id) TO STDOUT WITH (FORMAT csv, DELIMITER *)'],
  ];
  for (const [name, sql] of cases) {
    it(`${name}: refused or harmless for a session that sees phone masked`, async () => {
      await direct.query('TRUNCATE customers');
      await direct.query('INSERT INTO customers (note, phone) VALUES ($1, $2)', ['a\tb\tc', PHONE]);
      const support = await harness.connect(SUPPORT);
      try {
        const result = await copyOut(support, sql);
        expect(result.error?.code).toBe('0A000');
        expect(result.data).not.toContain(PHONE);
        expect(result.data).not.toContain('010 4477');
      } finally {
        await support.end().catch(() => undefined);
      }
    });
  }
});

const cstring = (text: string): Buffer => Buffer.from(`${text}\0`, 'utf8');
const texts = (messages: BackendMessage[]): string => messages.map((m) => `${m.type} ${m.body.toString('latin1').replace(/[^\x20-\x7e]/g, '.')}`).join('\n');

async function raw(account = ANALYST): Promise<RawSession> {
  return openRawSession(harness.via(account));
}

/** Runs simple queries one by one, waiting for each answer. */
async function simple(session: RawSession, ...sqls: string[]): Promise<string> {
  let out = '';
  for (const sql of sqls) {
    session.send(serialize.query(sql));
    out += `${texts(await session.readUntilReady(1))}\n`;
  }
  return out;
}

describe('a prepared COPY whose table name means another table when it runs', () => {
  const setups: [string, string[], string[]][] = [
    ['a temporary table of the same name, dropped before Bind', ['CREATE TEMP TABLE customers (ssn text, note text)'], ['DROP TABLE pg_temp.customers']],
    ['a table on the search_path, then the path changed', ['CREATE SCHEMA IF NOT EXISTS decoy', 'CREATE TABLE IF NOT EXISTS decoy.customers (ssn text, note text)', 'SET search_path = decoy, public'], ['SET search_path = public']],
    ['a table on the search_path, then it is dropped', ['CREATE SCHEMA IF NOT EXISTS decoy2', 'CREATE TABLE IF NOT EXISTS decoy2.customers (ssn text, note text)', 'SET search_path = decoy2, public'], ['DROP TABLE decoy2.customers']],
    ['no such table on the search_path, then the path changed', ['CREATE SCHEMA IF NOT EXISTS empty', 'SET search_path = empty'], ['SET search_path = public']],
    ['a table on the search_path, then it is renamed', ['CREATE SCHEMA IF NOT EXISTS decoy3', 'CREATE TABLE IF NOT EXISTS decoy3.customers (ssn text, note text)', 'SET search_path = decoy3, public'], ['ALTER TABLE decoy3.customers RENAME TO gone']],
  ];
  for (const [name, before, after] of setups) {
    it(`${name}: refused or harmless`, async () => {
      await direct.query('TRUNCATE customers');
      const session = await raw();
      let log = '';
      try {
        log = await simple(session, ...before);
        session.send([frame('P', cstring('s1'), cstring('COPY customers (ssn, note) FROM STDIN'), int16(0)), serialize.sync()]);
        log += `${texts(await session.readUntilReady(1))}\n`;
        log += await simple(session, ...after);
        session.send([
          serialize.bind({ statement: 's1' }), serialize.execute({}),
          serialize.copyData(Buffer.from(`${SSN}\tprepared\n`)), serialize.copyDone(), serialize.sync(),
        ]);
        log += texts(await session.readUntilReady(1).catch(async () => session.readUntilClosed(2000)));
      } finally {
        session.close();
      }
      expect(await plaintextStored(), log).toEqual([]);
    });
  }
});

describe('a prepared INSERT whose table name means another table when it is bound', () => {
  it('a table on the search_path, dropped before Bind: refused or harmless', async () => {
    await direct.query('TRUNCATE customers');
    const session = await raw();
    let log = '';
    try {
      log = await simple(session, 'CREATE SCHEMA IF NOT EXISTS decoy4', 'CREATE TABLE IF NOT EXISTS decoy4.customers (ssn text, note text)', 'SET search_path = decoy4, public');
      session.send([frame('P', cstring('i1'), cstring('INSERT INTO customers (ssn, note) VALUES ($1, $2)'), int16(0)), serialize.sync()]);
      log += `${texts(await session.readUntilReady(1))}\n`;
      log += await simple(session, 'DROP TABLE decoy4.customers');
      session.send([serialize.bind({ statement: 'i1', values: [SSN, 'prepared-insert'] }), serialize.execute({}), serialize.sync()]);
      log += texts(await session.readUntilReady(1));
    } finally {
      session.close();
    }
    expect(await plaintextStored(), log).toEqual([]);
  });
});

describe('DDL before a COPY or INSERT in the same text changes what its table name means', () => {
  const cases: [string, string, string[], boolean][] = [
    ['DROP then COPY', 'DROP TABLE decoy5.customers; COPY customers (ssn, note) FROM STDIN', [`${SSN}\tsame-text\n`], true],
    ['RENAME then COPY', 'ALTER TABLE decoy5.customers RENAME TO gone5; COPY customers (ssn, note) FROM STDIN', [`${SSN}\tsame-text\n`], true],
    ['SET SCHEMA then COPY', 'ALTER TABLE decoy5.customers SET SCHEMA decoy6; COPY customers (ssn, note) FROM STDIN', [`${SSN}\tsame-text\n`], true],
    ['DROP then INSERT', `DROP TABLE decoy5.customers; INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'same-text')`, [], false],
    ['ALTER SCHEMA RENAME then INSERT', `ALTER SCHEMA decoy5 RENAME TO decoy5b; INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'same-text')`, [], false],
    ['DROP then INSERT, pipelined as two Queries', `DROP TABLE decoy5.customers;\u0000INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'same-text')`, [], false],
    ['DROP SCHEMA CASCADE then INSERT', `DROP SCHEMA decoy5 CASCADE; INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'same-text')`, [], false],
  ];
  for (const [name, sql, rows, copy] of cases) {
    it(`${name}: refused or harmless`, async () => {
      await direct.query('TRUNCATE customers');
      await direct.query('DROP SCHEMA IF EXISTS decoy5 CASCADE; DROP SCHEMA IF EXISTS decoy6 CASCADE; CREATE SCHEMA decoy5; CREATE SCHEMA decoy6; CREATE TABLE decoy5.customers (ssn text, note text)');
      const session = await raw();
      let log = '';
      try {
        log = await simple(session, 'SET search_path = decoy5, public');
        // let the proxy's catalog see decoy5.customers
        log += await simple(session, 'SELECT count(*) FROM customers');
        const texts2 = sql.split('\u0000');
        session.send(texts2.map((text) => serialize.query(text)));
        if (copy) session.send([...rows.map((r) => serialize.copyData(Buffer.from(r))), serialize.copyDone()]);
        log += texts(await session.readUntilReady(texts2.length).catch(async () => session.readUntilClosed(2000)));
      } finally {
        session.close();
      }
      expect(await plaintextStored(), log).toEqual([]);
    });
  }
});

describe('a COPY portal bound before DDL that changes what its table name means, executed after it', () => {
  it('BEGIN; Bind; DROP the shadowing table; Execute: refused or harmless', async () => {
    await direct.query('TRUNCATE customers');
    await direct.query('DROP SCHEMA IF EXISTS decoy8 CASCADE; CREATE SCHEMA decoy8; CREATE TABLE decoy8.customers (ssn text, note text)');
    const session = await raw();
    let log = '';
    try {
      log = await simple(session, 'SET search_path = decoy8, public', 'SELECT count(*) FROM customers', 'BEGIN');
      session.send([frame('P', cstring('c8'), cstring('COPY customers (ssn, note) FROM STDIN'), int16(0)), serialize.bind({ statement: 'c8', portal: 'p8' }), serialize.sync()]);
      log += `${texts(await session.readUntilReady(1))}\n`;
      log += await simple(session, 'DROP TABLE decoy8.customers');
      session.send([serialize.execute({ portal: 'p8' }), serialize.copyData(Buffer.from(`${SSN}\tportal\n`)), serialize.copyDone(), serialize.sync()]);
      log += texts(await session.readUntilReady(1).catch(async () => session.readUntilClosed(2000)));
      log += await simple(session, 'COMMIT');
    } finally {
      session.close();
    }
    expect(await plaintextStored(), log).toEqual([]);
  });
});

/** Every byte its own CopyData: rows split between CR and LF, inside UTF-8 characters, quotes, escapes and `\.`. */
const bytewise = (text: string): Buffer[] => [...Buffer.from(text, 'utf8')].map((byte) => Buffer.from([byte]));

describe('COPY FROM STDIN streams split at awkward places, and options, as an account that stores tokens', () => {
  const cases: [string, string, Buffer[]][] = [
    ['text, CRLF rows, one byte per CopyData', 'COPY customers (ssn, note) FROM STDIN', bytewise(`${SSN}\tsplit\r\n${SSN}\tsplit\r\n`)],
    ['text, a multi-byte note and an escaped tab', 'COPY customers (note, ssn) FROM STDIN', bytewise(`zażółć\\t\t${SSN}\nnext\\\t\t${SSN}\n`)],
    ['text, end marker then raw rows', 'COPY customers (ssn, note) FROM STDIN', bytewise(`${SSN}\tsplit\n\\.\n${SSN}\tafter\n`)],
    ['text, a backslash before the newline (PostgreSQL joins the lines)', 'COPY customers (ssn) FROM STDIN', [Buffer.from(`\\N\\\n${SSN}\n`)]],
    ['text, \\. inside a row', 'COPY customers (note, ssn) FROM STDIN', [Buffer.from(`a\\.\n${SSN}\n`)]],
    ['csv, a quoted field with newlines and the end marker inside it', 'COPY customers (note, ssn) FROM STDIN (FORMAT csv)', bytewise(`"x\n\\.\ny",${SSN}\n"a""\n\\.\n",${SSN}\n`)],
    ['csv, escape differs from quote, escaped quote before a newline', "COPY customers (note, ssn) FROM STDIN (FORMAT csv, ESCAPE '\\')", bytewise(`"a\\"\n\\.\n${SSN}",${SSN}\n`)],
    ['csv, quote is a backslash', "COPY customers (note, ssn) FROM STDIN (FORMAT csv, QUOTE '\\')", bytewise(`\\.\n\\,${SSN}\n`)],
    ['csv, null string is the plaintext', `COPY customers (note, ssn) FROM STDIN (FORMAT csv, NULL '${SSN}')`, [Buffer.from(`n,"${SSN}"\n`)]],
    ['csv, FORCE_NULL and FORCE_NOT_NULL', "COPY customers (note, ssn) FROM STDIN (FORMAT csv, FORCE_NULL (ssn), FORCE_NOT_NULL (ssn))", [Buffer.from(`n,${SSN}\nn,"${SSN}"\nn,\n`)]],
    ['csv, HEADER MATCH with a header line ending in a quoted newline', 'COPY customers (note, ssn) FROM STDIN (FORMAT csv, HEADER match)', [Buffer.from(`note,ssn\nn,${SSN}\n`)]],
    ['csv, a header whose quoted field swallows the next line', 'COPY customers (note, ssn) FROM STDIN (FORMAT csv, HEADER true)', bytewise(`"h\n${SSN}",ssn\nn,${SSN}\n`)],
    ['text, DEFAULT marker on a column without a default', "COPY customers (note, ssn) FROM STDIN (DEFAULT '${SSN}')", [Buffer.from(`d\t${SSN}\n`)]],
    ['text, custom delimiter and null', "COPY customers (note, ssn) FROM STDIN (DELIMITER '|', NULL 'nil')", bytewise(`a\\|b|${SSN}\nnil|${SSN}\n`)],
    ['text, WHERE clause on a protected column', `COPY customers (note, ssn) FROM STDIN WHERE ssn = '${SSN}'`, [Buffer.from(`w\t${SSN}\n`)]],
    ['text, FREEZE outside a transaction', 'COPY customers (note, ssn) FROM STDIN (FREEZE)', [Buffer.from(`f\t${SSN}\n`)]],
    ['text, column list in another order and quoted names', 'COPY customers ("ssn", "note") FROM STDIN', [Buffer.from(`${SSN}\tq\n`)]],
    ['text, no column list', 'COPY customers FROM STDIN', [Buffer.from(`999\tn\te@x.io\t${SSN}\t\\N\t\\N\t\\N\t\\N\t\\N\tall\n`)]],
    ['text, zero-length CopyData messages between bytes', 'COPY customers (ssn, note) FROM STDIN', bytewise(`${SSN}\tz\n`).flatMap((b) => [b, Buffer.alloc(0)])],
    ['text, ENCODING LATIN1', "COPY customers (ssn, note) FROM STDIN (ENCODING 'LATIN1')", [Buffer.from(`${SSN}\tl\n`)]],
    ['binary, an extension area and a -1 trailer', 'COPY customers (ssn, note) FROM STDIN (FORMAT binary)', [Buffer.concat([
      Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 4]), Buffer.from('junk'),
      Buffer.from([0, 2, 0, 0, 0, 11]), Buffer.from(SSN), Buffer.from([0, 0, 0, 1]), Buffer.from('b'), Buffer.from([0xff, 0xff]),
    ])]],
    ['binary, flags with the OID bit', 'COPY customers (ssn, note) FROM STDIN (FORMAT binary)', [Buffer.concat([
      Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 1, 0, 0, 0, 0, 0, 0]),
      Buffer.from([0, 2, 0, 0, 0, 11]), Buffer.from(SSN), Buffer.from([0, 0, 0, 1]), Buffer.from('b'), Buffer.from([0xff, 0xff]),
    ])]],
    ['binary, a field length past the end of its row', 'COPY customers (note, ssn) FROM STDIN (FORMAT binary)', [Buffer.concat([
      Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8),
      Buffer.from([0, 2, 0, 0, 0, 21]), Buffer.from('b'), Buffer.from([0, 0, 0, 11]), Buffer.from(SSN), Buffer.from([0xff, 0xff]),
    ])]],
  ];
  for (const [name, sql, data] of cases) {
    it(`${name}: refused or harmless`, async () => {
      await direct.query('TRUNCATE customers');
      const client = await harness.connect(ANALYST);
      try {
        await copyIn(client, sql, data);
      } finally {
        await client.end().catch(() => undefined);
      }
      expect(await plaintextStored()).toEqual([]);
    });
  }

  it('CopyDone, then more CopyData with plaintext, then a query: nothing stored in plaintext', async () => {
    await direct.query('TRUNCATE customers');
    const session = await raw();
    try {
      session.send([serialize.query('COPY customers (ssn, note) FROM STDIN'), serialize.copyData(Buffer.from(`${SSN}\tdone\n`)), serialize.copyDone(),
        serialize.copyData(Buffer.from(`${SSN}\tafter-done\n`)), serialize.copyDone()]);
      await session.readUntilReady(1);
      session.send([serialize.copyData(Buffer.from(`${SSN}\tidle\n`)), serialize.query('SELECT 1')]);
      await session.readUntilReady(1);
    } finally {
      session.close();
    }
    expect(await plaintextStored()).toEqual([]);
  });

  it('CopyFail, then CopyData with plaintext: nothing stored', async () => {
    await direct.query('TRUNCATE customers');
    const session = await raw();
    try {
      session.send([serialize.query('COPY customers (ssn, note) FROM STDIN'), serialize.copyData(Buffer.from(`${SSN}\tfa`)), serialize.copyFail('stop'),
        serialize.copyData(Buffer.from(`il\n${SSN}\tafter-fail\n`)), serialize.copyDone()]);
      await session.readUntilReady(1);
    } finally {
      session.close();
    }
    expect(await plaintextStored()).toEqual([]);
  });

  it('two COPY statements in one Query, the second one protected', async () => {
    await direct.query('TRUNCATE customers');
    const session = await raw();
    try {
      session.send([serialize.query('COPY customers (note) FROM STDIN; COPY customers (ssn, note) FROM STDIN'),
        serialize.copyData(Buffer.from(`first\n`)), serialize.copyDone(),
        serialize.copyData(Buffer.from(`${SSN}\tsecond\n`)), serialize.copyDone()]);
      await session.readUntilReady(1);
    } finally {
      session.close();
    }
    expect(await plaintextStored()).toEqual([]);
  });

  it('a failing statement before the COPY in one Query, with COPY data sent anyway, then a COPY', async () => {
    await direct.query('TRUNCATE customers');
    const session = await raw();
    try {
      session.send([serialize.query('SELECT 1/0; COPY customers (ssn, note) FROM STDIN'),
        serialize.copyData(Buffer.from(`${SSN}\tskipped\n`)), serialize.copyDone(),
        serialize.query('COPY customers (note, ssn) FROM STDIN'), serialize.copyData(Buffer.from(`n\t${SSN}\n`)), serialize.copyDone()]);
      await session.readUntilReady(2);
    } finally {
      session.close();
    }
    expect(await plaintextStored()).toEqual([]);
  });
});

describe('SQL PREPARE before DDL that changes what its table name means, EXECUTE after it', () => {
  it('PREPARE (shadowed), DROP the shadowing table, EXECUTE with plaintext: refused or harmless', async () => {
    await direct.query('TRUNCATE customers');
    await direct.query('DROP SCHEMA IF EXISTS decoy9 CASCADE; CREATE SCHEMA decoy9; CREATE TABLE decoy9.customers (ssn text, note text)');
    const session = await raw();
    let log = '';
    try {
      log = await simple(session, 'SET search_path = decoy9, public', 'SELECT count(*) FROM customers',
        'PREPARE p9 (text, text) AS INSERT INTO customers (ssn, note) VALUES ($1, $2)', 'DROP TABLE decoy9.customers', `EXECUTE p9('${SSN}', 'sql-prepare')`);
    } finally {
      session.close();
    }
    expect(await plaintextStored(), log).toEqual([]);
  });
});
