/**
 * DDL and protected data: renames, moves and retypes of what policies name are refused (policies
 * are bound to names), as are server-side defaults into protected columns and INHERIT / ATTACH
 * under a protected parent; everything else passes. And what each statement changes, for the
 * session's record of DDL the catalog cannot see yet.
 */
import { describe, expect, it } from 'vitest';
import { analyseSql, schemaFactsOf, type ProtectedSchema } from '../../src/proxy/sql/index.js';
import { analyse, useSqlParser } from './sqlTestHelpers.js';
import { testSchema } from './sqlTestSchema.js';

useSqlParser();

/** The test schema plus policy names: customers.ssn/email (existing), customers.tax_id and archive.* (not in the catalog). */
function boundSchema(): ProtectedSchema {
  const named = ['public.customers.ssn', 'public.customers.email', 'public.customers.tax_id', 'public.orders.card', 'public.archive.ssn'];
  return {
    ...testSchema(),
    isPolicyBound: (schema, table, column) => named.some((key) => {
      const [s, t, c] = key.split('.');
      return (schema === undefined || s === schema) && (table === undefined || t === table) && (column === undefined || c === column);
    }),
  };
}

describe('DDL refused through pgveil', () => {
  it.each([
    ['ALTER TABLE customers RENAME ssn TO tax_number', 'public.customers.ssn', 'RENAME COLUMN'],
    ['ALTER TABLE IF EXISTS ONLY public.customers RENAME COLUMN email TO mail', 'public.customers.email', 'RENAME COLUMN'],
    ['ALTER TABLE customers RENAME TO clients', 'public.customers', 'RENAME'],
    ['ALTER TABLE customers SET SCHEMA billing', 'public.customers', 'SET SCHEMA'],
    ['ALTER TABLE customers ALTER COLUMN ssn TYPE varchar(64)', 'public.customers.ssn', 'TYPE'],
    ['ALTER TABLE customers ALTER ssn SET DATA TYPE text', 'public.customers.ssn', 'TYPE'],
    ['ALTER TABLE plain INHERIT customers', 'public.customers', 'INHERIT'],
    ['ALTER TABLE plain NO INHERIT customers', 'public.customers', 'NO INHERIT'],
    ['ALTER TABLE orders ATTACH PARTITION plain FOR VALUES IN (1)', 'public.orders', 'ATTACH PARTITION'],
    ['ALTER TABLE orders DETACH PARTITION plain', 'public.orders', 'DETACH PARTITION'],
    ['ALTER TABLE customers ALTER COLUMN ssn SET EXPRESSION AS (note)', 'public.customers.ssn', 'generated'],
    ["CREATE TABLE customers_2 (ssn text DEFAULT '123-45-6789') INHERITS (customers)", 'public.customers_2.ssn', 'DEFAULT'],
  ])('%s', (sql, names, reason) => {
    const { rejection } = analyse(sql);
    expect(rejection?.sqlState).toBe('0A000');
    expect(rejection?.message).toContain(names);
    expect(rejection?.message).toContain(reason);
  });

  it.each([
    ['ALTER TABLE customers RENAME note TO tax_id', 'public.customers.tax_id', 'give its name'],
    ['ALTER TABLE plain RENAME TO archive', 'archive', 'name'],
    ['ALTER SCHEMA public RENAME TO legacy', 'public', 'ALTER SCHEMA'],
    ["ALTER TABLE customers ADD COLUMN tax_id text DEFAULT '000-00-0000'", 'public.customers.tax_id', 'DEFAULT'],
    ["ALTER TABLE customers ALTER COLUMN tax_id SET DEFAULT '000-00-0000'", 'public.customers.tax_id', 'SET DEFAULT'],
    ['ALTER TABLE customers ALTER COLUMN tax_id TYPE text', 'public.customers.tax_id', 'TYPE'],
    ["CREATE TABLE archive (id int, ssn text GENERATED ALWAYS AS ('x') STORED)", 'public.archive.ssn', 'generated'],
    ['ALTER TYPE address RENAME ATTRIBUTE ssn TO tax CASCADE', 'ssn', 'typed table'],
  ])('%s (names the policy file binds, existing or not)', (sql, names, reason) => {
    const { rejection } = analyseSql(sql, boundSchema());
    expect(rejection?.sqlState).toBe('0A000');
    expect(rejection?.message).toContain(names);
    expect(rejection?.message).toContain(reason);
  });

  it.each([
    'ALTER TABLE customers RENAME note TO remark',
    'ALTER TABLE plain RENAME TO plain_old',
    'ALTER TABLE plain SET SCHEMA billing',
    'ALTER TABLE customers ALTER COLUMN note TYPE varchar(64)',
    'ALTER TABLE customers ADD COLUMN loyalty int DEFAULT 0, DROP COLUMN note',
    'ALTER TABLE customers ADD COLUMN tax_id text',
    'ALTER TABLE customers ADD COLUMN tax_id text DEFAULT NULL',
    'ALTER TABLE customers RENAME CONSTRAINT customers_pkey TO customers_pk',
    'ALTER VIEW v RENAME COLUMN ssn TO ssn_shown',
    'ALTER SCHEMA billing RENAME TO invoicing',
    'DROP TABLE customers',
    'CREATE TABLE c2 (LIKE customers INCLUDING ALL)',
    'CREATE TABLE customers_2025 PARTITION OF customers FOR VALUES IN (2025)',
    "CREATE TABLE notes (body text DEFAULT '', ssn text) INHERITS (plain)",
  ])('%s passes', (sql) => {
    expect(analyseSql(sql, boundSchema()).rejection).toBeUndefined();
  });
});

