/** One `$n` used in columns with different policies: each use stores what its own column should. */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { openRawSession } from '../support/rawProtocol.js';
import { APP, useAppHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

const shared = useAppHarness();

const TEXT_OID = 25;

describe('one parameter, several policies', () => {
  it('stores plaintext in the passthrough column and a token in the protected one', async () => {
    await shared.app.query("INSERT INTO customers (ssn, phone, note) VALUES ($1, $1, 'split-plain')", ['123-45-6789']);
    const stored = (await shared.direct.query("SELECT ssn, phone FROM customers WHERE note = 'split-plain'")).rows[0];
    expect(stored.phone).toBe('123-45-6789');
    expect(stored.ssn).not.toBe('123-45-6789');
    const read = (await shared.app.query("SELECT ssn, phone FROM customers WHERE note = 'split-plain'")).rows[0];
    expect(read).toEqual({ ssn: '123-45-6789', phone: '123-45-6789' });
  });

  it('protects each use with its own column policy (different kinds)', async () => {
    await shared.app.query("INSERT INTO customers (full_name, email, note) VALUES ($1, $1, 'split-kinds')", ['zed@example.com']);
    const stored = (await shared.direct.query("SELECT full_name, email FROM customers WHERE note = 'split-kinds'")).rows[0];
    expect(stored.full_name).not.toBe('zed@example.com');
    expect(stored.email).not.toBe('zed@example.com');
    expect(stored.email).toMatch(/@/);
    const read = (await shared.app.query("SELECT full_name, email FROM customers WHERE note = 'split-kinds'")).rows[0];
    expect(read).toEqual({ full_name: 'zed@example.com', email: 'zed@example.com' });
  });

  it('compares one parameter with a protected and with a plain column in WHERE', async () => {
    await shared.app.query("INSERT INTO customers (ssn, phone, note) VALUES ($1, $1, 'split-where')", ['222-33-4444']);
    const found = await shared.app.query("SELECT note FROM customers WHERE ssn = $1 AND phone = $1 AND note = 'split-where'", ['222-33-4444']);
    expect(found.rows).toEqual([{ note: 'split-where' }]);
    // UPDATE: SET a plain column from the parameter compared with a protected one.
    await shared.app.query("UPDATE customers SET note = $1 WHERE ssn = $1 AND note = 'split-where'", ['222-33-4444']);
    const stored = (await shared.direct.query("SELECT note, ssn FROM customers WHERE note = '222-33-4444'")).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].ssn).not.toBe('222-33-4444');
  });

  it('keeps declared parameter types, and Describe shows the client its own parameter count', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ name: 'split_typed', text: "INSERT INTO customers (ssn, phone, note) VALUES ($1, $1, $2)", types: [TEXT_OID, TEXT_OID] }),
      serialize.describe({ type: 'S', name: 'split_typed' }),
      serialize.bind({ statement: 'split_typed', values: ['333-44-5555', 'split-typed'] }),
      serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    expect(messages.filter((m) => m.type === 'E')).toEqual([]);
    const description = messages.find((message) => message.type === 't');
    expect(description?.body.readInt16BE(0)).toBe(2);
    expect(description?.body.length).toBe(2 + 2 * 4);
    const stored = (await shared.direct.query("SELECT ssn, phone FROM customers WHERE note = 'split-typed'")).rows[0];
    expect(stored.phone).toBe('333-44-5555');
    expect(stored.ssn).not.toBe('333-44-5555');
  });

  it('splits $01 and $1 as one parameter, and leaves $1 inside a string or comment alone', async () => {
    await shared.app.query("INSERT INTO customers (phone, ssn, note) VALUES ($01, $1, 'split-01 $1') -- $1", ['321-54-9876']);
    const stored = (await shared.direct.query("SELECT ssn, phone, note FROM customers WHERE note LIKE 'split-01%'")).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].phone).toBe('321-54-9876');
    expect(stored[0].ssn).not.toBe('321-54-9876');
    expect(stored[0].note).toBe('split-01 $1');
  });

  it('carries per-parameter formats over to the appended parameter', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ name: 'split_formats', text: "INSERT INTO customers (note, ssn, phone) VALUES ($1, $2, $2)" }),
      serialize.bind({ statement: 'split_formats', values: ['split-formats', Buffer.from('444-55-6666')], binary: false }),
      serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    expect(messages.filter((m) => m.type === 'E')).toEqual([]);
    const stored = (await shared.direct.query("SELECT ssn, phone FROM customers WHERE note = 'split-formats'")).rows[0];
    expect(stored.phone).toBe('444-55-6666');
    expect(stored.ssn).not.toBe('444-55-6666');
  });
});

