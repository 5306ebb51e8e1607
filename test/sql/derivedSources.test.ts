/**
 * Derived sources passing client values through — VALUES lists, `SELECT $1` without FROM, CTEs,
 * unnest of array parameters — into protected columns: each value behind them is mapped to the
 * column, and any other use of the same derived column refuses the statement.
 */
import { describe, expect, it } from 'vitest';
import { CARD, EMAIL, SSN, column } from './sqlTestSchema.js';
import {
  analyse, analyseOne, describeArrayParams, describeLiterals, describeParams, useSqlParser, type ExpectedLiteral,
} from './sqlTestHelpers.js';
import type { ColumnRef } from '../../src/proxy/sql/index.js';

useSqlParser();

interface Case {
  readonly sql: string;
  readonly params?: readonly (readonly [number, ColumnRef])[];
  readonly arrayParams?: readonly (readonly [number, ColumnRef])[];
  readonly literals?: readonly ExpectedLiteral[];
}

const MIXED_SECRET = column('Mixed', 'Secret');

const mapped: readonly Case[] = [
  // INSERT … SELECT without FROM, and over a VALUES list in FROM
  { sql: 'INSERT INTO customers (id, ssn) SELECT $1, $2', params: [[2, SSN]] },
  { sql: "INSERT INTO customers (ssn, email) SELECT '1-2', $1::text", params: [[1, EMAIL]], literals: [["'1-2'", '1-2', SSN]] },
  { sql: 'INSERT INTO customers (id, ssn) SELECT * FROM (VALUES ($1, $2), ($3, $4)) v(a, b)', params: [[2, SSN], [4, SSN]] },
  { sql: 'INSERT INTO customers (ssn, id) SELECT v.b, v.a FROM (VALUES (1, $1), (2, $2)) AS v(a, b)', params: [[1, SSN], [2, SSN]] },
  { sql: "INSERT INTO customers (ssn) SELECT column1 FROM (VALUES ('x'), (NULL), ($1))", params: [[1, SSN]], literals: [["'x'", 'x', SSN]] },
  { sql: 'INSERT INTO customers (id, ssn) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM customers WHERE ssn = $2)', params: [[2, SSN]] },
  // CTEs passing parameters and constants through, nested subqueries
  { sql: 'WITH v(a, b) AS (VALUES ($1, $2)) INSERT INTO customers (id, ssn) SELECT * FROM v', params: [[2, SSN]] },
  { sql: 'WITH v AS (SELECT $1::text AS a) INSERT INTO customers (ssn) SELECT a FROM v', params: [[1, SSN]] },
  { sql: 'WITH v AS (SELECT $1 AS s) INSERT INTO customers (ssn) SELECT s FROM v', params: [[1, SSN]] },
  { sql: 'WITH v AS (VALUES ($1)), w AS (SELECT column1 AS a FROM v) INSERT INTO customers (ssn) SELECT (SELECT a FROM w)', params: [[1, SSN]] },
  { sql: 'INSERT INTO customers (ssn) SELECT x FROM (SELECT a AS x FROM (SELECT $1 AS a) i) o', params: [[1, SSN]] },
  // unnest of array parameters and ARRAY[…] of values
  { sql: 'INSERT INTO customers (id, ssn) SELECT * FROM unnest($1::int[], $2::text[])', arrayParams: [[2, SSN]] },
  { sql: 'INSERT INTO customers (id, ssn, email) SELECT x, y, z FROM unnest($1::int[], $2::text[], $3::varchar[]) AS u(x, y, z)', arrayParams: [[2, SSN], [3, EMAIL]] },
  { sql: 'INSERT INTO customers (ssn, id) SELECT * FROM unnest($1::text[]) WITH ORDINALITY', arrayParams: [[1, SSN]] },
  { sql: 'INSERT INTO customers (ssn) SELECT s FROM unnest($1::text[]) s', arrayParams: [[1, SSN]] },
  { sql: 'INSERT INTO customers (ssn) SELECT * FROM pg_catalog.unnest($1::text[])', arrayParams: [[1, SSN]] },
  { sql: 'INSERT INTO customers (id, ssn, email) SELECT * FROM unnest($1::int[], $2::inet[], $3::cidr[])', arrayParams: [[2, SSN], [3, EMAIL]] },
  { sql: "INSERT INTO customers (ssn) SELECT * FROM unnest(ARRAY['a', $1])", params: [[1, SSN]], literals: [["'a'", 'a', SSN]] },
  // unnest of one array in a select list
  { sql: 'INSERT INTO customers (id, ssn) SELECT unnest($1::int[]), unnest($2::text[])', arrayParams: [[2, SSN]] },
  { sql: 'INSERT INTO customers (ssn, note) SELECT pg_catalog.unnest($1::text[]), $2', arrayParams: [[1, SSN]] },
  // UPDATE … FROM (VALUES …): the bulk-update shape
  { sql: 'UPDATE customers SET ssn = v.a FROM (VALUES ($1, 1), ($2, 2)) AS v(a, id) WHERE customers.id = v.id', params: [[1, SSN], [2, SSN]] },
  { sql: 'UPDATE customers c SET ssn = u.s, email = u.e FROM unnest($1::int[], $2::text[], $3::text[]) AS u(i, s, e) WHERE c.id = u.i', arrayParams: [[2, SSN], [3, EMAIL]] },
  { sql: 'UPDATE customers SET (ssn, email) = (SELECT a, b FROM (VALUES ($1, $2)) v(a, b))', params: [[1, SSN], [2, EMAIL]] },
  // compared in protected form
  { sql: 'UPDATE customers SET note = v.n FROM (VALUES ($1, $2)) AS v(s, n) WHERE customers.ssn = v.s', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE (id, ssn) = (SELECT 1, $1)', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn IN (SELECT * FROM unnest($1::text[]))', arrayParams: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn = ANY($1::text[])', arrayParams: [[1, SSN]] },
  { sql: 'UPDATE customers SET email = v.e FROM (VALUES ($1, $2)) v(ssn, e) JOIN customers c USING (ssn) WHERE customers.id = c.id', params: [[1, SSN], [2, EMAIL]] },
  { sql: 'INSERT INTO customers (ssn) SELECT a FROM (VALUES ($1)) v(a) WHERE a IS NOT NULL', params: [[1, SSN]] },
  // MERGE … USING (VALUES …) / (SELECT $1 …), every arm
  {
    sql: 'MERGE INTO customers t USING (VALUES ($1, $2)) AS s(id, a) ON t.id = s.id WHEN MATCHED THEN UPDATE SET ssn = s.a WHEN NOT MATCHED THEN INSERT (id, ssn) VALUES (s.id, s.a)',
    params: [[2, SSN]],
  },
  {
    sql: 'MERGE INTO customers t USING (SELECT $1 AS id, $2 AS a) s ON t.id = s.id WHEN MATCHED AND t.note IS NULL THEN DELETE WHEN MATCHED THEN DO NOTHING WHEN NOT MATCHED THEN INSERT (id, ssn) VALUES (s.id, s.a) WHEN NOT MATCHED BY SOURCE THEN DELETE',
    params: [[2, SSN]],
  },
  {
    sql: 'MERGE INTO customers t USING (VALUES ($1, $2)) AS s(ssn, e) ON t.ssn = s.ssn WHEN MATCHED THEN UPDATE SET email = s.e WHEN NOT MATCHED BY SOURCE THEN UPDATE SET note = NULL',
    params: [[1, SSN], [2, EMAIL]],
  },
  // one supplied column into two protected columns: both mapped (the caller compares policies)
  { sql: 'INSERT INTO customers (ssn, email) SELECT a, a FROM (VALUES ($1)) v(a)', params: [[1, SSN], [1, EMAIL]] },
  // column lists shorter or longer than the values, aliases that swap positions
  { sql: 'WITH v(a) AS (VALUES ($1, $2)) INSERT INTO customers (ssn, note) SELECT * FROM v', params: [[1, SSN]] },
  { sql: 'WITH v(a, b, c) AS (VALUES ($1, $2)) INSERT INTO customers (note, ssn) SELECT * FROM v', params: [[2, SSN]] },
  { sql: 'INSERT INTO customers (note, ssn) SELECT b, a FROM (VALUES ($1, $2)) v(b, a)', params: [[2, SSN]] },
  { sql: 'UPDATE customers SET (note, ssn) = (SELECT * FROM (VALUES ($1, $2)) v(b, a))', params: [[2, SSN]] },
  // quoted identifiers
  { sql: 'INSERT INTO "Mixed" ("Secret") SELECT * FROM (VALUES ($1)) v', params: [[1, MIXED_SECRET]] },
];

describe('derived sources feeding protected columns', () => {
  it.each(mapped)('$sql', ({ sql, params = [], arrayParams = [], literals = [] }) => {
    const statement = analyseOne(sql);
    expect(statement.rejection).toBeUndefined();
    expect(describeParams(statement)).toEqual(params);
    expect(describeArrayParams(statement)).toEqual(arrayParams);
    expect(describeLiterals(sql, statement)).toEqual(literals);
  });

  it('leaves derived sources that feed no protected column alone', () => {
    for (const sql of [
      'INSERT INTO plain (id, ssn) SELECT * FROM (VALUES ($1, $2)) v',
      'INSERT INTO customers (id, note) SELECT a, upper(b) FROM (VALUES ($1, $2)) v(a, b) ORDER BY b',
      'UPDATE customers SET note = v.n FROM (VALUES ($1, 1)) v(n, id) WHERE customers.id = v.id',
      'SELECT * FROM unnest($1::text[], $2::int[])',
    ]) {
      const { statements, passThrough } = analyse(sql);
      expect(statements[0]?.rejection, sql).toBeUndefined();
      expect(passThrough, sql).toBe(true);
    }
  });
});

const refused: readonly (readonly [sql: string, reason: string])[] = [
  // the same derived column into a protected and a plain column: one would get the wrong form
  ['INSERT INTO customers (ssn, note) SELECT a, a FROM (VALUES ($1)) v(a)', 'written into column note, which is not protected'],
  ['WITH v AS (VALUES ($1)) INSERT INTO customers (ssn) SELECT column1 FROM v UNION ALL SELECT column1 FROM v', 'INSERT … SELECT'],
  ['WITH v(a) AS (VALUES ($1)) INSERT INTO customers (ssn, note) SELECT x.a, y.a FROM v x, (SELECT a FROM v UNION SELECT \'z\') y', 'merged by UNION'],
  ['UPDATE customers SET ssn = v.a, note = v.a FROM (VALUES ($1, 1)) v(a, id) WHERE customers.id = v.id', 'not protected'],
  ['MERGE INTO customers t USING (VALUES ($1)) s(a) ON t.note = s.a WHEN MATCHED THEN UPDATE SET ssn = s.a', 'compared with something other than a protected column'],
  ['INSERT INTO customers (ssn, note) SELECT a, upper(a) FROM (VALUES ($1)) v(a)', 'used in an expression'],
  ['INSERT INTO customers (ssn) SELECT a FROM (VALUES ($1)) v(a) WHERE a <> \'x\'', 'compared with something other than a protected column'],
  ['INSERT INTO customers (ssn, note) SELECT a, v::text FROM (VALUES ($1)) v(a)', 'whole row'],
  ['INSERT INTO customers (ssn, note) SELECT a, ARRAY(SELECT a FROM v)::text FROM (VALUES ($1)) v(a)', 'subquery'],
  ['WITH v(a) AS (VALUES ($1)) INSERT INTO customers (ssn, note) SELECT a, x FROM v, (VALUES ((SELECT a FROM v) || \'x\')) w(x)', 'subquery'],
  ['WITH v(a) AS (VALUES ($1)) UPDATE customers SET ssn = (SELECT a FROM v), note = (SELECT a FROM v) || \'x\'', 'subquery'],
  ['WITH v(a) AS (VALUES ($1)) INSERT INTO customers (ssn, note) SELECT a, (SELECT a FROM v) FROM v', 'not protected'],
  ['INSERT INTO customers (ssn, note, id) SELECT v.a, f.*, v.a FROM (VALUES ($1)) v(a), some_function() f', 'a column pgveil cannot see'],
  ['INSERT INTO customers (ssn, note) SELECT a, b FROM (VALUES ($1)) v(a), LATERAL (SELECT lower(a) AS b) l', 'used in an expression'],
  ['INSERT INTO customers (ssn, note) SELECT a, note FROM (VALUES ($1)) v(a) JOIN customers c ON c.note = v.a', 'compared with something other than a protected column'],
  ['INSERT INTO customers (ssn) SELECT DISTINCT ON (a) a FROM (VALUES ($1)) v(a)', 'sort or grouping key'],
  ['UPDATE customers SET ssn = v.a FROM (VALUES ($1, 1)) v(a, id) WHERE customers.id = v.id RETURNING v.a', 'result column'],
  ['WITH v(a) AS (VALUES ($1)), w AS (INSERT INTO customers (ssn) SELECT a FROM v) SELECT a FROM v', 'result column'],
  ['WITH v(a) AS (VALUES ($1)), w AS (INSERT INTO customers (ssn) SELECT a FROM v) SELECT a INTO copied FROM v', 'result column'],
  ["COPY (UPDATE customers SET ssn = v.a FROM (VALUES ('x')) v(a) RETURNING v.a) TO STDOUT", 'result column'],
  // a CTE shadowed by an inner one, a CTE named like a table read by its qualified name, recursion, ordinality
  ['WITH v(a) AS (VALUES ($1)) INSERT INTO customers (ssn) SELECT a FROM (WITH v(a) AS (SELECT note FROM customers) SELECT a FROM v) s', 'INSERT … SELECT'],
  ['WITH plain(ssn) AS (VALUES ($1)) INSERT INTO customers (ssn) SELECT ssn FROM public.plain', 'INSERT … SELECT'],
  ["WITH RECURSIVE v(a, n) AS (VALUES ($1::text, 1) UNION ALL SELECT a || 'x', n + 1 FROM v WHERE n < 2) INSERT INTO customers (ssn) SELECT a FROM v", 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT o FROM unnest($1::text[]) WITH ORDINALITY u(a, o)', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT * FROM unnest($1::text[]::varchar[])', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT * FROM public.unnest($1::text[])', 'INSERT … SELECT'],
  ["MERGE INTO customers t USING (VALUES ($1, 1)) s(a, id) ON t.id = s.id WHEN MATCHED AND s.a LIKE 'x%' THEN DELETE WHEN MATCHED THEN UPDATE SET ssn = s.a", 'used in an expression'],
  ['SELECT v.a, c.id FROM (VALUES ($1)) v(a) JOIN customers c ON c.ssn = v.a', 'result column'],
  // computed values are not followed
  ['WITH v AS (SELECT upper($1) AS a) INSERT INTO customers (ssn) SELECT a FROM v', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT * FROM (VALUES ($1), (lower($2))) v', 'INSERT … SELECT'],
  ['UPDATE customers SET ssn = v.a || \'x\' FROM (VALUES ($1)) v(a)', 'operator ||'],
  ['INSERT INTO customers (ssn) SELECT * FROM unnest($1)', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT * FROM unnest($1::mytype[])', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT * FROM generate_series(1, 3)', 'INSERT … SELECT'],
  // constants of one derived column into two protected columns
  ["INSERT INTO customers (ssn, email) SELECT a, a FROM (VALUES ('x')) v(a)", 'also feed protected column public.customers.email'],
  ["INSERT INTO customers (ssn, email) SELECT u, u FROM unnest('{a}'::text[]) u", 'also feed protected column public.customers.email'],
  // unnest in a select list over anything but an array parameter or constant, or inside an expression
  ['INSERT INTO customers (ssn) SELECT unnest($1)', 'INSERT … SELECT'],
  ['INSERT INTO customers (ssn) SELECT upper(unnest($1::text[]))', 'INSERT … SELECT'],
  // an array parameter is not also a scalar
  ['INSERT INTO customers (ssn, email) SELECT u, $1 FROM unnest($1::text[]) u', 'both as one value and as an array'],
];

describe('derived sources that cannot be protected', () => {
  it.each(refused)('%s', (sql, reason) => {
    const { rejection } = analyse(sql);
    expect(rejection, 'expected a rejection').toBeDefined();
    expect(rejection?.sqlState).toBe('0A000');
    expect(rejection?.message).toContain(reason);
    expect(rejection?.message).toMatch(/protected column public\.customers\.(ssn|email)/);
  });

  it('plans the parameters of a SQL-level PREPARE over a derived source, as for a Parse', () => {
    const unnest = analyseOne('PREPARE p AS INSERT INTO customers (ssn) SELECT * FROM unnest($1::text[])');
    expect(unnest.rejection).toBeUndefined();
    expect(unnest.arrayParams.map((target) => [target.param, target.column])).toEqual([[1, SSN]]);
    const values = analyseOne('PREPARE p AS INSERT INTO customers (id, ssn) SELECT * FROM (VALUES ($1, $2)) v');
    expect(values.rejection).toBeUndefined();
    expect(values.params.map((target) => [target.param, target.column])).toEqual([[2, SSN]]);
  });

  it('marks an array constant under unnest for element-by-element protection', () => {
    const sql = "INSERT INTO customers (ssn, id) SELECT * FROM unnest('{a,\"b c\"}'::text[], '{1,2}'::int[])";
    const statement = analyseOne(sql);
    expect(statement.rejection).toBeUndefined();
    expect(describeLiterals(sql, statement)).toEqual([["'{a,\"b c\"}'", '{a,"b c"}', SSN]]);
    expect(statement.literals[0]?.array).toBe(true);
  });

  it('follows a VALUES list of 200 000 rows', () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => `($${(i % 100) + 1})`).join(', ');
    const statement = analyseOne(`INSERT INTO customers (ssn) SELECT * FROM (VALUES ${rows}) v`);
    expect(statement.rejection).toBeUndefined();
    expect(statement.params).toHaveLength(100);
  });

  it('names no value in a refusal', () => {
    const { rejection } = analyse("INSERT INTO customers (ssn, note) SELECT a, a FROM (VALUES ('123-45-6789')) v(a)");
    expect(rejection?.message).not.toContain('123-45-6789');
  });

  it('maps INSERT … SELECT $n into any table with protected columns', () => {
    expect(describeParams(analyseOne('INSERT INTO orders (id, card) SELECT $1, $2'))).toEqual([[2, CARD]]);
  });
});
