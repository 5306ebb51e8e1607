/**
 * One scanner for protected table names in text: the analyser's fallback scan
 * (findProtectedTableMention), ColumnPolicies.mentionsProtectedTable (session settings checks) and
 * the COPY (query) TO STDOUT check must recognise the same spellings — quoted, schema-qualified,
 * any case, with comments or whitespace around the dot — and fail closed alike.
 */
import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../../src/policy/index.js';
import { ColumnPolicies } from '../../../src/proxy/enforcement/catalog/columnPolicies.js';
import { PolicyRefusal } from '../../../src/proxy/enforcement/policyRefusal.js';
import { ReadActions } from '../../../src/proxy/enforcement/readPath/resultPlan.js';
import { copyStreamOf } from '../../../src/proxy/enforcement/writePath/copyTargets.js';
import { findProtectedTableMention } from '../../../src/proxy/sql/protectedNameScan.js';
import { RelationLookup } from '../../../src/proxy/sql/relationLookup.js';
import type { ProtectedSchema } from '../../../src/proxy/sql/index.js';
import { relationOf, snapshotOf } from './support/catalogFixtures.js';
import { useSqlParser } from '../../sql/sqlTestHelpers.js';

useSqlParser();



const POLICIES = parsePolicies(`
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
  crm."Client Files".ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
`, 'policies.yaml');

const policies = new ColumnPolicies(
  snapshotOf([relationOf(1, 'public', 'customers'), relationOf(2, 'crm', 'Client Files'), relationOf(3, 'public', 'orders')]),
  POLICIES,
);

/** The analyser's scan, both with the listed names and asking the schema word by word. */
function analyserScan(text: string, schema: ProtectedSchema = policies): boolean {
  return findProtectedTableMention(text, schema, new RelationLookup(schema)) !== undefined;
}

/** The same schema without protectedTableNames: the scan resolves each word instead. */
const unlisted: ProtectedSchema = {
  resolveTable: (schemaName, table) => policies.resolveTable(schemaName, table),
  isProtected: (ref) => policies.isProtected(ref),
};

function copyRefused(text: string): boolean {
  try {
    copyStreamOf(text, undefined, policies, new ReadActions(['app']));
    return false;
  } catch (error) {
    if (error instanceof PolicyRefusal) return true;
    throw error;
  }
}

const NAMING = [
  'SELECT * FROM customers',
  'SELECT * FROM "customers"',
  'SELECT * FROM CUSTOMERS',
  'SELECT * FROM public."customers"',
  'SELECT * FROM PUBLIC.CUSTOMERS',
  'SELECT * FROM public /* c */ . /* d */ customers',
  'SELECT * FROM public\n . -- line\n "customers"',
  'SELECT * FROM crm."Client Files"',
  'SELECT * FROM "crm" . "Client Files"',
  'SELECT * FROM crm/**/./**/"Client Files"',
  // A double quote in a string literal must not hide the table name that follows it.
  `SELECT '"' AS q, ssn FROM customers, (SELECT '"') AS t`,
  `SELECT '/*' AS q, ssn FROM customers, (SELECT '*/') AS t`,
];

const NOT_NAMING = [
  'SELECT * FROM orders',
  'SELECT * FROM public.orders',
  'SELECT * FROM "Client"',
];

describe('protected table names in text', () => {
  it.each(NAMING)('every check recognises %s', (text) => {
    expect(analyserScan(text)).toBe(true);
    expect(analyserScan(text, unlisted)).toBe(true);
    expect(policies.mentionsProtectedTable(text)).toBe(true);
    expect(copyRefused(`COPY (${text}) TO STDOUT`)).toBe(true);
  });

  it.each(NOT_NAMING)('no check reports %s', (text) => {
    expect(analyserScan(text)).toBe(false);
    expect(analyserScan(text, unlisted)).toBe(false);
    expect(policies.mentionsProtectedTable(text)).toBe(false);
    expect(copyRefused(`COPY (${text}) TO STDOUT`)).toBe(false);
  });

  it('scans thousands of comments, closed or not, in linear time (no regex backtracking)', () => {
    // Each gap between words is matched against the schema-dot-table pattern; with a comment that
    // could run past its own end, 30 comments took seconds and 40 stalled the process.
    const text = `DO $$ BEGIN PERFORM x ${'/**/ '.repeat(5000)}, y FROM customers; END $$`;
    const began = performance.now();
    expect(analyserScan(text, unlisted)).toBe(true);
    expect(policies.mentionsProtectedTable(text)).toBe(true);
    // An unterminated comment ends the text: each `/*` once rescanned all that followed it.
    const unterminated = `SELECT ssn FROM customers WHERE x ${'x /*'.repeat(50_000)}`;
    expect(policies.mentionsProtectedTable(unterminated)).toBe(true);
    expect(performance.now() - began).toBeLessThan(5_000);
  });

  it('names the table in the COPY (query) refusal, no value', () => {
    expect(() => copyStreamOf(`COPY (SELECT * FROM crm."Client Files" WHERE ssn = '123-45-6789') TO STDOUT`, undefined, policies, new ReadActions(['app'])))
      .toThrow(/COPY \(query\) TO STDOUT reads table Client Files/);
    expect(() => copyStreamOf(`COPY (SELECT * FROM crm."Client Files" WHERE ssn = '123-45-6789') TO STDOUT`, undefined, policies, new ReadActions(['app'])))
      .not.toThrow(/123-45-6789/);
  });
});
