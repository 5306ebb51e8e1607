/**
 * What the audit log says about reloads: which accounts a configuration reload touches, and a
 * digest of the column policies in force. Digests and names only: never a hash, a key or a policy.
 */
import { createHash } from 'node:crypto';
import type { AccountConfig } from '../config/index.js';
import type { PolicySet } from '../policy/index.js';
import { recordUnlessUnwritable, type AccountChanges, type AuditLog } from './auditLog.js';

function sameAccount(a: AccountConfig, b: AccountConfig): boolean {
  const roles = (account: AccountConfig): string => JSON.stringify([...account.roles].sort());
  return a.passwordHash === b.passwordHash && a.apiKeyHash === b.apiKeyHash && a.enabled === b.enabled && roles(a) === roles(b);
}

/** The accounts `after` adds, removes and changes relative to `before` (emails compared case-insensitively). */
export function accountChanges(before: readonly AccountConfig[], after: readonly AccountConfig[]): AccountChanges {
  const key = (account: AccountConfig): string => account.email.trim().toLowerCase();
  const old = new Map(before.map((account) => [key(account), account]));
  const next = new Map(after.map((account) => [key(account), account]));
  const added = [...next.keys()].filter((email) => !old.has(email));
  const removed = [...old.keys()].filter((email) => !next.has(email));
  const changed = [...next].filter(([email, account]) => {
    const previous = old.get(email);
    return previous !== undefined && !sameAccount(previous, account);
  }).map(([email]) => email);
  return {
    total: next.size, added: added.length, removed: removed.length, changed: changed.length,
    accounts: [...added, ...removed, ...changed].sort(),
  };
}

/**
 * sha256 of what a policy set decides (columns, methods, scopes, views, privileges), not of the
 * file's bytes: comments, layout and key order do not change it, so equal digests mean equal policies.
 */
export function policyDigest(set: PolicySet): string {
  const columns = set.columns.map((c) => [
    c.schema, c.table, c.column, c.kind, c.method, c.scope, c.noise, c.lang ?? null,
    [...c.reveal].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), c.otherRoles,
  ]).sort((a, b) => (JSON.stringify(a.slice(0, 3)) < JSON.stringify(b.slice(0, 3)) ? -1 : 1));
  const privileges = [...set.privileges].map(([role, lifted]) => [role, [...lifted].sort()]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
  return `sha256:${createHash('sha256').update(JSON.stringify({ columns, privileges })).digest('hex')}`;
}

export interface PolicyReloadAudit {
  /** A new set is in force. */
  loaded(set: PolicySet): void;
  /** A reload was refused: the set in force stays. */
  failed(): void;
}

/** Records policy.reload events, numbering the sets put in force since the start (the first is 1). */
export function policyReloadAudit(audit: AuditLog, inForce: PolicySet): PolicyReloadAudit {
  let generation = 1;
  let current = inForce;
  const record = (outcome: 'ok' | 'failed'): void => {
    recordUnlessUnwritable(audit, { event: 'policy.reload', outcome, file: current.file, generation, digest: policyDigest(current), columns: current.columns.length });
  };
  return {
    loaded(set) {
      generation += 1;
      current = set;
      record('ok');
    },
    failed() {
      record('failed');
    },
  };
}
