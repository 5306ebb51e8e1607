/**
 * The synchronous answer for texts that need no rewriting must be the write path's own answer:
 * for every text it takes, `rewriteStatement` gives an equal result; every other text it leaves
 * to `rewriteStatement`.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/index.js';
import { parsePolicies } from '../../../src/policy/index.js';
import { ColumnPolicies } from '../../../src/proxy/enforcement/catalog/columnPolicies.js';
import { DEFAULT_PATH_SETTINGS, PathSettingsTracker } from '../../../src/proxy/enforcement/catalog/searchPathSettings.js';
import { SessionRelations } from '../../../src/proxy/enforcement/catalog/sessionRelations.js';
import { ReadActions } from '../../../src/proxy/enforcement/readPath/resultPlan.js';
import { unchangedStatement } from '../../../src/proxy/enforcement/unchangedStatement.js';
import { DEFAULT_DATE_STYLE } from '../../../src/proxy/enforcement/valueCodecs/dateStyle.js';
import { analyse, rewriteStatement, type StatementContext } from '../../../src/proxy/enforcement/writePath/statementRewriter.js';
import { loadSqlParser, SqlAnalysisCache } from '../../../src/proxy/sql/index.js';
import { relationOf, snapshotOf } from './support/catalogFixtures.js';

const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
`;

let context: StatementContext;

beforeAll(async () => {
  await loadSqlParser();
  const snapshot = snapshotOf([
    relationOf(16400, 'public', 'customers', [
      { attnum: 1, name: 'id', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'ssn', typeOid: 25, typmod: -1 }, { attnum: 3, name: 'note', typeOid: 25, typmod: -1 },
    ]),
    relationOf(16500, 'public', 'accounts', [
      { attnum: 1, name: 'aid', typeOid: 23, typmod: -1 }, { attnum: 2, name: 'abalance', typeOid: 23, typmod: -1 },
    ]),
  ], { currentUser: 'app', defaultSearchPath: '"$user", public' });
  const policies = new ColumnPolicies(snapshot, parsePolicies(POLICIES, 'policies.yaml'));
  context = {
    policies,
    schema: new SessionRelations(policies, new PathSettingsTracker(DEFAULT_PATH_SETTINGS), { loginUser: 'app', defaultPath: '"$user", public' }),
    cache: new SqlAnalysisCache(),
    schemaKey: 'test',
    engine: createEngine({ masterKey: randomBytes(32) }),
    actions: new ReadActions(['app']),
    dateStyle: DEFAULT_DATE_STYLE,
  };
});

const UNCHANGED = [
  'SELECT abalance FROM accounts WHERE aid = 42;',
  'SELECT abalance FROM accounts WHERE aid = $1',
  'SELECT $2::int + $1::int',
  "UPDATE accounts SET abalance = abalance + 5 WHERE aid = 7",
  'INSERT INTO accounts (aid, abalance) VALUES ($1, $2)',
  'DELETE FROM accounts WHERE aid = 3',
  'BEGIN; SELECT 1; COMMIT',
  'SELECT id, note FROM customers WHERE note = $1',
  'SET statement_timeout = 0',
  'SHOW search_path',
];

const REWRITTEN_OR_REFUSED = [
  "INSERT INTO customers (ssn) VALUES ('123-45-6789')",
  'INSERT INTO customers (ssn) VALUES ($1)',
  "SELECT id FROM customers WHERE ssn = '123-45-6789'",
  'SELECT id FROM customers WHERE ssn = $1',
  'PREPARE p AS SELECT 1',
  'EXECUTE p',
  'COPY accounts FROM STDIN',
  'COPY accounts TO STDOUT',
  'CREATE TABLE t (id int)',
  'DO $$ BEGIN END $$',
  'SELECT id FROM customers WHERE ssn IN ($1, $2)',
  "UPDATE customers SET ssn = '123-45-6789' WHERE id = 1",
];

describe('unchangedStatement', () => {
  it.each(UNCHANGED)('answers %s as rewriteStatement does', async (sql) => {
    for (const declared of [0, 3]) {
      const analysis = analyse(sql, context);
      const unchanged = unchangedStatement(sql, analysis, context, declared);
      expect(unchanged).toBeDefined();
      expect(unchanged).toEqual(await rewriteStatement(sql, analysis, context, declared));
      expect(unchanged?.sql).toBe(sql);
    }
  });

  it.each(REWRITTEN_OR_REFUSED)('leaves %s to rewriteStatement', (sql) => {
    expect(unchangedStatement(sql, analyse(sql, context), context)).toBeUndefined();
  });
});

describe('rewriteStatement, run again', () => {
  it('answers a text it rewrote before with the same rewrite, and a text of the same analysis with its own', async () => {
    const sql = 'INSERT INTO customers (ssn, note) VALUES ($1, $2)';
    const analysis = analyse(sql, context);
    const first = await rewriteStatement(sql, analysis, context, 2);
    expect(rewriteStatement(sql, analysis, context, 2)).toBe(first);
    // Texts of one literal shape may share an analysis object: the text decides, never the kept rewrite.
    const other = 'INSERT INTO customers (ssn, note)  VALUES ($1, $2)';
    expect((await rewriteStatement(other, analysis, context, 2)).sql).toBe(other);
    expect(rewriteStatement(other, analysis, context, 3)).not.toBe(rewriteStatement(other, analysis, context, 2)); // another declared count
  });

  it('keeps one rewrite per session context, so that sessions taking turns each find theirs', async () => {
    const sql = 'INSERT INTO customers (ssn, note) VALUES ($1, $2)';
    const analysis = analyse(sql, context);
    const other: StatementContext = { ...context };
    const mine = await rewriteStatement(sql, analysis, context, 2);
    const theirs = await rewriteStatement(sql, analysis, other, 2);
    expect(rewriteStatement(sql, analysis, context, 2)).toBe(mine);
    expect(rewriteStatement(sql, analysis, other, 2)).toBe(theirs);
  });

  it('does not keep a rewrite that protected constants', async () => {
    const sql = "INSERT INTO customers (ssn) VALUES ('123-45-6789')";
    const analysis = analyse(sql, context);
    const first = await rewriteStatement(sql, analysis, context);
    expect(first.sql).not.toContain('123-45-6789');
    expect(rewriteStatement(sql, analysis, context)).toBeInstanceOf(Promise);
  });
});