describe('abuse: one token feeding columns with different policies', () => {
  it('a Bind with fewer values than the client statement has fails in the server, storing nothing', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ name: 'split_short', text: "INSERT INTO customers (ssn, phone, note) VALUES ($1, $1, $2)" }),
      serialize.bind({ statement: 'split_short', values: ['777-88-9999'] }),
      serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    expect(messages.filter((m) => m.type === 'E')).toHaveLength(1);
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE ssn = '777-88-9999' OR phone = '777-88-9999'")).rows[0].n).toBe(0);
  });

  it('a Bind that itself carries the appended parameter still has it protected for its column', async () => {
    // The server's statement has the appended $3: a client that guesses it and sends three values
    // must not get a plaintext into ssn through it.
    const session = await openRawSession(shared.harness.via(APP));
    session.send([
      serialize.parse({ name: 'split_guessed', text: 'INSERT INTO customers (phone, ssn, note) VALUES ($1, $1, $2)' }),
      serialize.bind({ statement: 'split_guessed', values: ['+1 555 0100', 'split-guessed', '888-99-0000'] }),
      serialize.execute(), serialize.sync(),
    ]);
    const messages = await session.readUntilReady(1);
    session.close();
    const stored = (await shared.direct.query("SELECT ssn, phone FROM customers WHERE note = 'split-guessed'")).rows;
    expect(stored.map((row) => row.ssn)).not.toContain('888-99-0000');
    expect(stored.map((row) => row.ssn)).not.toContain('+1 555 0100');
    // The Bind is taken and one row stored, its ssn holding no value the client sent in plaintext.
    expect(messages.filter((m) => m.type === 'E')).toHaveLength(0);
    expect(stored).toHaveLength(1);
  });

  it('refuses one $n compared with a protected and a plain column at one place, and the session goes on', async () => {
    const error = await failure(() => shared.app.query('SELECT id FROM customers WHERE $1 IN (ssn, phone)', ['555-66-7777']));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(/customers\.ssn/);
    expect(error.message).toMatch(/pass the value twice/);
    expect((await shared.app.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses one $n compared with protected columns of different policies at one place', async () => {
    const error = await failure(() => shared.app.query('SELECT id FROM customers WHERE $1 IN (ssn, card_number)', ['555-66-7777']));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(/pass the value twice/);
  });

  it('refuses one constant compared with a protected and a plain column', async () => {
    const error = await failure(() => shared.app.query("SELECT id FROM customers WHERE '555-66-7777' IN (ssn, phone)"));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(/customers\.ssn/);
    expect(error.message).toMatch(/write the value twice/);
    expect(error.message).not.toMatch(/555-66-7777/);
  });

  it('never leaves a token in the plain column, whatever the order of uses', async () => {
    await shared.app.query("INSERT INTO customers (phone, note, ssn) VALUES ($1, 'split-order', $1)", ['666-77-8888']);
    const stored = (await shared.direct.query("SELECT ssn, phone FROM customers WHERE note = 'split-order'")).rows[0];
    expect(stored.phone).toBe('666-77-8888');
    expect(stored.ssn).not.toBe('666-77-8888');
  });
});
