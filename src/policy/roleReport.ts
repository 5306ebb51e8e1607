/**
 * `pgveil policy check`'s account of each role: what it sees of each column through the proxy,
 * and what it may protect and unprotect on the API.
 */
import type { ApiGrant } from '../config/index.js';
import { ApiRights } from './apiRights.js';
import { createPolicySet } from './policySet.js';
import type { ColumnPolicy, RevealView } from './policyTypes.js';
import { resolveView } from './revealView.js';

const VIEWS: readonly RevealView[] = ['plaintext', 'mask', 'token', 'redact'];

function rolesOf(columns: readonly ColumnPolicy[], grants: readonly ApiGrant[], heldRoles: readonly string[]): string[] {
  const roles = new Set<string>(heldRoles);
  for (const column of columns) for (const role of column.reveal.keys()) roles.add(role);
  for (const grant of grants) for (const role of grant.roles) roles.add(role);
  return [...roles].sort();
}

/** `upstream`: per role, what its upstream login can do (when checked against a database). */
export function renderRoleRights(
  columns: readonly ColumnPolicy[], grants: readonly ApiGrant[], heldRoles: readonly string[], upstream?: ReadonlyMap<string, string>,
): string {
  const rights = new ApiRights(createPolicySet('(check)', columns), grants);
  const lines: string[] = ['What each role may do (proxy: what it sees of each column; API: tokenise/fpe rights — mask, redact and passthrough need none):'];
  for (const role of rolesOf(columns, grants, heldRoles)) {
    lines.push(`  ${role}`);
    const byView = new Map<RevealView, string[]>();
    for (const column of columns) {
      const view = resolveView(column, [role]);
      byView.set(view, [...(byView.get(view) ?? []), `${column.table}.${column.column}`]);
    }
    const views = VIEWS.filter((view) => byView.has(view)).map((view) => `${view}: ${(byView.get(view) ?? []).join(', ')}`);
    lines.push(`    proxy  ${views.length === 0 ? 'no protected columns' : views.join('; ')}`);
    const api = rights.rightsOf(role).map((right) => `${right.operations.join('+')} ${right.kind}/${right.scope} (${right.from})`);
    lines.push(`    API    ${api.length === 0 ? 'no tokenise/fpe rights' : api.join('; ')}`);
    const login = upstream?.get(role);
    if (login !== undefined) lines.push(`    login  ${login}`);
  }
  return lines.join('\n');
}
