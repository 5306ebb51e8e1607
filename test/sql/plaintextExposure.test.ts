/**
 * Exposures of plaintext-at-rest columns: every way a statement may hand out such a column's value
 * other than as a bare result column (which RowDescription names, so the read path can mask it).
 * Here customers.note is stored in plaintext; note_view.shout is a view expression over it.
 */
import { describe, expect, it } from 'vitest';
import { analyseSql, type ColumnRef, type PlaintextSource, type ProtectedSchema, type SqlAnalysis } from '../../src/proxy/sql/index.js';
import { column, testSchema } from './sqlTestSchema.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

const NOTE = column('customers', 'note');

function plaintextSchema(): ProtectedSchema {
  const base = testSchema();
  return {
    ...base,
    resolveTable: (schema, table) => (table === 'note_view' && (schema ?? 'public') === 'public'
      ? { schema: 'public', table, columns: ['id', 'shout', 'note'] }
      : base.resolveTable(schema, table)),
    isProtected: (ref) => base.isProtected(ref),
    plaintextSource(ref: ColumnRef): PlaintextSource | undefined {
      if (ref.schema !== 'public') return undefined;
      if (ref.table === 'customers' && ref.column === 'note') return { column: NOTE, computed: false };
      if (ref.table === 'note_view' && ref.column === 'note') return { column: NOTE, computed: false };
      if (ref.table === 'note_view' && ref.column === 'shout') return { column: NOTE, computed: true };
      return undefined;
    },
    plaintextTableNames: () => ['customers', 'note_view'],
  };
}

function analysed(sql: string): SqlAnalysis {
  const analysis = analyseSql(sql, plaintextSchema());
  expect(analysis.rejection).toBeUndefined();
  return analysis;
}

/** The columns a statement may show other than bare (overwrites are not reads). */
function exposed(sql: string): ColumnRef[] {
  return analysed(sql).exposures.filter((exposure) => exposure.overwrite !== true).map((exposure) => exposure.column);
}

function overwritten(sql: string): ColumnRef[] {
  return analysed(sql).exposures.filter((exposure) => exposure.overwrite === true).map((exposure) => exposure.column);
}

describe('exposed: the value may leave other than as a bare result column', () => {
  it.each([
    "SELECT note || '' FROM customers",
    'SELECT upper(note) FROM customers',
    'SELECT note::varchar FROM customers',
    'SELECT note::text FROM customers',
    'SELECT (SELECT note FROM customers LIMIT 1)',
    "SELECT note FROM customers UNION SELECT 'x'",
    'SELECT note FROM customers UNION ALL SELECT note FROM customers',
    'SELECT row(note) FROM customers',
    'SELECT array_agg(note) FROM customers',
    'SELECT ARRAY(SELECT note FROM customers)',
    'SELECT to_json(c) FROM customers c',
    'SELECT row_to_json(c.*) FROM customers c',
    'SELECT c FROM customers c',
    'SELECT customers FROM customers',
    'SELECT (c).note FROM customers c',
    'SELECT CASE WHEN id > 0 THEN note END FROM customers',
    'SELECT lag(note) OVER (ORDER BY id) FROM customers',
    'SELECT s.x FROM (SELECT upper(note) AS x FROM customers) s',
    'SELECT * FROM (SELECT note FROM customers UNION SELECT note FROM customers) s',
    'WITH x AS (SELECT note || id AS n FROM customers) SELECT n FROM x',
    'WITH RECURSIVE r(n) AS (SELECT note FROM customers UNION SELECT n FROM r) SELECT n FROM r',
    'SELECT * FROM customers c, LATERAL (SELECT lower(c.note)) l',
    'SELECT * FROM unnest(ARRAY(SELECT note FROM customers)) u',
    'SELECT * FROM customers c, LATERAL jsonb_each_text(to_jsonb(c)) j',
    'SELECT note FROM customers a FULL JOIN customers b USING (note)',
    "VALUES ((SELECT note FROM customers LIMIT 1))",
    "UPDATE customers SET id = id RETURNING note || ''",
    "WITH u AS (UPDATE customers SET id = id RETURNING note) SELECT upper(note) FROM u",
    'COPY (SELECT note FROM customers) TO STDOUT',
    "COPY (SELECT note || '' FROM customers) TO STDOUT",
    'UPDATE customers SET name = note',
    'UPDATE customers SET name = upper(note)',
    'UPDATE customers SET (name, id) = (SELECT note, 1 FROM customers LIMIT 1)',
    'INSERT INTO plain (note) SELECT note FROM customers',
    'INSERT INTO plain (note) VALUES ((SELECT note FROM customers LIMIT 1))',
    'INSERT INTO unknown_table SELECT note FROM customers',
    'INSERT INTO customers (note) SELECT note FROM public.customers',
    'INSERT INTO public.customers (note) SELECT note FROM customers',
    'UPDATE customers SET note = p.note FROM public.customers p WHERE p.id = customers.id',
    'CREATE TABLE copy_of AS SELECT note FROM customers',
    'SELECT note INTO copy_of FROM customers',
    "SELECT id FROM customers WHERE set_config('x.y', note, false) IS NOT NULL",
    'SELECT shout FROM note_view',
    'SELECT v.shout AS s FROM note_view v',
    'DECLARE c CURSOR FOR SELECT upper(note) FROM customers',
    'PREPARE p AS SELECT upper(note) FROM customers',
    "EXPLAIN ANALYZE CREATE TABLE t2 AS SELECT note FROM customers",
  ])('%s', (sql) => {
    expect(exposed(sql)).toContainEqual(NOTE);
  });

  it('says how, for the refusal message', () => {
    const [exposure] = analysed("SELECT id, note || '' AS n FROM customers").exposures;
    expect(exposure?.reason).toMatch(/result column 2 \(n\) is computed from it/);
  });
});

