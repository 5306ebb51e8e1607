import { formatPolicyIssue, type PolicyIssue } from './policyError.js';
import { rolesNamed } from './policySet.js';
import type { ColumnPolicy } from './policyTypes.js';
import { formatColumnName } from './qualifiedName.js';
import { resolveView } from './revealView.js';

export const OTHER_ROLES_LABEL = '(other roles)';

function renderTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => { widths[i] = Math.max(widths[i] ?? 0, [...cell].length); });
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length))).join('  '))
    .join('\n');
}

/**
 * One line per column: kind, method, scope and what each role sees (the effective view: a role
 * left at `token` on a passthrough column sees plaintext, and the table says so).
 */
export function renderPolicyTable(columns: readonly ColumnPolicy[], columnTypes?: ReadonlyMap<string, string>): string {
  if (columns.length === 0) return 'no column policies';
  const roles = rolesNamed(columns);
  const header = ['column', ...(columnTypes ? ['type'] : []), 'kind', 'method', 'scope', ...roles, OTHER_ROLES_LABEL];
  const rows = columns.map((c) => [
    formatColumnName(c),
    ...(columnTypes ? [columnTypes.get(c.key) ?? '?'] : []),
    c.lang ? `${c.kind} (lang ${c.lang})` : c.kind,
    c.noise > 0 ? `${c.method} (noise ${c.noise})` : c.method,
    c.scope,
    ...roles.map((role) => resolveView(c, [role])),
    resolveView(c, []),
  ]);
  return renderTable([header, ...rows]);
}

/** "2 errors:" followed by the issues, one a line, indented. */
export function renderIssues(title: 'error' | 'warning', issues: readonly PolicyIssue[]): string {
  if (issues.length === 0) return '';
  const heading = `${issues.length} ${title}${issues.length === 1 ? '' : 's'}:`;
  return [heading, ...issues.map((i) => `  ${formatPolicyIssue(i)}`)].join('\n');
}
