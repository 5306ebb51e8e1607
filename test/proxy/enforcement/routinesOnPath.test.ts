/**
 * How a function or operator name resolves to the volatility PostgreSQL records for it: any
 * overload in pg_catalog or on the session's search_path (never the temporary schema), every
 * schema when the path is unknown, and an unknown name as volatile (and a miss).
 */
import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../../src/policy/index.js';
import { ColumnPolicies } from '../../../src/proxy/enforcement/catalog/columnPolicies.js';
import { routineOnPath } from '../../../src/proxy/enforcement/catalog/routinesOnPath.js';
import type { RoutineNames, RoutineVolatility } from '../../../src/proxy/enforcement/catalog/routineVolatility.js';
import { UNKNOWN_SCOPE, type PathScope } from '../../../src/proxy/enforcement/catalog/searchPathResolution.js';
import { snapshotOf } from './support/catalogFixtures.js';

function names(known: readonly string[], volatile: readonly string[] = []): RoutineNames {
  return { known: new Set([...known, ...volatile]), volatile: new Set(volatile) };
}

const ROUTINES: RoutineVolatility = {
  functions: new Map([
    ['pg_catalog', names(['lower', 'count'], ['nextval', 'setseed'])],
    ['public', names(['only_digits'])],
    ['audit', names([], ['lower', 'remember'])],
    ['pg_temp_3', names([], ['only_digits'])],
  ]),
  operators: new Map([
    ['pg_catalog', names(['=', '~~', '||'])],
    ['audit', names([], ['###'])],
  ]),
};

const snapshot = snapshotOf([], { routines: ROUTINES });
const path = (...schemas: string[]): PathScope => ({
  entries: [{ kind: 'temp' }, ...schemas.map((name) => ({ kind: 'schema' as const, name }))], privilegesKnown: true,
});

describe('routineOnPath', () => {
  it('looks in pg_catalog and the schemas on the path, not in the temporary schema', () => {
    expect(routineOnPath(snapshot, 'function', 'lower', undefined, path('public'))).toBe('not volatile');
    expect(routineOnPath(snapshot, 'function', 'only_digits', undefined, path('public'))).toBe('not volatile');
    expect(routineOnPath(snapshot, 'function', 'nextval', undefined, path('public'))).toBe('volatile');
    expect(routineOnPath(snapshot, 'function', 'remember', undefined, path('public'))).toBe('unknown');
  });

  it('counts a volatile overload anywhere on the path', () => {
    expect(routineOnPath(snapshot, 'function', 'lower', undefined, path('public', 'audit'))).toBe('volatile');
    expect(routineOnPath(snapshot, 'operator', '###', undefined, path('audit'))).toBe('volatile');
    expect(routineOnPath(snapshot, 'operator', '=', undefined, path('audit'))).toBe('not volatile');
  });

  it('looks everywhere when the path is unknown or names a user pgveil cannot name', () => {
    expect(routineOnPath(snapshot, 'function', 'lower', undefined, UNKNOWN_SCOPE)).toBe('volatile');
    expect(routineOnPath(snapshot, 'function', 'lower', undefined, { entries: [{ kind: 'any-user' }], privilegesKnown: false })).toBe('volatile');
  });

  it('looks only in the schema a qualified name gives (pg_temp: any temporary schema)', () => {
    expect(routineOnPath(snapshot, 'function', 'lower', 'pg_catalog', UNKNOWN_SCOPE)).toBe('not volatile');
    expect(routineOnPath(snapshot, 'function', 'lower', 'audit', path('public'))).toBe('volatile');
    expect(routineOnPath(snapshot, 'function', 'only_digits', 'pg_temp', path('public'))).toBe('volatile');
    expect(routineOnPath(snapshot, 'operator', '###', 'nowhere', path('public'))).toBe('unknown');
  });

  it('knows nothing without a reading of the routines', () => {
    expect(routineOnPath(snapshotOf([]), 'function', 'lower', 'pg_catalog', path())).toBe('unknown');
  });
});

describe('ColumnPolicies', () => {
  it('takes an unknown name as volatile and records it as a miss', () => {
    const policies = new ColumnPolicies(snapshot, parsePolicies('columns: {}\n', 'policies.yaml'));
    expect(policies.functionIsVolatile('lower', 'pg_catalog')).toBe(false);
    expect(policies.operatorIsVolatile('~~')).toBe(false);
    expect(policies.missed.size).toBe(0);
    expect(policies.functionIsVolatile('no_such_function')).toBe(true);
    expect(policies.missed.size).toBe(1);
  });
});