describe('schemaFactsOf', () => {
  it('names the relations a statement mentions, not those it defines, and its CTEs', () => {
    const [insert, create, view] = schemaFactsOf(
      'WITH x AS (SELECT 1) INSERT INTO s.t SELECT * FROM x JOIN u ON true; '
      + 'CREATE TABLE n (LIKE customers) INHERITS (p); CREATE VIEW v AS SELECT * FROM customers',
    );
    expect(insert?.mentions).toEqual([{ schema: 's', table: 't' }, { schema: undefined, table: 'x' }, { schema: undefined, table: 'u' }]);
    expect([...(insert?.cteNames ?? [])]).toEqual(['x']);
    expect(insert?.changes).toEqual([]);
    expect(create?.mentions.map((name) => name.table)).toEqual(['customers', 'p']);
    expect(create?.changes).toEqual([{ kind: 'created', relation: { schema: undefined, table: 'n' }, parents: [{ schema: undefined, table: 'p' }], viewOf: undefined, renamedFrom: undefined }]);
    expect(view?.changes).toMatchObject([{ kind: 'created', relation: { table: 'v' }, viewOf: [{ table: 'customers' }] }]);
  });

  it('tells appended columns from changed ones, and fails closed on what it does not know', () => {
    const changes = (sql: string): unknown => schemaFactsOf(sql)[0]?.changes;
    expect(changes('ALTER TABLE t ADD COLUMN a int, ADD CONSTRAINT k CHECK (a > 0)')).toEqual([{ kind: 'columnsAdded', relation: { schema: undefined, table: 't' }, columns: ['a'] }]);
    expect(changes('ALTER TABLE t DROP COLUMN a')).toEqual([{ kind: 'columnsChanged', relation: { schema: undefined, table: 't' } }]);
    expect(changes('ALTER TABLE t RENAME TO u')).toMatchObject([{ kind: 'created', relation: { table: 'u' }, renamedFrom: { table: 't' } }]);
    expect(changes('ALTER TABLE t SET SCHEMA s')).toMatchObject([{ kind: 'created', relation: { schema: 's', table: 't' }, renamedFrom: { table: 't' } }]);
    expect(changes('DROP TABLE a, s.b')).toEqual([{ kind: 'removed', relation: { schema: undefined, table: 'a' } }, { kind: 'removed', relation: { schema: 's', table: 'b' } }]);
    expect(changes('DROP TYPE mood CASCADE')).toEqual([{ kind: 'anything' }]);
    expect(changes('DO $$ BEGIN EXECUTE $x$ALTER TABLE t DROP COLUMN a$x$; END $$')).toEqual([{ kind: 'anything' }]);
    expect(changes('CREATE INDEX ON t (a)')).toEqual([]);
    expect(changes('SELECT 1 INTO newt')).toMatchObject([{ kind: 'created', relation: { table: 'newt' } }]);
    expect(changes('CREATE SCHEMA s CREATE TABLE t (a int)')).toMatchObject([{ kind: 'created', relation: { schema: 's', table: 't' } }]);
    expect(schemaFactsOf('SELEC 1')).toEqual([]);
  });
});
