/**
 * Calls that receive a plaintext-at-rest value (customers.note here) must be of functions and
 * operators PostgreSQL marks immutable or stable: a volatile one may store the value where a later
 * statement reads it back, and the read path never sees it. The fake catalog below answers as
 * ColumnPolicies does from pg_proc: volatile when any overload is, or when the name is unknown.
 */
import { describe, expect, it } from 'vitest';
import { analyseSql, type ColumnRef, type PlaintextSource, type ProtectedSchema, type SqlAnalysis } from '../../src/proxy/sql/index.js';
import { column, testSchema } from './sqlTestSchema.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

const NOTE = column('customers', 'note');

const STABLE_FUNCTIONS = new Set([
  'lower', 'upper', 'length', 'substr', 'regexp_replace', 'to_char', 'count', 'string_agg', 'array_agg', 'lag',
  'percentile_disc', 'like_escape', 'similar_to_escape', 'current_setting', 'md5',
]);
const VOLATILE_FUNCTIONS = new Set(['nextval', 'setseed', 'random', 'pg_notify', 'leak', 'leaky_agg', 'leaky_window']);
const OPERATORS = new Set(['=', '<>', '<', '>', '<=', '>=', '~~', '~~*', '!~~', '~', '!~', '||', '+', '-', '###']);

/** `volatileOperators`: operator names the fake catalog marks volatile (in every schema). */
function catalogSchema(volatileOperators: ReadonlySet<string> = new Set(['###'])): ProtectedSchema {
  const base = testSchema();
  return {
    ...base,
    resolveTable: (schema, table) => base.resolveTable(schema, table),
    isProtected: (ref) => base.isProtected(ref),
    plaintextSource: (ref: ColumnRef): PlaintextSource | undefined =>
      (ref.schema === 'public' && ref.table === 'customers' && ref.column === 'note' ? { column: NOTE, computed: false } : undefined),
    plaintextTableNames: () => ['customers'],
    // The audit schema holds a volatile overload of every name.
    functionIsVolatile: (name, schema) => schema === 'audit' || VOLATILE_FUNCTIONS.has(name) || !STABLE_FUNCTIONS.has(name),
    operatorIsVolatile: (name, schema) => schema === 'audit' || volatileOperators.has(name) || !OPERATORS.has(name),
  };
}

function analysed(sql: string, schema = catalogSchema()): SqlAnalysis {
  const analysis = analyseSql(sql, schema);
  expect(analysis.rejection).toBeUndefined();
  return analysis;
}

