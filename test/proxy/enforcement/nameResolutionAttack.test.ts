/**
 * Attacks on name resolution by accounts that may store only tokens (ANALYST) or see only masks
 * (SUPPORT): other names for a protected table's rows (an inheritance or partition parent, the
 * planner's statistics), names pgveil and PostgreSQL read differently, and DDL that changes what a
 * name denotes between Parse, Bind and Execute. Each must be refused or harmless: no plaintext
 * stored in a protected column, no plaintext of a protected or masked column sent back.
 */
import { serialize } from 'pg-protocol';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { RawSession } from '../support/rawProtocol.js';
import { writeFile } from 'node:fs/promises';
import { ANALYST, POLICIES_YAML, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
import { ATTACK_PHONE, ATTACK_SSN, attempt as attemptAs, messageTexts, simple } from './support/rawAttempts.js';

const SSN = ATTACK_SSN;
const PHONE = ATTACK_PHONE;
const texts = messageTexts;

const h = useDirectHarness();

beforeEach(async () => {
  await h.direct.query('DELETE FROM customers');
  for (let i = 0; i < 3; i++) {
    await h.direct.query('INSERT INTO customers (id, phone, note) VALUES ($1, $2, $3)', [100 + i, PHONE, `row ${i}`]);
  }
});

const attempt = (account: TestAccount, run: (session: RawSession) => Promise<string>): Promise<string> => attemptAs(h, account, run);

describe('a protected table put under a parent without policies', () => {
  afterAll(async () => {
    await h.direct.query('DROP TABLE IF EXISTS atk_parent, atk_parts CASCADE');
  });

  it('ALTER TABLE customers INHERIT a parent of the attacker: rows read and updated through the parent', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE TABLE atk_parent (phone text, ssn text)');
      seen += await simple(session, 'ALTER TABLE customers INHERIT atk_parent');
      seen += await simple(session, 'SELECT phone FROM atk_parent');
      seen += await simple(session, `UPDATE atk_parent SET ssn = '${SSN}'`);
      seen += await simple(session, 'ALTER TABLE customers NO INHERIT atk_parent');
      expect(seen).toMatch(/^E SERROR\0VERROR\0C0A000\0Mpgveil refused the statement: INHERIT would put "?public"?\."?customers"?, which has column policies, under/m);
      return seen;
    });
  });

  it('ALTER TABLE parent ATTACH PARTITION customers: rows inserted and read through the parent', async () => {
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'CREATE TABLE atk_parts (LIKE customers) PARTITION BY RANGE (id)');
      seen += await simple(session, 'ALTER TABLE atk_parts ATTACH PARTITION customers FOR VALUES FROM (MINVALUE) TO (MAXVALUE)');
      seen += await simple(session, `INSERT INTO atk_parts (id, ssn, note) VALUES (7, '${SSN}', 'via parent')`);
      seen += await simple(session, 'SELECT phone FROM atk_parts');
      seen += await simple(session, 'ALTER TABLE atk_parts DETACH PARTITION customers');
      expect(seen).toMatch(/^E SERROR\0VERROR\0C0A000\0Mpgveil refused the statement: ATTACH PARTITION would put "?public"?\."?customers"?, which has column policies, under/m);
      return seen;
    });
  });
});

describe('the planner statistics of a masked column', () => {
  it('ANALYZE customers, then read pg_stats', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'ANALYZE customers');
      seen += await simple(session, "SELECT most_common_vals::text, histogram_bounds::text FROM pg_stats WHERE tablename = 'customers' AND attname = 'phone'");
      seen += await simple(session, "SELECT stavalues1::text FROM pg_statistic WHERE starelid = 'customers'::regclass");
      seen += await simple(session, 'COPY pg_catalog.pg_statistic TO STDOUT');
      seen += await simple(session, 'UPDATE pg_statistic SET stanullfrac = stanullfrac RETURNING stavalues1::text');
      seen += await simple(session, 'CREATE STATISTICS atk_stats (mcv) ON phone, note FROM customers; ANALYZE customers');
      seen += await simple(session, 'SELECT most_common_vals::text FROM pg_stats_ext');
      seen += await simple(session, 'DROP STATISTICS IF EXISTS atk_stats');
      expect(seen.match(/^E SERROR\0VERROR\0C42501\0Mpgveil refused the statement: pg_\w+ falls under the rule "monitor"/gm)).toHaveLength(5);
      return seen;
    });
  });
});

