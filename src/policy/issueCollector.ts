import type { Document, LineCounter } from 'yaml';
import { ConfigReader, type KeyPath } from '../config/index.js';
import type { IssueSeverity, PolicyIssue } from './policyError.js';

/**
 * Key paths as the user reads them: a segment holding a dot or a quote is shown in double
 * quotes, so `columns."public.customers.ssn".method` names one key, not four.
 */
export function policyPathText(path: KeyPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') {
      out += `[${seg}]`;
      continue;
    }
    const text = /^[A-Za-z0-9_-]+$/.test(seg) ? seg : JSON.stringify(seg);
    out += out === '' ? text : `.${text}`;
  }
  return out;
}

/** A value quoted for a message: policy files hold no secrets, but keep it short. */
export function quoteValue(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  const cut = [...text].length > 40 ? `${[...text].slice(0, 40).join('')}…` : text;
  return JSON.stringify(cut);
}

export interface IssueOptions {
  /** Point at the key rather than its value (unknown keys, malformed column names). */
  atKey?: boolean;
  severity?: IssueSeverity;
}

/**
 * Collects the issues of one policy file with file:line:column, reusing the configuration
 * loader's YAML locator so both files report mistakes the same way.
 */
export class IssueCollector {
  readonly issues: PolicyIssue[] = [];
  private readonly locator: ConfigReader | undefined;

  constructor(readonly file: string, doc?: Document, lineCounter?: LineCounter) {
    this.locator = doc && lineCounter ? new ConfigReader({ file, baseDir: '.', doc, lineCounter }) : undefined;
  }

  /** Line and column of the value (or key) at `path`, or of its nearest existing parent. */
  locate(path: KeyPath, atKey = false): { line?: number; column?: number } {
    return this.locator?.locate(path, atKey) ?? {};
  }

  add(path: KeyPath, message: string, opts: IssueOptions = {}): void {
    this.issues.push({
      file: this.file,
      ...this.locate(path, opts.atKey ?? false),
      path: policyPathText(path),
      message,
      severity: opts.severity ?? 'error',
    });
  }

  warn(path: KeyPath, message: string, opts: Omit<IssueOptions, 'severity'> = {}): void {
    this.add(path, message, { ...opts, severity: 'warning' });
  }

  get hasErrors(): boolean {
    return this.issues.some((i) => i.severity === 'error');
  }
}