describe('a volatile function receiving it is an exposure, wherever it is called', () => {
  it.each([
    "SELECT id FROM customers WHERE nextval('leak_' || substr(note, 1, 1)) > 0",
    'SELECT id FROM customers WHERE setseed(length(note) / 100.0) IS NULL',
    'SELECT id FROM customers ORDER BY leak(note)',
    'SELECT count(*) FROM customers GROUP BY leak(note)',
    'SELECT a.id FROM customers a JOIN customers b ON leak(a.note) AND a.id = b.id',
    'SELECT leak(note) IS NULL AS gone FROM customers',
    'SELECT id FROM customers WHERE lower(leak(upper(note))) = $1',
    'SELECT id FROM customers WHERE leak((SELECT note FROM customers LIMIT 1))',
    'SELECT leak(c) IS NULL FROM customers c',
    "SELECT id FROM customers WHERE audit.lower(note) = 'x'",
    'SELECT id FROM customers WHERE no_such_function(note)',
    'SELECT leaky_agg(note) IS NULL FROM customers',
    'SELECT leaky_agg(0.5) WITHIN GROUP (ORDER BY note) IS NULL FROM customers',
    'SELECT leaky_window(note) OVER () IS NULL FROM customers',
    "SELECT count(*) FROM customers HAVING leaky_agg(note) IS NULL",
    'UPDATE customers SET id = id WHERE leak(note)',
    'DELETE FROM customers WHERE leak(note)',
    'INSERT INTO plain (id) SELECT 1 FROM customers WHERE leak(note)',
    'SELECT id FROM customers LIMIT leak(note)::int',
    "SELECT id FROM customers WHERE pg_notify('c', note) IS NULL",
  ])('%s', (sql) => {
    expect(analysed(sql).exposures.map((exposure) => exposure.column)).toContainEqual(NOTE);
  });

  it('names the function, the rule and what lifts it', () => {
    const [exposure] = analysed("SELECT id FROM customers WHERE nextval('s' || note) > 0").exposures;
    expect(exposure?.reason).toMatch(/passed to nextval\(\), which PostgreSQL's catalog does not mark immutable or stable/);
    expect(exposure?.reason).toMatch(/in any clause, a masked column's value may only reach immutable or stable functions/);
    expect(exposure?.reason).toMatch(/ALTER FUNCTION \.\.\. STABLE/);
  });

  it('keeps the denylist\'s own wording for the built-ins it names', () => {
    const [exposure] = analysed("SELECT id FROM customers WHERE pg_notify('c', note) IS NULL").exposures;
    expect(exposure?.reason).toMatch(/passed to pg_notify\(\), which hands the value on outside the result/);
  });
});

describe('a volatile operator receiving it is an exposure', () => {
  it.each([
    "SELECT id FROM customers WHERE note ### 'x'",
    "SELECT id FROM customers WHERE note OPERATOR(audit.=) 'x'",
    "SELECT id FROM customers WHERE 'x' ### ANY (SELECT note FROM customers)",
    'SELECT id FROM customers ORDER BY note USING ###',
    "SELECT id FROM customers WHERE note !#! 'x'",
  ])('%s', (sql) => {
    expect(analysed(sql).exposures.map((exposure) => exposure.column)).toContainEqual(NOTE);
  });

  it.each([
    ["SELECT id FROM customers WHERE note = 'x'", '='],
    ["SELECT id FROM customers WHERE note IN ('x', 'y')", '='],
    ["SELECT id FROM customers WHERE note IS DISTINCT FROM 'x'", '='],
    ["SELECT id FROM customers WHERE NULLIF(note, 'x') IS NULL", '='],
    ["SELECT id FROM customers WHERE CASE note WHEN 'x' THEN true END", '='],
    ["SELECT id FROM customers WHERE 'x' IN (SELECT note FROM customers)", '='],
    ["SELECT id FROM customers WHERE note = ANY (ARRAY['x'])", '='],
    ["SELECT id FROM customers WHERE note BETWEEN 'a' AND 'b'", '>='],
    ["SELECT id FROM customers WHERE note NOT BETWEEN 'a' AND 'b'", '<'],
    ["SELECT id FROM customers WHERE note LIKE 'a%'", '~~'],
    ["SELECT id FROM customers WHERE note SIMILAR TO 'a%'", '~'],
  ])('%s, with %s volatile', (sql, operator) => {
    const [exposure] = analysed(sql, catalogSchema(new Set([operator]))).exposures;
    expect(exposure?.column).toEqual(NOTE);
    expect(exposure?.reason).toContain(`operator ${operator}, whose function (pg_operator.oprcode) PostgreSQL's catalog does not mark`);
  });
});

describe('not exposed: immutable and stable calls, and volatile ones that receive no such value', () => {
  it.each([
    "SELECT id FROM customers WHERE lower(note) = 'x'",
    "SELECT id FROM customers WHERE note LIKE '+1%' AND note ~ '^x' AND note ILIKE 'a%'",
    "SELECT id FROM customers WHERE note || 'x' = 'y' AND length(note) > 3",
    "SELECT id FROM customers WHERE note SIMILAR TO 'a%' ESCAPE '!'",
    "SELECT id FROM customers WHERE regexp_replace(note, '\\D', '', 'g') = md5($1)",
    "SELECT id FROM customers WHERE note BETWEEN 'a' AND 'b' AND note IN ('x') AND note <> ALL (ARRAY['y'])",
    "SELECT id FROM customers WHERE CASE note WHEN 'x' THEN true END",
    'SELECT id FROM customers ORDER BY lower(note), note USING <',
    'SELECT count(note), count(DISTINCT note) FROM customers',
    "SELECT id FROM customers WHERE nextval('s') > 0 AND note = 'x'",
    'SELECT id FROM customers WHERE leak(id) AND random() < 0.5',
    "SELECT id FROM customers WHERE leak((SELECT count(*) FROM customers WHERE note = 'x'))",
    'SELECT id FROM customers WHERE leak(note IS NULL)',
    'SELECT id FROM customers WHERE leak(EXISTS (SELECT note FROM customers))',
    'SELECT note FROM customers',
  ])('%s', (sql) => {
    expect(analysed(sql).exposures).toEqual([]);
  });

  it('without the catalog\'s answers (a ProtectedSchema lacking them) only the denylist counts', () => {
    const { functionIsVolatile: _f, operatorIsVolatile: _o, ...withoutCatalog } = catalogSchema();
    expect(analysed('SELECT id FROM customers WHERE leak(note)', withoutCatalog).exposures).toEqual([]);
    expect(analysed("SELECT id FROM customers WHERE pg_notify('c', note) IS NULL", withoutCatalog).exposures).not.toEqual([]);
  });
});
