/**
 * RowDescription and CommandComplete followed in place (a description that repeats byte for byte,
 * a command of no DDL), attacked: descriptions larger than a read, pipelines in both protocols,
 * pgveil's own Describe, binary formats, a reload between two identical descriptions, search_path
 * and DDL in the same text. No phone of SUPPORT's leaves in plaintext; each attack counts the
 * messages taken in place, so it shows the path it attacks ran.
 */
import { writeFile } from 'node:fs/promises';
import { serialize } from 'pg-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { BackendPolicy } from '../../../src/proxy/enforcement/backendPolicy.js';
import { openRawSession } from '../support/rawProtocol.js';
import { POLICIES_YAML, SUPPORT, useDirectHarness } from './support/policyHarness.js';
import { ATTACK_PHONE, messageTexts } from './support/rawAttempts.js';

/** RowDescriptions and CommandCompletes the read path followed in place, and whole. */
const seenBy = { T: 0, C: 0, wholeT: 0, wholeC: 0 };
const wantsWhole = BackendPolicy.prototype.wantsWhole;
BackendPolicy.prototype.wantsWhole = function (this: BackendPolicy, type: number, chunk: Buffer, start: number, end: number): boolean {
  const whole = wantsWhole.call(this, type, chunk, start, end);
  if (type === 0x54) seenBy[whole ? 'wholeT' : 'T']++;
  if (type === 0x43) seenBy[whole ? 'wholeC' : 'C']++;
  return whole;
};

/** How many RowDescriptions and CommandCompletes `attack` had followed in place. */
async function inPlaceDuring(attack: () => Promise<void>): Promise<{ T: number; C: number }> {
  const before = { ...seenBy };
  await attack();
  return { T: seenBy.T - before.T, C: seenBy.C - before.C };
}

const h = useDirectHarness();
const NOTE = 'victim-note-plaintext';

beforeEach(async () => {
  await writeFile(h.harness.policyFile, POLICIES_YAML);
  expect((await h.harness.store.reload()).ok).toBe(true);
  await h.direct.query('DROP SCHEMA IF EXISTS atk CASCADE');
  await h.direct.query('DELETE FROM customers');
  await h.direct.query('INSERT INTO customers (id, phone, note) VALUES (1, $1, $2)', [ATTACK_PHONE, NOTE]);
});

async function raw(account = SUPPORT) {
  return openRawSession(h.harness.via(account));
}

