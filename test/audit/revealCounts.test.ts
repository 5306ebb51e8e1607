/**
 * proxy.reveal through the real proxy, route by route: the rows its lines count are the rows
 * that carried plaintext to the client, no more and no fewer, with the columns they carried.
 */
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, AuditLog } from '../../src/audit/index.js';
import { openRawSession, type BackendMessage, type RawSession } from '../proxy/support/rawProtocol.js';
import { APP, startPolicyHarness, type PolicyHarness } from '../proxy/enforcement/support/policyHarness.js';

const SSN = '123-45-6789';
const ROWS = 5;
const events: AuditEvent[] = [];
const audit: AuditLog = { record: (event) => void events.push(event) };
let harness: PolicyHarness;

type Reveal = Extract<AuditEvent, { event: 'proxy.reveal' }>;

beforeAll(async () => {
  harness = await startPolicyHarness(undefined, undefined, { audit });
  const app = await harness.connect(APP);
  for (let i = 0; i < ROWS; i++) await app.query('INSERT INTO customers (ssn, email, note) VALUES ($1, $2, $3)', [SSN, `c${i}@example.com`, 'count']);
  await app.end();
});
afterAll(async () => harness?.stop());

/** The reveals `run` caused, in a raw session of its own as app. */
async function revealsOf(run: (session: RawSession) => Promise<BackendMessage[]>): Promise<{ reveals: Reveal[]; messages: BackendMessage[] }> {
  const session = await openRawSession(harness.via(APP));
  const before = events.length;
  let messages: BackendMessage[] = [];
  try {
    messages = await run(session);
  } finally {
    session.close();
  }
  return { reveals: events.slice(before).filter((e): e is Reveal => e.event === 'proxy.reveal'), messages };
}

const rowsOf = (reveals: Reveal[]): number => reveals.reduce((sum, r) => sum + r.rows, 0);
const withSsn = (messages: BackendMessage[], type: string): number => messages.filter((m) => m.type === type && m.body.includes(SSN)).length;

async function simple(session: RawSession, sql: string): Promise<BackendMessage[]> {
  session.send(serialize.query(sql));
  return session.readUntilReady();
}

describe('proxy.reveal counts the rows that carried plaintext', () => {
  it('COPY … TO STDOUT, text', async () => {
    const { reveals, messages } = await revealsOf((s) => simple(s, "COPY customers (ssn, email) TO STDOUT"));
    expect(withSsn(messages, 'd')).toBe(ROWS);
    expect(rowsOf(reveals)).toBe(ROWS);
  });

  it('COPY … TO STDOUT, csv with a header line', async () => {
    const { reveals, messages } = await revealsOf((s) => simple(s, "COPY customers (ssn) TO STDOUT WITH (FORMAT csv, HEADER)"));
    expect(withSsn(messages, 'd')).toBe(ROWS);
    expect(rowsOf(reveals)).toBe(ROWS);
  });

  it('COPY … TO STDOUT, binary (a header and a trailer around the rows)', async () => {
    const { reveals, messages } = await revealsOf((s) => simple(s, "COPY customers (ssn) TO STDOUT WITH (FORMAT binary)"));
    expect(withSsn(messages, 'd')).toBe(ROWS);
    expect(rowsOf(reveals)).toBe(ROWS);
  });

  it('COPY (SELECT …) TO STDOUT: refused, nothing revealed', async () => {
    const { reveals, messages } = await revealsOf((s) => simple(s, "COPY (SELECT ssn FROM customers WHERE note = 'count') TO STDOUT"));
    expect(withSsn(messages, 'd')).toBe(0);
    expect(rowsOf(reveals)).toBe(0);
  });

  it('a portal read two rows at a time (PortalSuspended, then more Executes)', async () => {
    const { reveals, messages } = await revealsOf(async (s) => {
      s.send([
        serialize.parse({ text: "SELECT ssn FROM customers WHERE note = 'count'" }), serialize.bind({}),
        serialize.execute({ rows: 2 }), serialize.execute({ rows: 2 }), serialize.execute({ rows: 2 }), serialize.sync(),
      ]);
      return s.readUntilReady();
    });
    expect(withSsn(messages, 'D')).toBe(ROWS);
    expect(rowsOf(reveals)).toBe(ROWS);
  });

  it('a cursor FETCHed in parts, one WITH HOLD after COMMIT, a BINARY one', async () => {
    const { reveals, messages } = await revealsOf(async (s) => {
      const out = [
        ...(await simple(s, "BEGIN; DECLARE c CURSOR FOR SELECT ssn FROM customers WHERE note = 'count'; FETCH 2 FROM c; FETCH ALL FROM c; COMMIT")),
        ...(await simple(s, "BEGIN; DECLARE h CURSOR WITH HOLD FOR SELECT ssn FROM customers WHERE note = 'count'; COMMIT")),
        ...(await simple(s, 'FETCH ALL FROM h; CLOSE h')),
        ...(await simple(s, "BEGIN; DECLARE b BINARY CURSOR FOR SELECT ssn FROM customers WHERE note = 'count'; FETCH 3 FROM b; FETCH ALL FROM b; COMMIT")),
      ];
      return out;
    });
    expect(withSsn(messages, 'D')).toBe(3 * ROWS);
    expect(rowsOf(reveals)).toBe(3 * ROWS);
  });

  it('RETURNING of an UPDATE, and two SELECTs of other columns in one Query', async () => {
    const { reveals, messages } = await revealsOf((s) => simple(s,
      "UPDATE customers SET note = 'count' WHERE note = 'count' RETURNING ssn; SELECT email FROM customers WHERE note = 'count'"));
    expect(withSsn(messages, 'D')).toBe(ROWS);
    expect(reveals.map((r) => [r.columns, r.rows])).toEqual([[['public.customers.ssn'], ROWS], [['public.customers.email'], ROWS]]);
  });

  it('a pipeline whose second statement fails: the first one\'s rows are recorded', async () => {
    const { reveals, messages } = await revealsOf(async (s) => {
      s.send([
        serialize.parse({ text: "SELECT ssn FROM customers WHERE note = 'count'" }), serialize.bind({}), serialize.execute({}),
        serialize.parse({ text: 'SELECT 1/0' }), serialize.bind({}), serialize.execute({}), serialize.sync(),
      ]);
      return s.readUntilReady();
    });
    expect(withSsn(messages, 'D')).toBe(ROWS);
    expect(rowsOf(reveals)).toBe(ROWS);
  });
});
