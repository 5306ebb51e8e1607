/**
 * Values reaching protected columns through derived sources — INSERT … SELECT $n, VALUES lists in
 * FROM and in CTEs, UPDATE … FROM (VALUES …), MERGE … USING, unnest of array parameters — through
 * the proxy with pg: stored only as tokens (read directly), plaintext again for the app.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBinaryArray } from '../../../src/proxy/enforcement/valueCodecs/arrayCodecs.js';
import { APP, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

let harness: PolicyHarness;
let app: pg.Client;
let support: pg.Client;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  app = await harness.connect(APP);
  support = await harness.connect(SUPPORT);
  direct = await harness.direct();
});

afterAll(async () => {
  for (const client of [app, support, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

interface Person {
  readonly ssn: string;
  readonly email: string;
}

function person(n: number): Person {
  const digits = String(n).padStart(4, '0');
  return { ssn: `${String(100 + n).slice(-3)}-${digits.slice(0, 2)}-${digits}`, email: `person${n}@example.com` };
}

/** What is stored for rows with `note`, read directly (no proxy), and what the app reads back. */
async function storedAndRead(note: string): Promise<{ stored: Person[]; read: Person[] }> {
  const sql = 'SELECT ssn, email FROM customers WHERE note = $1 ORDER BY id';
  return { stored: (await direct.query(sql, [note])).rows, read: (await app.query(sql, [note])).rows };
}

/** Every plaintext given is read back by the app and absent from the table itself. */
async function expectProtected(note: string, people: readonly Partial<Person>[]): Promise<void> {
  const { stored, read } = await storedAndRead(note);
  expect(read).toEqual(people.map((p) => ({ ssn: p.ssn ?? null, email: p.email ?? null })));
  expect(stored).toHaveLength(people.length);
  const storedValues = stored.flatMap((row) => [row.ssn, row.email]);
  for (const p of people) {
    if (p.ssn !== undefined) expect(storedValues).not.toContain(p.ssn);
    if (p.email !== undefined) expect(storedValues).not.toContain(p.email);
  }
  for (const row of stored) if (row.ssn !== null) expect(row.ssn).toMatch(/^\d{3}-\d{2}-\d{4}$/);
}

function binaryTextArray(values: readonly string[]): Buffer {
  return formatBinaryArray({ elementType: 25, elements: values.map((value) => Buffer.from(value, 'utf8')), lowerBound: 1 });
}

