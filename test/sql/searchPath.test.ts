/**
 * search_path values as the server reads them, what statements do to search_path / role /
 * transactions (session effects), and the analyser switching its name resolution after a SET
 * in the middle of a multi-statement text.
 */
import { describe, expect, it } from 'vitest';
import {
  analyseSql, parseSearchPath, sessionEffectsOf, type ProtectedSchema, type ResolvedTable, type SessionEffect,
} from '../../src/proxy/sql/index.js';
import { searchPathFromSetArguments, truncateIdentifier } from '../../src/proxy/sql/searchPathValue.js';
import { parseSql } from '../../src/proxy/sql/sqlParser.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

describe('parseSearchPath (a value string)', () => {
  it('splits, unquotes and downcases like the server', () => {
    expect(parseSearchPath('"$user", public, "My Schema"')).toEqual(['$user', 'public', 'My Schema']);
    expect(parseSearchPath('  CRM ,Sales_2024,\t"a""b"  ')).toEqual(['crm', 'sales_2024', 'a"b']);
    expect(parseSearchPath('$user,PG_TEMP,"PG_TEMP"')).toEqual(['$user', 'pg_temp', 'PG_TEMP']);
    expect(parseSearchPath('"a, b"')).toEqual(['a, b']);
    expect(parseSearchPath('ÉCOLE')).toEqual(['École']); // only ASCII letters are downcased
  });

  it('takes an empty value as an empty path and an empty quoted name as a name', () => {
    expect(parseSearchPath('')).toEqual([]);
    expect(parseSearchPath('   ')).toEqual([]);
    expect(parseSearchPath('""')).toEqual(['']);
  });

  it('refuses what the server refuses', () => {
    expect(parseSearchPath('a,,b')).toBeUndefined();
    expect(parseSearchPath('a,')).toBeUndefined();
    expect(parseSearchPath(',a')).toBeUndefined();
    expect(parseSearchPath('a b')).toBeUndefined();
    expect(parseSearchPath('"unterminated')).toBeUndefined();
    expect(parseSearchPath('"a"b')).toBeUndefined();
  });

  it('truncates names to 63 bytes, on a character boundary', () => {
    expect(parseSearchPath('x'.repeat(70))).toEqual(['x'.repeat(63)]);
    const accented = 'é'.repeat(40); // 80 bytes
    expect(truncateIdentifier(accented)).toBe('é'.repeat(31));
    expect(parseSearchPath(`"${accented}"`)).toEqual(['é'.repeat(31)]);
  });

  it('reads SET arguments as one name each (the server quotes string arguments)', () => {
    expect(searchPathFromSetArguments([{ string: 'a, b' }, { string: 'My Schema' }, { number: '1' }])).toEqual(['a, b', 'My Schema', '1']);
  });
});

function effectsOf(sql: string): readonly SessionEffect[] {
  const statement = parseSql(sql).stmts?.[0]?.stmt;
  return sessionEffectsOf(statement, sql);
}

describe('sessionEffectsOf', () => {
  it('reads SET, SET LOCAL, SET SCHEMA and RESET of search_path', () => {
    expect(effectsOf('SET search_path TO crm, "My Schema", \'a, b\'')).toEqual([{ kind: 'set-path', names: ['crm', 'My Schema', 'a, b'], local: false }]);
    expect(effectsOf('SET SESSION search_path = crm')).toEqual([{ kind: 'set-path', names: ['crm'], local: false }]);
    expect(effectsOf('SET LOCAL search_path = sales')).toEqual([{ kind: 'set-path', names: ['sales'], local: true }]);
    expect(effectsOf("SET SCHEMA 'Sales'")).toEqual([{ kind: 'set-path', names: ['Sales'], local: false }]);
    expect(effectsOf('SET "Search_Path" TO crm')).toEqual([{ kind: 'set-path', names: ['crm'], local: false }]);
    expect(effectsOf('RESET search_path')).toEqual([{ kind: 'reset-path', local: false }]);
    expect(effectsOf('SET LOCAL search_path TO DEFAULT')).toEqual([{ kind: 'reset-path', local: true }]);
    expect(effectsOf('RESET ALL')).toEqual([{ kind: 'reset-path', local: false }]);
    expect(effectsOf('DISCARD ALL')).toEqual([{ kind: 'discard-all' }]);
    expect(effectsOf('SET search_path FROM CURRENT')).toEqual([]);
    expect(effectsOf('SET work_mem = 1024')).toEqual([]);
    expect(effectsOf('DISCARD PLANS')).toEqual([]);
  });

  it('reads roles and session authorization', () => {
    expect(effectsOf('SET ROLE "Bob"')).toEqual([{ kind: 'set-role', role: 'Bob', local: false }]);
    expect(effectsOf('SET LOCAL ROLE NONE')).toEqual([{ kind: 'set-role', role: null, local: true }]);
    expect(effectsOf('RESET ROLE')).toEqual([{ kind: 'reset-role', local: false }]);
    expect(effectsOf('SET SESSION AUTHORIZATION alice')).toEqual([{ kind: 'set-session-user', user: 'alice', local: false }]);
    expect(effectsOf('RESET SESSION AUTHORIZATION')).toEqual([{ kind: 'set-session-user', user: null, local: false }]);
  });

  it('reads transaction control', () => {
    expect(effectsOf('BEGIN')).toEqual([{ kind: 'transaction', action: 'begin' }]);
    expect(effectsOf('START TRANSACTION ISOLATION LEVEL SERIALIZABLE')).toEqual([{ kind: 'transaction', action: 'begin' }]);
    expect(effectsOf('COMMIT AND CHAIN')).toEqual([{ kind: 'transaction', action: 'commit', chain: true }]);
    expect(effectsOf('ABORT')).toEqual([{ kind: 'transaction', action: 'rollback', chain: false }]);
    expect(effectsOf('SAVEPOINT s1')).toEqual([{ kind: 'transaction', action: 'savepoint', savepoint: 's1' }]);
    expect(effectsOf('RELEASE SAVEPOINT s1')).toEqual([{ kind: 'transaction', action: 'release', savepoint: 's1' }]);
    expect(effectsOf('ROLLBACK TO s1')).toEqual([{ kind: 'transaction', action: 'rollback-to', savepoint: 's1' }]);
    expect(effectsOf("PREPARE TRANSACTION 'x'")).toEqual([{ kind: 'transaction', action: 'prepare' }]);
    expect(effectsOf("COMMIT PREPARED 'x'")).toEqual([]);
  });

  it('reads set_config with constant arguments in a plain SELECT list', () => {
    expect(effectsOf("SELECT set_config('search_path', 'crm, \"My Schema\"', false)")).toEqual([{ kind: 'set-path', names: ['crm', 'My Schema'], local: false }]);
    expect(effectsOf("SELECT pg_catalog.set_config('Search_Path', 'crm', 'true'::boolean) AS p")).toEqual([{ kind: 'set-path', names: ['crm'], local: true }]);
    expect(effectsOf("SELECT set_config('role', 'bob', false)")).toEqual([{ kind: 'set-role', role: 'bob', local: false }]);
    expect(effectsOf("SELECT set_config('application_name', x, false) FROM t")).toEqual([]);
  });

  it('makes the path unknown when it cannot read the change', () => {
    const unknown = [{ kind: 'unknown' }];
    expect(effectsOf("SELECT set_config('search_path', current_setting('x'), false)")).toEqual(unknown);
    expect(effectsOf("SELECT set_config(name, 'crm', false) FROM settings")).toEqual(unknown);
    expect(effectsOf("SELECT set_config('search_path', 'crm', false) FROM generate_series(1, 0)")).toEqual(unknown);
    expect(effectsOf("SELECT set_config('search_path', 'crm', false) WHERE false")).toEqual(unknown);
    expect(effectsOf("SELECT set_config('search_path', 'a,,b', false)")).toEqual(unknown);
    expect(effectsOf("SELECT set_config('search_path', 'crm', local) FROM t")).toEqual(unknown);
    expect(effectsOf("INSERT INTO log SELECT set_config('search_path', 'crm', false)")).toEqual(unknown);
    expect(effectsOf("DO $$ BEGIN SET search_path = crm; END $$")).toEqual(unknown);
    expect(effectsOf('CALL reconfigure()')).toEqual(unknown);
  });
});

