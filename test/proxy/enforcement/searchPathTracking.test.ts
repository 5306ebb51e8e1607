/**
 * Following a session's search_path without a database: transaction semantics of SET / SET
 * LOCAL / savepoints, projection of unconfirmed effects across failure domains, startup
 * parameters, and name resolution on a path (temp schema, $user, USAGE, unknown path).
 */
import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../../src/policy/index.js';
import { ColumnPolicies } from '../../../src/proxy/enforcement/catalog/columnPolicies.js';
import { candidatesOnPath, pathScope } from '../../../src/proxy/enforcement/catalog/searchPathResolution.js';
import { DEFAULT_PATH_SETTINGS, PathSettingsTracker, type PathSettings } from '../../../src/proxy/enforcement/catalog/searchPathSettings.js';
import { resolveOnPath } from '../../../src/proxy/enforcement/catalog/resolveOnPath.js';
import { SessionSearchPath } from '../../../src/proxy/enforcement/catalog/sessionSearchPath.js';
import { initialPathSettings, splitStartupOptions } from '../../../src/proxy/enforcement/catalog/startupSearchPath.js';
import type { SessionEffect } from '../../../src/proxy/sql/index.js';
import { relationOf, snapshotOf } from './support/catalogFixtures.js';

const set = (...names: string[]): SessionEffect => ({ kind: 'set-path', names, local: false });
const setLocal = (...names: string[]): SessionEffect => ({ kind: 'set-path', names, local: true });
const tx = (action: 'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollback-to', savepoint?: string): SessionEffect =>
  (savepoint === undefined ? { kind: 'transaction', action } : { kind: 'transaction', action, savepoint });

function pathOf(settings: PathSettings): readonly string[] | string {
  return settings.path.kind === 'names' ? settings.path.names : settings.path.kind;
}

describe('PathSettingsTracker', () => {
  it('keeps a SET of an implicit transaction that commits, undoes it when the transaction failed', () => {
    const tracker = new PathSettingsTracker(DEFAULT_PATH_SETTINGS);
    tracker.apply(set('crm'));
    tracker.readyForQuery('I');
    expect(pathOf(tracker.settings)).toEqual(['crm']);
    tracker.apply(set('sales'));
    tracker.failed(); // a later statement of the same Query failed
    tracker.readyForQuery('I');
    expect(pathOf(tracker.settings)).toEqual(['crm']);
  });

  it('undoes a SET inside a block that rolls back, or whose COMMIT answers ROLLBACK', () => {
    const tracker = new PathSettingsTracker(DEFAULT_PATH_SETTINGS);
    tracker.applyAll([tx('begin'), set('crm')]);
    tracker.readyForQuery('T');
    expect(pathOf(tracker.settings)).toEqual(['crm']);
    tracker.apply(tx('rollback'));
    tracker.readyForQuery('I');
    expect(pathOf(tracker.settings)).toBe('default');
    tracker.applyAll([tx('begin'), set('crm')]);
    tracker.failed();
    tracker.readyForQuery('E');
    tracker.apply({ kind: 'transaction', action: 'commit', chain: false }, 'ROLLBACK');
    tracker.readyForQuery('I');
    expect(pathOf(tracker.settings)).toBe('default');
  });

  it('ends SET LOCAL with the transaction; a plain SET after it stays', () => {
    const tracker = new PathSettingsTracker(DEFAULT_PATH_SETTINGS);
    tracker.applyAll([tx('begin'), set('crm'), setLocal('sales')]);
    expect(pathOf(tracker.settings)).toEqual(['sales']);
    tracker.apply(tx('commit'), 'COMMIT');
    expect(pathOf(tracker.settings)).toEqual(['crm']);
    tracker.applyAll([tx('begin'), setLocal('sales'), set('public')]);
    tracker.apply(tx('commit'), 'COMMIT');
    expect(pathOf(tracker.settings)).toEqual(['public']);
  });

  it('restores what a savepoint saw on ROLLBACK TO, keeps it on RELEASE', () => {
    const tracker = new PathSettingsTracker(DEFAULT_PATH_SETTINGS);
    tracker.applyAll([tx('begin'), set('crm'), tx('savepoint', 's'), set('sales')]);
    tracker.failed();
    tracker.apply(tx('rollback-to', 's'));
    expect(pathOf(tracker.settings)).toEqual(['crm']);
    tracker.applyAll([tx('savepoint', 't'), setLocal('sales'), tx('release', 't')]);
    expect(pathOf(tracker.settings)).toEqual(['sales']);
    tracker.apply(tx('commit'), 'COMMIT');
    expect(pathOf(tracker.settings)).toEqual(['crm']);
  });

  it('resets to the startup value, and says when any transaction end gives the same settings', () => {
    const initial: PathSettings = { ...DEFAULT_PATH_SETTINGS, path: { kind: 'names', names: ['crm'] } };
    const tracker = new PathSettingsTracker(initial);
    tracker.applyAll([set('sales'), { kind: 'set-role', role: 'bob', local: false }]);
    expect(tracker.settled()).toBe(false);
    tracker.readyForQuery('I');
    expect(tracker.settled()).toBe(true);
    tracker.apply({ kind: 'reset-path', local: false });
    expect(pathOf(tracker.settings)).toEqual(['crm']);
    expect(tracker.settings.role).toEqual({ kind: 'named', name: 'bob' });
    tracker.apply({ kind: 'discard-all' });
    expect(tracker.settings.role).toBeNull();
    tracker.apply({ kind: 'unknown' });
    expect(pathOf(tracker.settings)).toBe('unknown');
  });
});