describe('INSERT … SELECT from derived sources', () => {
  it('protects SELECT $1, $2 without FROM (text and binary parameters)', async () => {
    const [a, b] = [person(1), person(2)];
    await app.query('INSERT INTO customers (note, ssn, email) SELECT $1, $2, $3', ['no-from', a.ssn, a.email]);
    await app.query({ text: 'INSERT INTO customers (note, ssn, email) SELECT $1, $2, $3', values: ['no-from', Buffer.from(b.ssn), Buffer.from(b.email)] });
    await expectProtected('no-from', [a, b]);
  });

  it('protects a multi-row VALUES list in FROM, and constants in it', async () => {
    const [a, b, c] = [person(3), person(4), person(5)];
    await app.query('INSERT INTO customers (note, ssn) SELECT * FROM (VALUES ($1, $2), ($3, $4)) v(a, b)', ['values-from', a.ssn, 'values-from', b.ssn]);
    await app.query(`INSERT INTO customers (ssn, note) SELECT v.s, v.n FROM (VALUES ('${c.ssn}', 'values-from')) AS v(s, n)`);
    const d = person(22);
    await app.query({ text: 'INSERT INTO customers (note, ssn, email) SELECT * FROM (VALUES ($1, $2, $3)) v', values: ['values-from', Buffer.from(d.ssn), Buffer.from(d.email)] });
    await expectProtected('values-from', [{ ssn: a.ssn }, { ssn: b.ssn }, { ssn: c.ssn }, d]);
  });

  it('protects CTEs that pass parameters through', async () => {
    const [a, b] = [person(6), person(7)];
    await app.query('WITH v(a, b) AS (VALUES ($1, $2)) INSERT INTO customers (note, ssn) SELECT * FROM v', ['cte', a.ssn]);
    await app.query("WITH v AS (SELECT $1::text AS a, $2::text AS e) INSERT INTO customers (ssn, email, note) SELECT a, e, 'cte' FROM v", [b.ssn, b.email]);
    const c = person(23);
    await app.query({ text: "WITH v(s, e) AS (VALUES ($1, $2)), w AS (SELECT s, e FROM v) INSERT INTO customers (ssn, email, note) SELECT s, e, 'cte' FROM w", values: [Buffer.from(c.ssn), Buffer.from(c.email)] });
    await expectProtected('cte', [{ ssn: a.ssn }, b, c]);
  });

  it('protects each element of unnest over array parameters, text and binary, WITH ORDINALITY', async () => {
    const people = [person(8), person(9), person(10)];
    await app.query('INSERT INTO customers (ssn, email, note) SELECT *, \'unnest\' FROM unnest($1::text[], $2::text[])', [people.slice(0, 2).map((p) => p.ssn), people.slice(0, 2).map((p) => p.email)]);
    await app.query({
      text: "INSERT INTO customers (ssn, email, note) SELECT x, y, 'unnest' || n FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(x, y, n)",
      values: [binaryTextArray([people[2]!.ssn]), binaryTextArray([people[2]!.email])],
    });
    await app.query("UPDATE customers SET note = 'unnest' WHERE note = 'unnest1'");
    await expectProtected('unnest', people);
    // the same values compared element by element, in both cast and plain array form
    const found = await app.query('SELECT email FROM customers WHERE ssn = ANY($1::text[]) ORDER BY id', [people.map((p) => p.ssn)]);
    expect(found.rows.map((row) => row.email)).toEqual(people.map((p) => p.email));
    const inUnnest = await app.query('SELECT count(*)::int AS n FROM customers WHERE email IN (SELECT * FROM unnest($1::text[]))', [people.map((p) => p.email)]);
    expect(inUnnest.rows[0].n).toBe(3);
    // an array constant, bare and cast, each element protected (one of them in nobody's row)
    const list = `{${[...people, person(99)].map((p) => `"${p.ssn}"`).join(',')}}`;
    for (const text of [`SELECT email FROM customers WHERE ssn = ANY('${list}') ORDER BY id`, `SELECT email FROM customers WHERE ssn = ANY('${list}'::text[]) ORDER BY id`]) {
      expect((await app.query(text)).rows.map((row) => row.email)).toEqual(people.map((p) => p.email));
    }
    const none = await app.query(`SELECT count(*)::int AS n FROM customers WHERE note = 'unnest' AND ssn <> ALL('${list}')`);
    expect(none.rows[0].n).toBe(0);
  });

  it('protects unnest of array parameters in a select list, and splits one array also written to a plain column', async () => {
    const people = [person(31), person(32)];
    await app.query("INSERT INTO customers (ssn, email, note) SELECT unnest($1::text[]), unnest($2::text[]), 'select-list'", [people.map((p) => p.ssn), people.map((p) => p.email)]);
    await expectProtected('select-list', people);
    const [c] = [person(33)];
    await app.query('INSERT INTO customers (ssn, note) SELECT unnest($1::text[]), unnest($1::text[])', [[c.ssn]]);
    const stored = await direct.query('SELECT ssn FROM customers WHERE note = $1', [c.ssn]);
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0].ssn).not.toBe(c.ssn);
  });

  it('protects ARRAY[…] constants under unnest', async () => {
    const [a, b] = [person(11), person(12)];
    await app.query(`INSERT INTO customers (ssn, note) SELECT s, 'array-constant' FROM unnest(ARRAY['${a.ssn}', '${b.ssn}']) s`);
    const [c, d] = [person(26), person(27)];
    await app.query(`INSERT INTO customers (ssn, email, note) SELECT *, 'array-constant' FROM unnest('{${c.ssn},"${d.ssn}"}'::text[], '{${c.email},NULL}'::text[])`);
    await expectProtected('array-constant', [{ ssn: a.ssn }, { ssn: b.ssn }, { ssn: c.ssn, email: c.email }, { ssn: d.ssn }]);
  });
});