/** A schema where `customers` is crm.customers (protected) or sales.customers, by the path. */
class PathSchema implements ProtectedSchema {
  constructor(private readonly path: string) {}

  resolveTable(schema: string | undefined, table: string): ResolvedTable | undefined {
    if (table !== 'customers') return undefined;
    return { schema: schema ?? this.path, table, columns: ['id', 'ssn'] };
  }

  isProtected(column: { schema: string; column: string }): boolean {
    return column.schema === 'crm' && column.column === 'ssn';
  }

  afterStatement(effects: readonly SessionEffect[]): ProtectedSchema {
    const set = effects.find((effect) => effect.kind === 'set-path');
    return set?.kind === 'set-path' ? new PathSchema(set.names[0] ?? '') : this;
  }
}

describe('analyseSql across a SET search_path', () => {
  it('resolves the statements after the SET on the new path, and reports each statement’s effects', () => {
    const sql = "INSERT INTO customers (ssn) VALUES ('1'); SET search_path TO sales; INSERT INTO customers (ssn) VALUES ('2'); SET search_path TO crm; INSERT INTO customers (ssn) VALUES ('3')";
    const analysis = analyseSql(sql, new PathSchema('crm'));
    expect(analysis.statements.map((statement) => statement.literals.map((literal) => literal.value))).toEqual([['1'], [], [], [], ['3']]);
    expect(analysis.statements[1]?.sessionEffects).toEqual([{ kind: 'set-path', names: ['sales'], local: false }]);
    expect(analysis.statements[0]?.sessionEffects).toBeUndefined();
  });

  it('refuses a statement naming a relation the schema cannot tell apart', () => {
    const schema: ProtectedSchema = {
      resolveTable: (schemaName, table) => ({ schema: schemaName ?? 'crm', table, columns: ['ssn'], ...(schemaName === undefined ? { refusal: 'pgveil refused the statement: ambiguous' } : {}) }),
      isProtected: () => true,
    };
    expect(analyseSql("INSERT INTO customers VALUES ('1')", schema).rejection?.message).toBe('pgveil refused the statement: ambiguous');
    expect(analyseSql("INSERT INTO crm.customers VALUES ('1')", schema).rejection).toBeUndefined();
  });

  it('refuses PREPARE of a path-dependent name, or of a search_path change', () => {
    const schema: ProtectedSchema = {
      resolveTable: (schemaName, table) => ({ schema: schemaName ?? 'sales', table, columns: ['ssn'], ...(schemaName === undefined ? { pathDependent: true } : {}) }),
      isProtected: () => false,
    };
    expect(analyseSql("PREPARE p AS INSERT INTO customers VALUES ('1')", schema).rejection?.message).toMatch(/another search_path/);
    expect(analyseSql("PREPARE p AS INSERT INTO sales.customers VALUES ('1')", schema).rejection).toBeUndefined();
    expect(analyseSql("PREPARE q AS SELECT set_config('search_path', 'crm', false)", schema).rejection?.message).toMatch(/search_path/);
    expect(analyseSql("INSERT INTO customers VALUES ('1')", schema).rejection).toBeUndefined();
  });
});