describe('a statement prepared with Parse, run by SQL EXECUTE after its name moved', () => {
  beforeEach(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk3 CASCADE');
  });
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk3 CASCADE');
  });

  it.each([
    ['the search_path moved', 'SET search_path = public', `EXECUTE w('${SSN}', 'executed')`],
    ['the search_path moved earlier in the same text', 'SELECT 1', `SET search_path = public; EXECUTE w('${SSN}', 'executed')`],
    ['the search_path moved in the open transaction', 'BEGIN; SET LOCAL search_path = public', `EXECUTE w('${SSN}', 'executed'); COMMIT`],
  ])('an INSERT parsed on search_path atk3, %s, then EXECUTE w(…) as a simple Query or a Parse', async (_, change, run) => {
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'CREATE SCHEMA atk3; CREATE TABLE atk3.customers (ssn text, phone text, note text)');
      seen += await simple(session, 'SET search_path = atk3');
      session.send([serialize.parse({ name: 'w', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      seen += await simple(session, change);
      seen += await simple(session, run);
      seen += await simple(session, 'ROLLBACK');
      seen += await simple(session, 'SET search_path = public');
      session.send([serialize.parse({ name: '', text: `EXECUTE w('${SSN}', 'parsed')` }), serialize.bind({}), serialize.execute({}), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).toMatch(/^E SERROR\0VERROR\0C0A000\0Mpgveil refused the statement: EXECUTE/m);
      return seen;
    });
  });

  it('a SELECT of an expression over phone parsed on search_path atk3, then EXECUTE r on search_path public', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE SCHEMA atk3; CREATE TABLE atk3.customers (ssn text, phone text, note text)');
      seen += await simple(session, 'SET search_path = atk3');
      session.send([serialize.parse({ name: 'r', text: "SELECT phone || '' AS p FROM customers" }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      seen += await simple(session, 'SET search_path = public');
      seen += await simple(session, 'EXECUTE r');
      session.send([serialize.parse({ name: 'x', text: 'EXECUTE r' }), serialize.bind({ statement: 'x' }), serialize.execute({}), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).not.toMatch(/^D /m);
      return seen;
    });
  });

  it('names that shadow a protected table resolve to it: an INSERT and an exposure of phone, parsed on search_path atk3, public', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE SCHEMA atk3; CREATE TABLE atk3.customers (ssn text, phone text, note text)');
      seen += await simple(session, 'SET search_path = atk3, public');
      session.send([serialize.parse({ name: 'r', text: "SELECT phone || '' AS p FROM customers" }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      expect(seen).toMatch(/^E SERROR\0VERROR\0C42501\0Mpgveil refused the statement: column public.customers.phone is masked/m);
      seen += await simple(session, `INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'shadow')`);
      // Tokens in the shadowing table (the protected side), plaintext nowhere.
      const shadow = await h.direct.query<{ ssn: string }>("SELECT ssn FROM atk3.customers WHERE note = 'shadow'");
      expect(shadow.rows).toHaveLength(1);
      expect(shadow.rows[0]?.ssn).not.toBe(SSN);
      seen += await simple(session, 'DROP TABLE atk3.customers');
      seen += await simple(session, 'EXECUTE r');
      return seen;
    });
  });
});

describe('another session of the attacker moves the name while the statement waits', () => {
  beforeEach(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk4 CASCADE');
    const setup = await h.harness.connect(ANALYST);
    await setup.query('CREATE SCHEMA atk4; CREATE TABLE atk4.customers (ssn text, phone text, note text)');
    await setup.end();
  });
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk4 CASCADE');
  });

  it('an INSERT waits for the lock of an uncommitted DROP of the shadowing table; the server looks the name up again', async () => {
    const other = await h.harness.connect(ANALYST);
    try {
      await attempt(ANALYST, async (session) => {
        let seen = await simple(session, 'SET search_path = atk4, public');
        await other.query('BEGIN');
        await other.query('DROP TABLE atk4.customers');
        session.send(serialize.query(`INSERT INTO customers (ssn, note) VALUES ('${SSN}', 'after lock')`));
        const replies = session.readUntilReady(1, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await other.query('COMMIT');
        seen += texts(await replies);
        return seen;
      });
    } finally {
      await other.end().catch(() => undefined);
    }
  });

  it('a SELECT of an expression over phone, pipelined behind pg_sleep while the other session drops the shadow', async () => {
    const other = await h.harness.connect(ANALYST);
    try {
      await attempt(SUPPORT, async (session) => {
        let seen = await simple(session, 'SET search_path = atk4, public');
        session.send([
          serialize.parse({ name: '', text: 'SELECT pg_sleep(1)' }), serialize.bind({}), serialize.execute({}),
          serialize.parse({ name: '', text: "SELECT phone || '' AS p FROM customers" }), serialize.bind({}), serialize.execute({}),
          serialize.sync(),
        ]);
        const replies = session.readUntilReady(1, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query('DROP TABLE atk4.customers');
        seen += texts(await replies);
        return seen;
      });
    } finally {
      await other.end().catch(() => undefined);
    }
  });
});

