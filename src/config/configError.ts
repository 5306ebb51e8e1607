/** One mistake in the configuration, located as precisely as the source allows. */
export interface ConfigIssue {
  /** The configuration file, as the user named it. */
  file: string;
  /** 1-based, when the mistake is inside the file. */
  line?: number;
  column?: number;
  /** Dotted key path, e.g. `proxy.tls.mode` or `accounts[2].email`. */
  path: string;
  message: string;
  /** Where the value came from when not from the file, e.g. `environment variable PGVEIL_API_PORT`. */
  source?: string;
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line !== undefined
    ? `${issue.file}:${issue.line}:${issue.column ?? 1}`
    : issue.file;
  const from = issue.source !== undefined ? ` (from ${issue.source})` : '';
  const key = issue.path === '' ? '' : `${issue.path}: `;
  return `${where}: ${key}${issue.message}${from}`;
}

/** Thrown by loadConfig; its message lists every issue, one a line. Never contains secrets. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.issues = issues;
  }
}