describe('RowDescription and CommandComplete followed in place', () => {
  it('a RowDescription larger than a read, repeated in both protocols', async () => {
    const s = await raw();
    try {
      const cols = Array.from({ length: 1500 }, (_, i) => `phone AS p${String(i).padStart(4, '0')}${'x'.repeat(50)}`).join(', ');
      const q = `SELECT ${cols} FROM customers`;
      s.send([serialize.query(q), serialize.query(q), serialize.parse({ text: q }), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]);
      // Cut across reads: followed at its header, taken whole. (Sent in one write, this also once hung
      // the session: a reader pausing at the last chunk held past the high-water mark left reading off.)
      const seen = messageTexts(await s.readUntilReady(3, 20_000));
      expect(seen).not.toContain(ATTACK_PHONE);
      expect(seen.match(/^D /gm)?.length).toBe(4);
    } finally { s.close(); }
  }, 120_000);

  it('simple queries repeated, several in one text, pipelined in one write', async () => {
    const s = await raw();
    try {
      const q = 'SELECT phone, note FROM customers';
      const counted = await inPlaceDuring(async () => {
        s.send([serialize.query(q), serialize.query(q), serialize.query(`${q}; ${q}; SET search_path TO public; ${q}`), serialize.query(q)]);
        const seen = messageTexts(await s.readUntilReady(4));
        expect(seen).not.toContain(ATTACK_PHONE);
        expect(seen.match(/^D /gm)?.length).toBe(6);
      });
      expect(counted.T).toBeGreaterThan(0);
      expect(counted.C).toBeGreaterThan(0);
    } finally { s.close(); }
  });

  it('extended protocol pipelined (Describe portal in place, internal Describe, binary formats)', async () => {
    const s = await raw();
    try {
      const round = [
        serialize.parse({ text: 'SELECT phone FROM customers WHERE id = $1', types: [23] }),
        serialize.bind({ values: ['1'] }), serialize.describe({ type: 'P' }), serialize.execute({}),
        serialize.bind({ values: ['1'] }), serialize.execute({}), // no Describe: pgveil's own
        serialize.bind({ values: ['1'], binary: true }), serialize.describe({ type: 'P' }), serialize.execute({}),
        serialize.bind({ values: ['1'] }), serialize.describe({ type: 'P' }), serialize.execute({ rows: 1 }), serialize.execute({}),
      ];
      const counted = await inPlaceDuring(async () => {
        s.send([...round, serialize.flush(), ...round, serialize.sync(), ...round, serialize.sync()]);
        const seen = messageTexts(await s.readUntilReady(2));
        expect(seen).not.toContain(ATTACK_PHONE);
        expect(seen).not.toContain('+15550104477');
        expect(seen).not.toMatch(/^E /m);
        expect(seen.match(/^D /gm)?.length).toBeGreaterThanOrEqual(9);
      });
      expect(counted.T).toBeGreaterThan(0);
    } finally { s.close(); }
  });

  it('a reload between two identical RowDescriptions: narrowing ends the session, widening plans the next under the new policies', async () => {
    const query = serialize.query('SELECT note FROM customers');
    const protectedNote = `${POLICIES_YAML}  public.customers.note: { kind: phone, method: passthrough, reveal: { app: plaintext, "*": mask } }\n`;
    const s = await raw();
    try {
      s.send(query);
      expect(messageTexts(await s.readUntilReady())).toContain(NOTE); // note unprotected
      await writeFile(h.harness.policyFile, protectedNote);
      expect((await h.harness.store.reload()).ok).toBe(true);
      s.send(query);
      const ended = messageTexts(await s.readUntilReady());
      expect(ended).toContain('57P01');
      expect(ended).not.toContain(NOTE);
    } finally { s.close(); }
    const again = await raw();
    try {
      const counted = await inPlaceDuring(async () => {
        for (let i = 0; i < 2; i++) {
          again.send(query);
          expect(messageTexts(await again.readUntilReady())).not.toContain(NOTE);
        }
        await writeFile(h.harness.policyFile, POLICIES_YAML);
        expect((await h.harness.store.reload()).ok).toBe(true);
        // The same bytes again: read whole once the catalog is read again, then in place, both planned with no policy on note.
        for (let i = 0; i < 2; i++) {
          again.send(query);
          expect(messageTexts(await again.readUntilReady())).toContain(NOTE);
        }
      });
      expect(counted.T).toBeGreaterThanOrEqual(2);
    } finally { again.close(); }
  });

  it('search_path set in the same text as the read, by a SET completed in place: the rows are planned from the table they come from', async () => {
    await h.direct.query("CREATE SCHEMA atk; CREATE TABLE atk.customers (id int, phone text); INSERT INTO atk.customers VALUES (1, 'shadow-phone')");
    const s = await raw(SUPPORT);
    try {
      const counted = await inPlaceDuring(async () => {
        s.send(serialize.query('SELECT phone FROM customers'));
        await s.readUntilReady();
        s.send(serialize.query('SET search_path TO atk, public; SELECT phone FROM customers; SET search_path TO public; SELECT phone FROM customers'));
        s.send(serialize.query('SELECT phone FROM customers'));
        const seen = messageTexts(await s.readUntilReady(2));
        expect(seen).not.toContain(ATTACK_PHONE);
        expect(seen).toContain('shadow-phone');
        expect(seen.match(/^D /gm)?.length).toBe(3);
      });
      expect(counted.C).toBeGreaterThan(0);
    } finally { s.close(); }
  });

  it('DDL in a transaction, then the same description: the DDL is followed whole, the catalog read again', async () => {
    const s = await raw(SUPPORT);
    try {
      s.send(serialize.query('SELECT phone FROM customers'));
      await s.readUntilReady();
      s.send(serialize.query('BEGIN; CREATE TEMP TABLE scratch (x int); SELECT phone FROM customers; ROLLBACK; SELECT phone FROM customers'));
      const seen = messageTexts(await s.readUntilReady());
      expect(seen).not.toMatch(/^E /m);
      expect(seen).not.toContain(ATTACK_PHONE);
      expect(seen.match(/^D /gm)?.length).toBe(2);
    } finally { s.close(); }
  });
});