describe('SessionSearchPath', () => {
  it('projects unconfirmed effects within one failure domain, not across an unanswered one', () => {
    const session = new SessionSearchPath(DEFAULT_PATH_SETTINGS);
    const first = session.queryDomain();
    const pending = session.sent(first, [set('crm')]);
    // Later statements of the same Query run only if the SET succeeded.
    expect(pathOf(session.trackerFor(first).settings)).toEqual(['crm']);
    // A pipelined Query after it: the first one may still roll back.
    const second = session.queryDomain();
    expect(pathOf(session.trackerFor(second).settings)).toBe('unknown');
    session.completed(pending, 'SET');
    expect(pathOf(session.trackerFor(second).settings)).toBe('unknown');
    session.readyForQuery('I', first);
    expect(pathOf(session.trackerFor(second).settings)).toEqual(['crm']);
  });

  it('does not keep effects of statements skipped after an error', () => {
    const session = new SessionSearchPath(DEFAULT_PATH_SETTINGS);
    const domain = session.messageDomain();
    session.sent(domain, [set('crm')]);
    session.failed();
    session.readyForQuery('I', session.syncDomain());
    expect(pathOf(session.trackerFor(session.messageDomain()).settings)).toBe('default');
  });

  it('takes the server’s own report (PostgreSQL 18+) at ReadyForQuery', () => {
    const session = new SessionSearchPath(DEFAULT_PATH_SETTINGS, '"$user", public');
    const domain = session.queryDomain();
    session.completed(session.sent(domain, [{ kind: 'unknown' }]), 'DO');
    session.reported('crm, public');
    session.readyForQuery('I', domain);
    expect(pathOf(session.settings)).toEqual(['crm', 'public']);
  });
});

describe('initialPathSettings', () => {
  it('reads search_path and role from startup parameters and options', () => {
    expect(pathOf(initialPathSettings(new Map([['search_path', 'crm, public']]), undefined))).toEqual(['crm', 'public']);
    expect(pathOf(initialPathSettings(new Map([['options', '-c search_path=crm,\\ public -c statement_timeout=5']]), undefined))).toEqual(['crm', 'public']);
    expect(pathOf(initialPathSettings(new Map([['options', '--search-path=sales']]), undefined))).toEqual(['sales']);
    expect(pathOf(initialPathSettings(new Map([['options', '-c search_path=crm'], ['search_path', 'sales']]), undefined))).toEqual(['sales']);
    expect(initialPathSettings(new Map([['options', '-c role=bob']]), undefined).role).toEqual({ kind: 'named', name: 'bob' });
    expect(pathOf(initialPathSettings(new Map([['options', '-ec search_path=crm']]), undefined))).toBe('unknown');
    expect(pathOf(initialPathSettings(new Map(), '"$user", crm'))).toEqual(['$user', 'crm']);
    expect(initialPathSettings(undefined, undefined)).toEqual(DEFAULT_PATH_SETTINGS);
    expect(splitStartupOptions('  -c  a=b\\ c\\\\ d ')).toEqual(['-c', 'a=b c\\', 'd']);
  });
});