describe('not exposed: bare columns (masked on read) and non-emitting uses', () => {
  it.each([
    'SELECT note FROM customers',
    'SELECT c.note AS n FROM customers c',
    'SELECT public.customers.note FROM customers',
    'SELECT * FROM customers',
    'SELECT c.* FROM customers c',
    'SELECT s.note FROM (SELECT note FROM customers) s',
    'SELECT n FROM (SELECT note AS n FROM customers) s(n)',
    'WITH x AS (SELECT note FROM customers) SELECT note FROM x',
    'WITH x AS (SELECT * FROM customers) SELECT * FROM x',
    'SELECT a.note FROM customers a JOIN customers b ON a.id = b.id',
    'SELECT note FROM customers a JOIN customers b USING (note)',
    'SELECT x.note FROM customers c, LATERAL (SELECT c.note) x',
    'SELECT note FROM customers GROUP BY note ORDER BY note',
    'SELECT DISTINCT note FROM customers',
    "SELECT id FROM customers WHERE note = 'x' AND upper(note) LIKE 'A%'",
    'SELECT id FROM customers ORDER BY lower(note)',
    'SELECT count(note), count(DISTINCT note) FROM customers',
    'SELECT note IS NULL AS missing FROM customers',
    'SELECT EXISTS (SELECT note FROM customers)',
    'SELECT id FROM customers WHERE id IN (SELECT id FROM customers WHERE note > $1)',
    'SELECT (SELECT id FROM customers d WHERE d.note = c.note LIMIT 1) FROM customers c',
    "UPDATE customers SET note = 'x' WHERE note = 'y' RETURNING note",
    'UPDATE customers SET note = upper(note)',
    'INSERT INTO customers (note) SELECT note FROM customers',
    'INSERT INTO public.customers (note) SELECT c.note FROM public.customers c',
    'WITH u AS (UPDATE customers SET id = id RETURNING note) SELECT note FROM u',
    'SELECT note FROM note_view',
    'COPY customers TO STDOUT',
    "COPY (SELECT id FROM customers WHERE note = 'x') TO STDOUT",
    'CREATE VIEW shouting AS SELECT upper(note) AS shout FROM customers',
    'CREATE MATERIALIZED VIEW m AS SELECT note FROM customers',
    "EXPLAIN SELECT note || '' FROM customers",
  ])('%s', (sql) => {
    expect(exposed(sql)).toEqual([]);
  });
});

describe('overwrites: an UPDATE replaces the stored value of a column with a policy', () => {
  it.each([
    "UPDATE customers SET note = 'x' WHERE note = 'y' RETURNING note",
    'UPDATE customers SET note = upper(note)',
    'UPDATE customers SET note = NULL',
    'UPDATE customers SET note = DEFAULT',
    'UPDATE customers SET note = $1 WHERE id = $2',
    "UPDATE customers SET (note, id) = ('x', 1)",
    'UPDATE customers SET (note, id) = (SELECT note, 1 FROM customers LIMIT 1)',
    "UPDATE customers c SET note = d.note FROM customers d WHERE d.id = c.id + 1",
    "INSERT INTO customers (id, note) VALUES (1, 'a') ON CONFLICT (id) DO UPDATE SET note = EXCLUDED.note",
    "MERGE INTO customers c USING (VALUES (1, 'a')) v(id, n) ON c.id = v.id WHEN MATCHED THEN UPDATE SET note = v.n",
    "UPDATE note_view SET note = 'x'",
  ])('%s', (sql) => {
    expect(overwritten(sql)).toEqual([NOTE]);
  });

  it('a protected column too (its view decides, per session)', () => {
    expect(overwritten('UPDATE customers SET ssn = $1, note = note WHERE id = $2')).toEqual([column('customers', 'ssn')]);
  });

  it.each([
    'UPDATE customers SET note = note',
    'UPDATE customers c SET note = c.note',
    'UPDATE customers SET id = 2, name = $1',
    "INSERT INTO customers (id, note) VALUES (1, 'x')",
    "INSERT INTO customers (id, note) VALUES (1, 'a') ON CONFLICT (id) DO UPDATE SET note = customers.note, id = EXCLUDED.id",
    "INSERT INTO customers (id, note) VALUES (1, 'a') ON CONFLICT DO NOTHING",
    'DELETE FROM customers WHERE note = $1',
  ])('none: %s', (sql) => {
    expect(overwritten(sql)).toEqual([]);
  });
});

describe('opaque reads', () => {
  it.each([
    ["SELECT query_to_xml('SELECT note FROM customers', true, false, '')", /query_to_xml/],
    ['DO $$ BEGIN PERFORM shout FROM note_view; END $$', /DoStmt mentions table note_view/],
    ['PREPARE q AS SELECT note FROM customers; CREATE TABLE t AS EXECUTE q', /CREATE TABLE AS EXECUTE/],
  ])('%s', (sql, reason) => {
    expect(analysed(sql).opaqueRead).toMatch(reason);
  });

  it('are not reported for statements naming no such table', () => {
    expect(analysed('DO $$ BEGIN PERFORM 1; END $$').opaqueRead).toBeUndefined();
  });
});
