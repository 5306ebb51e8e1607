import { formatIssue, type ConfigIssue } from '../config/index.js';

export type IssueSeverity = 'error' | 'warning';

/**
 * One finding about the policy file, located like configuration mistakes: file, line, column,
 * key path (`columns."public.customers.ssn".method`), what is wrong and what to do instead.
 * Errors refuse the file; warnings are reported and the file is still used.
 */
export interface PolicyIssue extends ConfigIssue {
  severity: IssueSeverity;
}

/** `file:line:column: key.path: message`, as compilers print it. */
export function formatPolicyIssue(issue: PolicyIssue): string {
  return formatIssue(issue);
}

export function errorsOf(issues: readonly PolicyIssue[]): PolicyIssue[] {
  return issues.filter((i) => i.severity === 'error');
}

export function warningsOf(issues: readonly PolicyIssue[]): PolicyIssue[] {
  return issues.filter((i) => i.severity === 'warning');
}

/** File issues by position (line, then column); issues without a line last, in their order. */
export function inFileOrder(issues: readonly PolicyIssue[]): PolicyIssue[] {
  const pos = (i: PolicyIssue) => (i.line === undefined ? Number.MAX_SAFE_INTEGER : i.line * 100_000 + (i.column ?? 0));
  return [...issues].sort((a, b) => pos(a) - pos(b));
}

/** A policy file that cannot be used; its message lists every error, one a line. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  /** The errors (at least one), in file order. */
  readonly issues: readonly PolicyIssue[];
  /** Warnings found along the way, for the report. */
  readonly warnings: readonly PolicyIssue[];

  constructor(issues: readonly PolicyIssue[]) {
    const ordered = inFileOrder(issues);
    const errors = errorsOf(ordered);
    super(errors.map(formatPolicyIssue).join('\n'));
    this.issues = errors;
    this.warnings = warningsOf(ordered);
  }
}