describe('another session of the attacker creates a shadow while the statement waits', () => {
  beforeEach(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk5 CASCADE');
    await h.direct.query('CREATE SCHEMA atk5');
  });
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk5 CASCADE');
  });

  async function shadowPhones(): Promise<string[]> {
    const shadow = await h.direct.query<{ phone: string }>("SELECT phone FROM atk5.customers");
    return shadow.rows.map((row) => row.phone);
  }

  it.each([
    ['INSERT … SELECT', 'INSERT INTO customers (id, phone) SELECT id, phone FROM public.customers'],
    ['UPDATE … FROM', 'UPDATE customers SET phone = p.phone FROM public.customers p WHERE p.id = customers.id'],
  ])('%s of phone from public.customers into an unqualified customers, pipelined behind pg_sleep', async (_, copy) => {
    const other = await h.harness.connect(ANALYST);
    try {
      await attempt(SUPPORT, async (session) => {
        let seen = await simple(session, 'SET search_path = atk5, public');
        session.send([
          serialize.parse({ name: '', text: 'SELECT pg_sleep(1)' }), serialize.bind({}), serialize.execute({}),
          serialize.parse({ name: '', text: copy }), serialize.bind({}), serialize.execute({}),
          serialize.sync(),
        ]);
        const replies = session.readUntilReady(1, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query('CREATE TABLE atk5.customers (id int, ssn text, phone text, note text)');
        await other.query('INSERT INTO atk5.customers (id) SELECT g FROM generate_series(100, 102) g');
        seen += texts(await replies);
        expect(seen).toMatch(/^E SERROR\0VERROR\0C42501\0Mpgveil refused the statement: column public.customers.phone is masked/m);
        seen += await simple(session, 'SELECT phone FROM atk5.customers');
        return seen;
      });
      expect(await shadowPhones()).not.toContain(PHONE);
    } finally {
      await other.end().catch(() => undefined);
    }
  });
});

describe('a statement prepared before a policy reload, run after it', () => {
  const NOTE_PROTECTED = `${POLICIES_YAML}  public.customers.note: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }\n`;

  afterAll(async () => {
    await writeFile(h.harness.policyFile, POLICIES_YAML);
    await h.harness.store.reload();
  });

  async function noteStoredPlaintext(): Promise<number> {
    const stored = await h.direct.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE note = $1', [SSN]);
    return stored.rows[0]?.n ?? 0;
  }

  it.each([
    ['Parse, then SQL EXECUTE', 'parse', `EXECUTE w('${SSN}')`],
    ['SQL PREPARE, then SQL EXECUTE', 'prepare', `EXECUTE w('${SSN}')`],
  ])('%s: the column becomes protected in between', async (_, how, run) => {
    await writeFile(h.harness.policyFile, POLICIES_YAML);
    await h.harness.store.reload();
    await attempt(ANALYST, async (session) => {
      let seen = '';
      if (how === 'parse') {
        session.send([serialize.parse({ name: 'w', text: 'INSERT INTO customers (note) VALUES ($1)' }), serialize.sync()]);
        seen += texts(await session.readUntilReady());
      } else {
        seen += await simple(session, 'PREPARE w AS INSERT INTO customers (note) VALUES ($1)');
      }
      expect(seen).not.toMatch(/^E /m);
      await writeFile(h.harness.policyFile, NOTE_PROTECTED);
      await h.harness.store.reload();
      seen += await simple(session, run);
      return seen;
    });
    expect(await noteStoredPlaintext()).toBe(0);
  });
});

describe('plans fixed before DDL: portals, cursors, temporary tables', () => {
  afterAll(async () => {
    await h.direct.query('DROP SCHEMA IF EXISTS atk5 CASCADE');
  });

  it('a named portal bound on search_path atk5, the shadowing table dropped in the block, then executed', async () => {
    await attempt(ANALYST, async (session) => {
      let seen = await simple(session, 'CREATE SCHEMA atk5; CREATE TABLE atk5.customers (ssn text, note text)');
      seen += await simple(session, 'SET search_path = atk5, public');
      seen += await simple(session, 'BEGIN');
      session.send([
        serialize.parse({ name: 'pw', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }),
        serialize.bind({ statement: 'pw', portal: 'pp', values: [SSN, 'portal'] }), serialize.sync(),
      ]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'DROP TABLE atk5.customers');
      session.send([serialize.execute({ portal: 'pp' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'COMMIT');
      return seen;
    });
  });

  it('a cursor declared over a temporary table hiding customers, the table dropped, then FETCH', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE TEMP TABLE customers (phone text)');
      seen += await simple(session, "BEGIN; DECLARE c CURSOR FOR SELECT phone || '' FROM customers");
      seen += await simple(session, 'DROP TABLE pg_temp.customers');
      seen += await simple(session, 'FETCH ALL FROM c');
      seen += await simple(session, 'ROLLBACK');
      seen += await simple(session, 'DROP TABLE IF EXISTS pg_temp.customers');
      return seen;
    });
  });

  it('a temporary table hiding customers with no search_path change: writes protected, exposures refused', async () => {
    await attempt(SUPPORT, async (session) => {
      let seen = await simple(session, 'CREATE TEMP TABLE customers (ssn text, phone text, note text)');
      seen += await simple(session, "SELECT phone || '' FROM customers");
      session.send([serialize.parse({ name: 'tw', text: 'INSERT INTO customers (ssn, note) VALUES ($1, $2)' }), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      seen += await simple(session, 'DROP TABLE pg_temp.customers');
      session.send([serialize.bind({ statement: 'tw', values: [SSN, 'temp'] }), serialize.execute({}), serialize.sync()]);
      seen += texts(await session.readUntilReady());
      return seen;
    });
  });
});