describe('UPDATE … FROM (VALUES …) and MERGE … USING', () => {
  it('protects the bulk-update shape, and matches on a protected column in protected form', async () => {
    const [a, b] = [person(13), person(14)];
    await app.query("INSERT INTO customers (note, ssn) VALUES ('bulk', $1), ('bulk', $2)", [a.ssn, b.ssn]);
    const updated = await app.query(
      'UPDATE customers SET email = v.e FROM (VALUES ($1, $2), ($3, $4)) AS v(e, s) WHERE customers.ssn = v.s',
      [a.email, a.ssn, b.email, b.ssn],
    );
    expect(updated.rowCount).toBe(2);
    await expectProtected('bulk', [a, b]);
    const [a2, b2] = [person(24), person(25)];
    const binary = await app.query({
      text: 'UPDATE customers c SET ssn = u.s, email = u.e FROM unnest($1::text[], $2::text[], $3::text[]) AS u(old, s, e) WHERE c.ssn = u.old',
      values: [binaryTextArray([a.ssn, b.ssn]), binaryTextArray([a2.ssn, b2.ssn]), binaryTextArray([a2.email, b2.email])],
    });
    expect(binary.rowCount).toBe(2);
    await expectProtected('bulk', [a2, b2]);
  });

  it('protects every MERGE arm over VALUES and over SELECT $n', async () => {
    const [a, b, c] = [person(15), person(16), person(17)];
    await app.query("INSERT INTO customers (note, ssn) VALUES ('merge', $1)", [a.ssn]);
    const merge = `MERGE INTO customers t USING (VALUES ($1, $2, 'merge')) AS s(ssn, email, note) ON t.ssn = s.ssn
      WHEN MATCHED AND t.email IS NOT NULL THEN DO NOTHING
      WHEN MATCHED THEN UPDATE SET email = s.email
      WHEN NOT MATCHED THEN INSERT (ssn, email, note) VALUES (s.ssn, s.email, s.note)`;
    await app.query(merge, [a.ssn, a.email]);
    await app.query(merge, [b.ssn, b.email]);
    await app.query({
      text: `MERGE INTO customers t USING (SELECT $1 AS ssn, $2 AS email) s ON t.ssn = s.ssn
        WHEN NOT MATCHED THEN INSERT (ssn, email, note) VALUES (s.ssn, s.email, 'merge')`,
      values: [Buffer.from(c.ssn), Buffer.from(c.email)],
    });
    await expectProtected('merge', [a, b, c]);
    const deleted = await app.query('MERGE INTO customers t USING (SELECT $1 AS ssn) s ON t.ssn = s.ssn WHEN MATCHED THEN DELETE', [c.ssn]);
    expect(deleted.rowCount).toBe(1);
    await expectProtected('merge', [a, b]);
  });
});

describe('derived sources that cannot be protected are refused', () => {
  it('refuses one derived column feeding a protected and a plain column, storing nothing', async () => {
    const secret = person(20).ssn;
    const refused = await failure(() => app.query("INSERT INTO customers (ssn, note) SELECT a, a FROM (VALUES ($1)) v(a)", [secret]));
    expect(refused.code).toBe('0A000');
    expect(refused.message).toMatch(/customers\.ssn.*not protected/);
    expect(refused.message).not.toContain(secret);
    const bulk = await failure(() => app.query('UPDATE customers SET ssn = v.a, note = v.a FROM (VALUES ($1)) v(a) WHERE false', [secret]));
    expect(bulk.code).toBe('0A000');
    const twoPolicies = await failure(() => app.query('INSERT INTO customers (ssn, email) SELECT a, a FROM (VALUES ($1)) v(a)', [secret]));
    expect(twoPolicies.code).toBe('0A000');
    expect(twoPolicies.message).toMatch(/different policies/);
    const stored = await direct.query('SELECT count(*)::int AS n FROM customers WHERE ssn = $1 OR note = $1', [secret]);
    expect(stored.rows[0].n).toBe(0);
  });

  it('refuses a CTE computing the value, and unnest of what is not an array', async () => {
    const computed = await failure(() => app.query('WITH v AS (SELECT upper($1) AS a) INSERT INTO customers (ssn) SELECT a FROM v', ['abc']));
    expect(computed.code).toBe('0A000');
    expect(computed.message).toMatch(/customers\.ssn/);
    const notArray = await failure(() => app.query('INSERT INTO customers (ssn) SELECT * FROM unnest($1::text[])', ['123-45-6789']));
    expect(notArray.message).toMatch(/not a one-dimensional array/);
    const nested = await failure(() => app.query({ text: 'INSERT INTO customers (ssn) SELECT * FROM unnest($1::text[])', values: [Buffer.from('123-45-6789')] }));
    expect(nested.message).toMatch(/not a one-dimensional array/);
    const constant = await failure(() => app.query("INSERT INTO customers (ssn) SELECT * FROM unnest('{123-45-6789}'::text[]) WHERE unnest <> ''"));
    expect(constant.code).toBe('0A000');
    const twoDimensions = await failure(() => app.query("INSERT INTO customers (ssn) SELECT * FROM unnest('{{123-45-6789}}'::text[])"));
    expect(twoDimensions.code).toBe('22P02');
    expect(twoDimensions.message).not.toContain('123-45-6789');
    const stored = await direct.query("SELECT count(*)::int AS n FROM customers WHERE ssn IN ('ABC', '123-45-6789')");
    expect(stored.rows[0].n).toBe(0);
  });

  it('keeps read policies on RETURNING of a column written from a derived source', async () => {
    const p = person(21);
    const returned = await support.query("INSERT INTO customers (ssn, note) SELECT * FROM (VALUES ($1, 'returning')) v RETURNING ssn", [p.ssn]);
    expect(returned.rows).toEqual([{ ssn: `***-**-${p.ssn.slice(-4)}` }]);
    await expectProtected('returning', [{ ssn: p.ssn }]);
  });
});
