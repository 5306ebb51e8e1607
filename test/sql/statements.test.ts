/** Multi-statement texts, statement kinds, the fast path, and what passes untouched. */
import { describe, expect, it } from 'vitest';
import { EMAIL, SSN } from './sqlTestSchema.js';
import { analyse, analyseOne, byteRange, byteSlice, describeLiterals, describeParams, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

describe('multi-statement texts', () => {
  const sql = "BEGIN; INSERT INTO customers (note, ssn) VALUES ('ä', '1'); UPDATE customers SET email = 'e' WHERE ssn = '2';\nCOMMIT;";

  it('splits statements with their byte ranges and types', () => {
    const { statements } = analyse(sql);
    expect(statements.map((statement) => statement.type)).toEqual(['TransactionStmt', 'InsertStmt', 'UpdateStmt', 'TransactionStmt']);
    expect(statements.map((statement) => byteSlice(sql, statement.start, statement.end))).toEqual([
      'BEGIN',
      "INSERT INTO customers (note, ssn) VALUES ('ä', '1')",
      "UPDATE customers SET email = 'e' WHERE ssn = '2'",
      'COMMIT',
    ]);
  });

  it('gives each literal its offset in the whole text', () => {
    const [, insert, update] = analyse(sql).statements;
    expect(insert?.literals).toEqual([{ ...byteRange(sql, "'1'"), value: '1', column: SSN }]);
    expect(describeLiterals(sql, update!)).toEqual([["'e'", 'e', EMAIL], ["'2'", '2', SSN]]);
  });

  it('merges parameter targets over statements', () => {
    const analysis = analyse('SELECT * FROM customers WHERE ssn = $1 AND email = ANY($2) OR email = $1');
    expect([...analysis.paramColumns]).toEqual([[1, [SSN, EMAIL]], [2, [EMAIL]]]);
  });
});

describe('the fast path', () => {
  it.each([
    'SELECT 1',
    'SELECT * FROM plain WHERE ssn = $1',
    "INSERT INTO plain (ssn, note) VALUES ('1', $1)",
    'UPDATE plain SET note = lower(note) WHERE ssn LIKE $1',
    'SELECT ssn, lower(email) FROM customers ORDER BY email',
    'SELECT * FROM customers WHERE id = $1 AND ssn IS NOT NULL',
    "COPY plain FROM STDIN (FORMAT binary)",
    'COPY customers TO STDOUT',
    'COPY customers (id, note) FROM STDIN',
    'SET search_path = public',
    'BEGIN; SHOW server_version; COMMIT',
    '',
    '   ',
    '-- only a comment',
    ';;',
  ])('%j needs nothing', (sql) => {
    const analysis = analyse(sql);
    expect(analysis.rejection).toBeUndefined();
    expect(analysis.passThrough).toBe(true);
  });
});

describe('statement kinds', () => {
  it.each([
    ['EXPLAIN ANALYZE UPDATE customers SET ssn = $1', 'ExplainStmt'],
    ['DECLARE c CURSOR FOR SELECT * FROM customers WHERE ssn = $1', 'DeclareCursorStmt'],
    ['CREATE TABLE copy AS SELECT * FROM customers WHERE ssn = $1', 'CreateTableAsStmt'],
    ['SELECT * INTO copy FROM customers WHERE ssn = $1', 'SelectStmt'],
  ])('%s analyses the statement it wraps', (sql, type) => {
    const statement = analyseOne(sql);
    expect(statement.type).toBe(type);
    expect(describeParams(statement)).toEqual([[1, SSN]]);
  });

  it('analyses the query of a view and of a partial index', () => {
    const view = "CREATE VIEW v AS SELECT * FROM customers WHERE ssn <> '000'";
    expect(describeLiterals(view, analyseOne(view))).toEqual([["'000'", '000', SSN]]);
    const index = "CREATE INDEX ON customers (lower(email)) WHERE email <> ''";
    expect(describeLiterals(index, analyseOne(index))).toEqual([["''", '', EMAIL]]);
  });

  it('keeps the literals of a SQL-level PREPARE (they are in the text) and lets EXECUTE pass', () => {
    const prepare = "PREPARE p(int) AS SELECT * FROM customers WHERE ssn = '1' AND id = $1";
    expect(describeLiterals(prepare, analyseOne(prepare))).toEqual([["'1'", '1', SSN]]);
    // No prepared statement in the session can have parameters feeding a protected column.
    expect(analyse("EXECUTE p('123-45-6789')").passThrough).toBe(true);
  });

  it.each([
    'ALTER TABLE customers ADD COLUMN phone text DEFAULT $$n/a$$',
    'ALTER TABLE customers ALTER COLUMN ssn SET NOT NULL, ALTER COLUMN note SET DEFAULT $$x$$',
    'ALTER TABLE customers ALTER COLUMN note TYPE varchar(64)',
    'CREATE TABLE c2 (LIKE customers INCLUDING ALL)',
    'CREATE TABLE notes (customer_id int REFERENCES customers (id))',
    'CREATE INDEX customers_ssn ON customers (ssn)',
    'CREATE TRIGGER t AFTER INSERT ON customers FOR EACH ROW EXECUTE FUNCTION audit()',
    'TRUNCATE customers',
    'GRANT SELECT ON customers TO analyst',
    "COMMENT ON COLUMN customers.ssn IS 'protected by pgveil'",
    'DROP TABLE customers',
    'LOCK TABLE customers IN SHARE MODE',
    'VACUUM ANALYZE customers',
    'DO $$ BEGIN RAISE NOTICE $x$hello$x$; END $$',
    'CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE sql AS $$ SELECT a + b $$',
    "CALL refresh_orders('4111')",
    'LISTEN customers',
    "NOTIFY customers, '123-45-6789'",
    'SELEC 1',
    "INSERT INTO plain VALUES ('1'",
  ])('%s passes', (sql) => {
    expect(analyse(sql).rejection).toBeUndefined();
  });
});
