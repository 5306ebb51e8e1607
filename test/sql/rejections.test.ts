/** Every way a value could reach a protected column that pgveil cannot map is refused, naming the column. */
import { describe, expect, it } from 'vitest';
import { analyse, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

interface Case {
  readonly sql: string;
  /** Text the rejection message must contain: the column (schema.table.column) or the table. */
  readonly names: string;
  /** A second fragment: the reason. */
  readonly reason: string;
}

const SSN = 'public.customers.ssn';
const EMAIL = 'public.customers.email';
const CARD = 'public.orders.card';

const cases: readonly Case[] = [
  // INSERT … SELECT feeding a protected column
  { sql: 'INSERT INTO customers (ssn) SELECT ssn FROM plain', names: SSN, reason: 'INSERT … SELECT' },
  { sql: 'INSERT INTO customers (email) SELECT ssn FROM customers', names: EMAIL, reason: 'INSERT … SELECT' },
  // one table spelled two ways: another session may create a `customers` earlier on the path
  { sql: 'INSERT INTO customers (ssn) SELECT ssn FROM public.customers', names: SSN, reason: 'INSERT … SELECT' },
  { sql: 'INSERT INTO public.customers (ssn) SELECT ssn FROM customers', names: SSN, reason: 'INSERT … SELECT' },
  { sql: 'UPDATE customers SET ssn = p.ssn FROM public.customers p WHERE p.id = customers.id', names: SSN, reason: 'spell the name alike on both sides' },
  { sql: 'UPDATE customers SET ssn = (SELECT p.ssn FROM public.customers p LIMIT 1)', names: SSN, reason: 'spell the name alike on both sides' },
  { sql: 'INSERT INTO customers SELECT * FROM plain', names: SSN, reason: 'INSERT … SELECT' },
  { sql: "INSERT INTO customers (ssn) VALUES ('a') UNION VALUES ('b')", names: SSN, reason: 'INSERT … SELECT' },
  // functions, operators and casts around a value
  { sql: 'INSERT INTO customers (ssn) VALUES (lower($1))', names: SSN, reason: 'function lower() around a parameter' },
  { sql: "INSERT INTO customers (ssn) VALUES ($1 || 'x')", names: SSN, reason: 'operator ||' },
  { sql: 'INSERT INTO orders (card) VALUES (+5)', names: CARD, reason: 'operator +' },
  { sql: "INSERT INTO customers (ssn) VALUES (COALESCE($1, 'none'))", names: SSN, reason: 'COALESCE' },
  { sql: 'INSERT INTO customers (ssn) VALUES (now())', names: SSN, reason: 'function now()' },
  { sql: "INSERT INTO customers (ssn) VALUES ('a' COLLATE \"C\")", names: SSN, reason: 'COLLATE' },
  { sql: 'INSERT INTO customers (ssn) VALUES ((SELECT note FROM plain LIMIT 1))', names: SSN, reason: 'subquery' },
  { sql: 'UPDATE customers SET ssn = ssn || $1', names: SSN, reason: 'operator ||' },
  { sql: 'UPDATE customers SET ssn = upper(ssn)', names: SSN, reason: 'function upper()' },
  { sql: 'UPDATE customers SET ssn = note', names: SSN, reason: 'column note, which is not protected' },
  { sql: 'UPDATE customers SET ssn = email', names: SSN, reason: 'comes from protected column public.customers.email' },
  { sql: 'UPDATE customers c SET ssn = p.ssn FROM plain p WHERE p.id = c.id', names: SSN, reason: 'column p.ssn, which is not protected' },
  { sql: 'UPDATE customers SET ssn = CASE WHEN id = 1 THEN $1 ELSE ssn END', names: SSN, reason: 'CASE expression' },
  { sql: 'UPDATE customers SET (ssn, note) = (SELECT note, note FROM plain)', names: SSN, reason: 'subquery' },
  { sql: 'INSERT INTO customers (id, ssn) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET ssn = EXCLUDED.note', names: SSN, reason: 'not protected' },
  { sql: 'INSERT INTO customers (id, ssn) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.ssn', names: EMAIL, reason: 'comes from protected column public.customers.ssn' },
  { sql: 'MERGE INTO customers c USING plain p ON c.id = p.id WHEN NOT MATCHED THEN INSERT (id, ssn) VALUES (p.id, p.ssn)', names: SSN, reason: 'not protected' },
  { sql: "UPDATE customers SET ssn[1] = 'x'", names: SSN, reason: 'field or element' },
  { sql: "INSERT INTO orders (card) VALUES (B'1010')", names: CARD, reason: 'bit-string constant' },
  // predicates that do not work on tokens
  { sql: 'SELECT * FROM customers WHERE lower(email) = $1', names: EMAIL, reason: 'function lower()' },
  { sql: "SELECT * FROM customers WHERE email LIKE '%@example.com'", names: EMAIL, reason: 'LIKE' },
  { sql: 'SELECT * FROM customers WHERE email ILIKE $1', names: EMAIL, reason: 'ILIKE' },
  { sql: "SELECT * FROM customers WHERE email SIMILAR TO '%x%'", names: EMAIL, reason: 'SIMILAR TO' },
  { sql: "SELECT * FROM customers WHERE email ~ '^a'", names: EMAIL, reason: 'operator ~' },
  { sql: "SELECT * FROM customers WHERE ssn > '5'", names: SSN, reason: 'operator >' },
  { sql: 'SELECT * FROM customers WHERE ssn <= $1', names: SSN, reason: 'operator <=' },
  { sql: "SELECT * FROM customers WHERE ssn BETWEEN '1' AND '2'", names: SSN, reason: 'BETWEEN' },
  { sql: 'SELECT * FROM customers WHERE length(ssn) = 11', names: SSN, reason: 'function length()' },
  { sql: "SELECT * FROM customers WHERE COALESCE(ssn, '') = $1", names: SSN, reason: 'cannot map' },
  { sql: 'SELECT * FROM orders o JOIN customers c ON lower(c.email) = o.memo', names: EMAIL, reason: 'function lower()' },
  { sql: "SELECT email FROM customers GROUP BY email HAVING max(ssn) = '1'", names: SSN, reason: 'function max()' },
  { sql: "SELECT * FROM (SELECT lower(email) AS e FROM customers) s WHERE s.e = 'x'", names: EMAIL, reason: 'computed from it' },
  { sql: 'SELECT * FROM customers WHERE ssn = $1 COLLATE "C"', names: SSN, reason: 'COLLATE' },
  // comparisons with non-constant expressions
  { sql: 'SELECT * FROM customers c JOIN plain p ON c.ssn = p.ssn', names: SSN, reason: 'column p.ssn, which is not protected' },
  { sql: 'SELECT * FROM customers WHERE ssn = note', names: SSN, reason: 'not protected' },
  { sql: 'SELECT * FROM customers WHERE ssn = lower($1)', names: SSN, reason: 'function lower() around a parameter' },
  { sql: "SELECT * FROM customers WHERE ssn = $1 || '-0000'", names: SSN, reason: 'operator ||' },
  { sql: "SELECT * FROM customers WHERE ssn = current_setting('app.ssn')", names: SSN, reason: 'current_setting()' },
  { sql: 'SELECT * FROM customers WHERE ssn IN (SELECT ssn FROM plain)', names: SSN, reason: 'subquery whose result is not a protected column' },
  { sql: 'SELECT * FROM customers WHERE ssn = ANY(string_to_array($1, \',\'))', names: SSN, reason: 'string_to_array()' },
  { sql: 'SELECT * FROM customers WHERE ssn < ANY($1)', names: SSN, reason: 'operator <' },
  { sql: 'SELECT * FROM customers c JOIN plain p USING (ssn)', names: SSN, reason: 'join compares it' },
  { sql: 'SELECT * FROM customers NATURAL JOIN plain', names: SSN, reason: 'join compares it' },
  { sql: 'SELECT * FROM customers NATURAL JOIN generate_series(1, 2) g', names: SSN, reason: 'NATURAL JOIN' },
  { sql: 'SELECT * FROM (SELECT ssn FROM customers UNION SELECT ssn FROM plain) u WHERE u.ssn = $1', names: SSN, reason: 'computed from it' },
  { sql: 'SELECT * FROM customers WHERE (id, ssn) = (1, 2, 3)', names: SSN, reason: 'row value' },
  { sql: 'SELECT * FROM customers WHERE ssn = $1 OR ssn = ANY($1)', names: SSN, reason: 'both as one value and as an array' },
  // COPY
  { sql: "COPY customers FROM '/tmp/customers.csv' (FORMAT csv)", names: SSN, reason: 'server file' },
  { sql: "COPY customers (ssn) FROM PROGRAM 'cat data'", names: SSN, reason: 'PROGRAM' },
  { sql: "COPY customers FROM STDIN (FORMAT csv, ENCODING 'LATIN1')", names: 'ENCODING', reason: 'UTF-8' },
  { sql: "COPY customers FROM STDIN (FORMAT csv, FUTURE_OPTION 'x')", names: 'future_option', reason: 'not understood' },
  // statements pgveil does not analyse, when they name a protected table
  { sql: "DO $$ BEGIN INSERT INTO customers (ssn) VALUES ('1'); END $$", names: 'public.customers', reason: 'DoStmt' },
  { sql: "DO $$ BEGIN EXECUTE 'insert into ' || 'CUSTOMERS values (1)'; END $$", names: 'public.customers', reason: 'DoStmt' },
  { sql: 'CREATE FUNCTION f(t text) RETURNS void LANGUAGE sql AS $$ UPDATE customers SET ssn = t $$', names: 'public.customers', reason: 'CreateFunctionStmt' },
  { sql: 'CREATE PROCEDURE p() LANGUAGE sql AS $$ DELETE FROM billing.accounts $$', names: 'billing.accounts', reason: 'CreateFunctionStmt' },
  { sql: 'CALL move_card((SELECT card FROM orders LIMIT 1))', names: 'public.orders', reason: 'CallStmt' },
  { sql: 'CREATE RULE r AS ON INSERT TO plain DO ALSO INSERT INTO customers (ssn) VALUES (NEW.ssn)', names: 'public.customers', reason: 'RuleStmt' },
  { sql: "CREATE TRIGGER t BEFORE UPDATE ON customers FOR EACH ROW WHEN (NEW.ssn = '1') EXECUTE FUNCTION f()", names: 'public.customers', reason: 'CreateTrigStmt' },
  { sql: "CREATE POLICY p ON customers USING (ssn = current_user)", names: 'public.customers', reason: 'CreatePolicyStmt' },
  { sql: "ALTER TABLE customers ALTER COLUMN ssn SET DEFAULT '000-00-0000'", names: SSN, reason: 'SET DEFAULT' },
  { sql: 'ALTER TABLE customers ALTER COLUMN ssn TYPE text USING upper(ssn)', names: SSN, reason: 'USING' },
  // text the parser rejects that names a protected table
  { sql: "INSERT INTO customers (ssn) VALUES ('1'", names: 'public.customers', reason: 'does not parse' },
  { sql: 'SELEC * FROM billing.accounts', names: 'billing.accounts', reason: 'does not parse' },
];

describe('fail closed', () => {
  it.each(cases)('$sql', ({ sql, names, reason }) => {
    const analysis = analyse(sql);
    expect(analysis.rejection, 'expected a rejection').toBeDefined();
    expect(analysis.rejection?.message).toContain(names);
    expect(analysis.rejection?.message).toContain(reason);
    expect(analysis.passThrough).toBe(false);
    const [statement] = analysis.statements;
    // A refused statement reports no targets: nothing of it may be forwarded.
    expect(statement?.params).toEqual([]);
    expect(statement?.literals).toEqual([]);
  });

  it('points at the offending construct and uses SQLSTATE 0A000', () => {
    const sql = 'SELECT * FROM customers WHERE email LIKE $1';
    const { rejection } = analyse(sql);
    expect(rejection).toMatchObject({ sqlState: '0A000', column: { schema: 'public', table: 'customers', column: 'email' } });
    expect(rejection?.position).toBe(sql.indexOf('email LIKE'));
  });

  it('uses SQLSTATE 42601 for text that does not parse', () => {
    expect(analyse('UPDATE customers SET').rejection?.sqlState).toBe('42601');
  });

  it('scans raw text with protectedTableNames() when the schema offers it', () => {
    const sql = 'DO $$ BEGIN DELETE FROM "Customers"; END $$';
    expect(analyse(sql, { listNames: true }).rejection?.message).toContain('Customers');
    expect(analyse('DO $$ BEGIN PERFORM 1; END $$', { listNames: true }).rejection).toBeUndefined();
  });

  it('refuses a text containing NUL', () => {
    expect(analyse('SELECT 1\u0000; DROP TABLE customers').rejection?.message).toContain('NUL');
  });

  it('refuses the whole message when one of several statements is refused', () => {
    const analysis = analyse("BEGIN; INSERT INTO customers (ssn) VALUES ('1'); SELECT * FROM customers WHERE email LIKE 'a%'; COMMIT");
    expect(analysis.statements.map((statement) => statement.rejection === undefined)).toEqual([true, true, false, true]);
    expect(analysis.rejection?.message).toContain(EMAIL);
  });
});
