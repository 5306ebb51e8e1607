/** SQL PREPARE / EXECUTE / DEALLOCATE: EXECUTE's constant arguments are protected like literals. */
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { openRawSession } from '../support/rawProtocol.js';
import { APP, useAppHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

const shared = useAppHarness();

async function storedSsn(note: string): Promise<string[]> {
  return (await shared.direct.query('SELECT ssn FROM customers WHERE note = $1 ORDER BY id', [note])).rows.map((row) => row.ssn as string);
}

describe('SQL PREPARE and EXECUTE', () => {
  it('protects constant arguments of EXECUTE, and finds the rows again by them', async () => {
    await shared.app.query('PREPARE add_customer(text, text, text) AS INSERT INTO customers (ssn, phone, note) VALUES ($1, $2, $3)');
    await shared.app.query("EXECUTE add_customer('123-45-6789', '+1 555 0199', 'sqlprep')");
    const [ssn] = await storedSsn('sqlprep');
    expect(ssn).toBeDefined();
    expect(ssn).not.toBe('123-45-6789');
    expect((await shared.direct.query("SELECT phone FROM customers WHERE note = 'sqlprep'")).rows[0].phone).toBe('+1 555 0199');
    await shared.app.query('PREPARE find_customer(text) AS SELECT note, ssn FROM customers WHERE ssn = $1');
    expect((await shared.app.query("EXECUTE find_customer('123-45-6789')")).rows).toEqual([{ note: 'sqlprep', ssn: '123-45-6789' }]);
    await shared.app.query('PREPARE any_customer(text[]) AS SELECT note FROM customers WHERE ssn = ANY($1)');
    expect((await shared.app.query("EXECUTE any_customer('{000-00-0000,123-45-6789}')")).rows).toEqual([{ note: 'sqlprep' }]);
    expect((await failure(() => shared.app.query("EXECUTE any_customer(ARRAY['123-45-6789'])"))).code).toBe('0A000');
    await shared.app.query('DEALLOCATE any_customer');
    await shared.app.query('DEALLOCATE find_customer');
    await shared.app.query('DEALLOCATE add_customer');
  });

  it('uses a PREPARE earlier in the same text, and EXPLAIN EXECUTE alike', async () => {
    await shared.app.query("PREPARE same_text AS INSERT INTO customers (ssn, note) VALUES ($1, 'sqlprep-same'); EXECUTE same_text('222-33-4444'); DEALLOCATE same_text");
    const [ssn] = await storedSsn('sqlprep-same');
    expect(ssn).not.toBe('222-33-4444');
    await shared.app.query('PREPARE explained(text) AS SELECT id FROM customers WHERE ssn = $1');
    const plan = await shared.app.query("EXPLAIN (COSTS OFF) EXECUTE explained('222-33-4444')");
    expect(JSON.stringify(plan.rows)).not.toMatch(/222-33-4444/);
    await shared.app.query('DEALLOCATE explained');
  });

  it('protects EXECUTE arguments of a statement sent with Parse', async () => {
    await shared.app.query('PREPARE via_parse(text) AS INSERT INTO customers (ssn, note) VALUES ($1, $$sqlprep-parse$$)');
    await shared.app.query({ text: "EXECUTE via_parse('333-44-5555')", values: [] });
    await shared.app.query({ name: 'runs_via_parse', text: "EXECUTE via_parse('333-44-5556')" });
    expect(await storedSsn('sqlprep-parse')).toHaveLength(2);
    expect(await storedSsn('sqlprep-parse')).not.toContain('333-44-5555');
    expect(await storedSsn('sqlprep-parse')).not.toContain('333-44-5556');
    await shared.app.query('DEALLOCATE via_parse');
  });
});

describe('abuse: SQL EXECUTE', () => {
  it('refuses an expression as the argument of a protected parameter', async () => {
    await shared.app.query('PREPARE expr_arg(text) AS INSERT INTO customers (ssn, note) VALUES ($1, $$sqlprep-bad$$)');
    const error = await failure(() => shared.app.query("EXECUTE expr_arg(upper('444-55-6666'))"));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(/customers\.ssn.*not a constant/);
    expect(error.message).not.toMatch(/444-55-6666/);
    const column = await failure(() => shared.app.query('EXECUTE expr_arg((SELECT phone FROM customers LIMIT 1))'));
    expect(column.code).toBe('0A000');
    await shared.app.query('DEALLOCATE expr_arg');
    expect(await storedSsn('sqlprep-bad')).toEqual([]);
  });

  it('refuses EXECUTE of a name prepared in another session, or deallocated', async () => {
    const other = await shared.harness.connect(APP);
    await other.query('PREPARE elsewhere(text) AS INSERT INTO customers (ssn, note) VALUES ($1, $$sqlprep-bad$$)');
    const error = await failure(() => shared.app.query("EXECUTE elsewhere('555-66-7777')"));
    expect(error.code).toBe('26000');
    await other.end();
    await shared.app.query('PREPARE gone(text) AS INSERT INTO customers (ssn, note) VALUES ($1, $$sqlprep-bad$$)');
    await shared.app.query('DEALLOCATE gone');
    expect((await failure(() => shared.app.query("EXECUTE gone('555-66-7777')"))).code).toBe('26000');
    await shared.app.query('PREPARE gone_all(text) AS INSERT INTO customers (ssn, note) VALUES ($1, $$sqlprep-bad$$)');
    await shared.app.query('DISCARD ALL');
    expect((await failure(() => shared.app.query("EXECUTE gone_all('555-66-7777')"))).code).toBe('26000');
    expect(await storedSsn('sqlprep-bad')).toEqual([]);
    expect((await shared.app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('refuses PREPARE of one parameter used in a protected and a plain column', async () => {
    const error = await failure(() => shared.app.query('PREPARE both_ways(text) AS INSERT INTO customers (ssn, phone) VALUES ($1, $1)'));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(/pass the value twice/);
  });

  it('refuses a Bind of a parsed EXECUTE whose prepared statement was prepared again with other policies', async () => {
    const session = await openRawSession(shared.harness.via(APP));
    session.send([serialize.query('PREPARE swap(text) AS SELECT $1::text AS plain_value'), serialize.parse({ name: 'runs_swap', text: "EXECUTE swap('666-77-8888')" }), serialize.sync()]);
    await session.readUntilReady(2);
    session.send([serialize.query("DEALLOCATE swap; PREPARE swap(text) AS INSERT INTO customers (ssn, note) VALUES ($1, 'sqlprep-swap')")]);
    await session.readUntilReady(1);
    session.send([serialize.bind({ statement: 'runs_swap' }), serialize.execute(), serialize.sync()]);
    const messages = await session.readUntilReady(1);
    session.close();
    const error = messages.find((message) => message.type === 'E');
    expect(error?.body.toString('utf8')).toMatch(/prepared again/);
    expect(await storedSsn('sqlprep-swap')).toEqual([]);
  });
});