const POLICIES = parsePolicies(`
columns:
  crm.customers.ssn: { kind: ssn, method: fpe, scope: s }
  vault.customers.ssn: { kind: ssn, method: fpe, scope: v }
`, 'policies.yaml');

describe('resolution on a search path', () => {
  const snapshot = snapshotOf([
    relationOf(1, 'public', 'customers'), relationOf(2, 'crm', 'customers'), relationOf(3, 'app', 'customers'),
    relationOf(4, 'pg_temp_3', 'customers'), relationOf(5, 'sales', 'orders'), relationOf(6, 'locked', 'orders'),
  ], { schemasWithoutUsage: new Set(['locked']) });
  const defaults = { loginUser: 'app', defaultPath: '"$user", public' };
  const scope = (path: PathSettings['path'], role: PathSettings['role'] = null): ReturnType<typeof pathScope> =>
    pathScope({ ...DEFAULT_PATH_SETTINGS, path, role }, defaults, 'app');

  it('searches the temp schema first unless listed, $user as the current user, and skips schemas without USAGE', () => {
    expect(scope({ kind: 'default' }).entries).toEqual([{ kind: 'temp' }, { kind: 'schema', name: 'app' }, { kind: 'schema', name: 'public' }]);
    expect(scope({ kind: 'names', names: ['public', 'pg_temp'] }).entries).toEqual([{ kind: 'schema', name: 'public' }, { kind: 'temp' }]);
    const onDefault = candidatesOnPath('customers', scope({ kind: 'default' }), snapshot);
    expect(onDefault.certain?.oid).toBe(3);
    expect(onDefault.possible.map((item) => item.oid)).toEqual([4, 3]); // the temp table may be this session's
    expect(candidatesOnPath('orders', scope({ kind: 'names', names: ['locked', 'sales'] }), snapshot).certain?.oid).toBe(5);
  });

  it('cannot vouch for $user or privileges of another role: every listed match is a candidate', () => {
    const asBob = scope({ kind: 'default' }, { kind: 'named', name: 'bob' });
    expect(asBob.privilegesKnown).toBe(false);
    expect(candidatesOnPath('orders', pathScope({ ...DEFAULT_PATH_SETTINGS, path: { kind: 'names', names: ['locked', 'sales'] }, role: { kind: 'named', name: 'bob' } }, defaults, 'app'), snapshot).possible.map((item) => item.oid)).toEqual([6, 5]);
    const unknownUser = scope({ kind: 'default' }, { kind: 'unknown' });
    expect(unknownUser.entries?.[1]).toEqual({ kind: 'any-user' });
  });

  it('errs on the protected side, and refuses what it cannot tell apart', () => {
    const policies = new ColumnPolicies(snapshot, POLICIES);
    // crm is not on the path; the temp table (maybe this session's) has no policies.
    expect(resolveOnPath(policies, 'customers', scope({ kind: 'names', names: ['public'] }))?.schema).toBe('public');
    const withoutTemp = new ColumnPolicies(snapshotOf([relationOf(1, 'public', 'customers'), relationOf(2, 'crm', 'customers')]), POLICIES);
    expect(resolveOnPath(withoutTemp, 'customers', scope({ kind: 'names', names: ['public'] }))).toMatchObject({ schema: 'public', pathDependent: true });
    expect(resolveOnPath(withoutTemp, 'customers', scope({ kind: 'names', names: ['crm', 'public'] }))?.schema).toBe('crm');
    expect(resolveOnPath(withoutTemp, 'customers', scope({ kind: 'unknown' }))?.schema).toBe('crm');
    const twoProtected = new ColumnPolicies(snapshotOf([relationOf(1, 'vault', 'customers'), relationOf(2, 'crm', 'customers')]), POLICIES);
    expect(resolveOnPath(twoProtected, 'customers', scope({ kind: 'names', names: ['vault'] }))?.schema).toBe('vault');
    expect(resolveOnPath(twoProtected, 'customers', scope({ kind: 'unknown' }))?.refusal).toMatch(/may denote vault\.customers, crm\.customers|may denote crm\.customers, vault\.customers/);
  });
});
