/** Comparisons with protected columns in WHERE / JOIN … ON / HAVING, through aliases, joins, subqueries and CTEs. */
import { describe, expect, it } from 'vitest';
import type { ColumnComparison, ColumnRef } from '../../src/proxy/sql/index.js';
import { CARD, EMAIL, IBAN, SSN } from './sqlTestSchema.js';
import {
  analyseOne, describeArrayParams, describeLiterals, describeParams, useSqlParser, type ExpectedLiteral,
} from './sqlTestHelpers.js';

useSqlParser();

interface Case {
  readonly sql: string;
  readonly params?: readonly (readonly [number, ColumnRef])[];
  readonly arrayParams?: readonly (readonly [number, ColumnRef])[];
  readonly literals?: readonly ExpectedLiteral[];
  readonly compared?: readonly ColumnComparison[];
}

const cases: readonly Case[] = [
  // the comparison forms
  { sql: 'SELECT * FROM customers WHERE ssn = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE $1 = ssn', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn <> $1 AND email != $2', params: [[1, SSN], [2, EMAIL]] },
  { sql: 'SELECT * FROM customers WHERE ssn IS DISTINCT FROM $1 OR email IS NOT DISTINCT FROM $2', params: [[1, SSN], [2, EMAIL]] },
  { sql: "SELECT * FROM customers WHERE ssn IN ($1, $2, 'x')", params: [[1, SSN], [2, SSN]], literals: [["'x'", 'x', SSN]] },
  { sql: "SELECT * FROM customers WHERE ssn NOT IN ('a', 'b')", literals: [["'a'", 'a', SSN], ["'b'", 'b', SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn = ANY($1)', arrayParams: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn = ANY($1::text[]) AND email <> ALL($2)', arrayParams: [[1, SSN], [2, EMAIL]] },
  { sql: "SELECT * FROM customers WHERE ssn = ANY(ARRAY[$1, 'x'])", params: [[1, SSN]], literals: [["'x'", 'x', SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn IS NULL OR email IS NOT NULL' },
  { sql: 'SELECT * FROM customers WHERE ssn = NULL' },
  { sql: 'SELECT * FROM customers WHERE ssn::text = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE NOT (ssn = $1) AND (email = $2 OR note LIKE $3)', params: [[1, SSN], [2, EMAIL]] },
  { sql: 'SELECT * FROM customers WHERE (id, ssn) = ($1, $2)', params: [[2, SSN]] },
  { sql: "SELECT * FROM customers WHERE (ssn, email) IN (($1, 'e1'), ('s2', $2))", params: [[1, SSN], [2, EMAIL]], literals: [["'e1'", 'e1', EMAIL], ["'s2'", 's2', SSN]] },
  { sql: 'SELECT * FROM customers WHERE CASE WHEN ssn = $1 THEN true ELSE false END', params: [[1, SSN]] },
  { sql: "SELECT CASE ssn WHEN '1' THEN 'one' WHEN $1 THEN 'p' END FROM customers", params: [[1, SSN]], literals: [["'1'", '1', SSN]] },
  // aliases, schema-qualified names, quoted identifiers
  { sql: 'SELECT c.name FROM customers c WHERE c.ssn = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers AS c WHERE public.customers.ssn = $1 OR c.email = $2', params: [[2, EMAIL]] },
  { sql: 'SELECT * FROM public.customers WHERE public.customers.ssn = $1 AND customers.email = $2', params: [[1, SSN], [2, EMAIL]] },
  { sql: 'SELECT * FROM billing.accounts a WHERE a.iban = $1', params: [[1, IBAN]] },
  { sql: 'SELECT * FROM plain WHERE ssn = $1' },
  { sql: 'SELECT * FROM plain p, customers c WHERE p.ssn = $1 AND c.ssn = $2', params: [[2, SSN]] },
  // joins
  { sql: 'SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id AND c.email = $1 WHERE o.card = $2', params: [[1, EMAIL], [2, CARD]] },
  { sql: 'SELECT * FROM orders o LEFT JOIN customers c ON c.id = o.customer_id AND c.ssn IN ($1, $2)', params: [[1, SSN], [2, SSN]] },
  { sql: 'SELECT * FROM (customers c JOIN orders o ON o.customer_id = c.id) AS j WHERE j.card = $1', params: [[1, CARD]] },
  { sql: 'SELECT * FROM customers a JOIN customers b USING (ssn) WHERE a.id < b.id' },
  { sql: 'SELECT * FROM customers a JOIN customers b USING (ssn) AS j WHERE j.ssn = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers a JOIN orders o ON a.ssn = o.card', compared: [{ left: SSN, right: CARD }] },
  // subqueries
  { sql: 'SELECT * FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE ssn = $1)', params: [[1, SSN]] },
  { sql: 'SELECT * FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.email = $1)', params: [[1, EMAIL]] },
  { sql: 'SELECT * FROM (SELECT id, ssn AS s FROM customers) sub WHERE sub.s = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM (SELECT id, ssn FROM customers) AS sub(i, x) WHERE x = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM (SELECT * FROM customers) sub WHERE sub.email = $1', params: [[1, EMAIL]] },
  { sql: 'SELECT * FROM (SELECT * FROM (SELECT ssn FROM customers) a) b WHERE b.ssn = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers WHERE ssn IN (SELECT ssn FROM customers WHERE id > 1)' },
  { sql: 'SELECT * FROM customers WHERE $1 IN (SELECT ssn FROM customers)', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers c WHERE (c.id, c.ssn) = (SELECT id, ssn FROM customers WHERE id = $1)' },
  { sql: 'SELECT * FROM customers WHERE (SELECT ssn FROM customers LIMIT 1) = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM customers c WHERE c.id = (SELECT id FROM orders o WHERE o.card = $1 AND o.customer_id = c.id)', params: [[1, CARD]] },
  { sql: 'SELECT * FROM customers c, LATERAL (SELECT * FROM orders o WHERE o.customer_id = c.id AND c.email = $1) x', params: [[1, EMAIL]] },
  { sql: 'SELECT (SELECT count(*) FROM customers WHERE ssn = $1) AS n', params: [[1, SSN]] },
  // CTEs
  { sql: 'WITH c AS (SELECT id, ssn FROM customers) SELECT * FROM c WHERE ssn = $1', params: [[1, SSN]] },
  { sql: 'WITH c(i, s) AS (SELECT id, ssn FROM customers) SELECT * FROM c x WHERE x.s = $1', params: [[1, SSN]] },
  { sql: 'WITH a AS (SELECT email FROM customers), b AS (SELECT * FROM a) SELECT * FROM b WHERE email = $1', params: [[1, EMAIL]] },
  {
    sql: 'WITH RECURSIVE r AS (SELECT id, ssn FROM customers WHERE ssn = $1 UNION ALL SELECT c.id, c.ssn FROM customers c JOIN r ON r.id = c.id + 1) SELECT * FROM r WHERE ssn = $2',
    params: [[1, SSN], [2, SSN]],
  },
  { sql: 'WITH customers AS (SELECT 1 AS ssn) SELECT * FROM customers WHERE ssn = $1' },
  // set operations
  { sql: 'SELECT * FROM (SELECT ssn FROM customers UNION SELECT ssn FROM customers) u WHERE u.ssn = $1', params: [[1, SSN]] },
  // HAVING and aggregates
  { sql: 'SELECT email, count(*) FROM customers GROUP BY email HAVING email = $1', params: [[1, EMAIL]] },
  { sql: 'SELECT email FROM customers GROUP BY email HAVING count(ssn) > 1' },
  { sql: 'SELECT count(*) FILTER (WHERE ssn = $1) FROM customers', params: [[1, SSN]] },
  // reads are fine: select lists, ORDER BY, GROUP BY, functions over protected columns outside predicates
  { sql: 'SELECT ssn, lower(email), email || note FROM customers ORDER BY ssn, lower(email) LIMIT $1' },
  { sql: 'SELECT DISTINCT ON (ssn) ssn FROM customers GROUP BY ssn, email ORDER BY ssn' },
  { sql: 'SELECT row_number() OVER (PARTITION BY email ORDER BY ssn) FROM customers' },
  { sql: 'SELECT * FROM customers WHERE id = $1 AND note LIKE $2 AND created > $3' },
  // comparisons are mapped even in a select list
  { sql: "SELECT ssn = '1' AS same FROM customers", literals: [["'1'", '1', SSN]] },
  // functions in FROM, unknown tables
  { sql: 'SELECT * FROM generate_series(1, 3) g, customers c WHERE c.ssn = $1', params: [[1, SSN]] },
  { sql: 'SELECT * FROM mystery m WHERE m.ssn = $1' },
  // the same $n for two columns: both reported, the caller compares their policies
  { sql: 'SELECT * FROM customers WHERE ssn = $1 OR email = $1', params: [[1, SSN], [1, EMAIL]] },
];

describe('values compared with protected columns', () => {
  it.each(cases)('$sql', ({ sql, params = [], arrayParams = [], literals = [], compared = [] }) => {
    const statement = analyseOne(sql);
    expect(statement.rejection).toBeUndefined();
    expect(describeParams(statement)).toEqual(params);
    expect(describeArrayParams(statement)).toEqual(arrayParams);
    expect(describeLiterals(sql, statement)).toEqual(literals);
    expect(statement.comparedColumns).toEqual(compared);
  });
});
