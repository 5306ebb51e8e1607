import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { readAccountsSection } from './accountsSection.js';
import { readApiSection, readAuditSection, readLoggingSection } from './apiSection.js';
import { ConfigError, type ConfigIssue } from './configError.js';
import { ConfigReader } from './configReader.js';
import type { AccountConfig, PgveilConfig, UpstreamLoginConfig } from './configTypes.js';
import { applyEnvOverrides, type Env } from './envOverrides.js';
import { readKeysSection } from './keysSection.js';
import { readProxySection } from './proxySection.js';

const MAX_SYNTAX_ERRORS = 5;
const TOP_LEVEL_KEYS = ['api', 'keys', 'accounts', 'logging', 'audit', 'proxy', 'policies'] as const;

export interface LoadConfigOptions {
  /** Environment for overrides; process.env by default. */
  env?: Env;
}

/**
 * Parses and validates configuration text. `file` is the name shown in messages; relative paths
 * in the file are resolved against its folder. Throws ConfigError listing every mistake.
 */
export function parseConfig(text: string, file: string, opts: LoadConfigOptions = {}): PgveilConfig {
  const env = opts.env ?? process.env;
  const lineCounter = new LineCounter();
  // prettyErrors off: the pretty form quotes the source line, which may hold a password.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // The first few are enough (one mistake often cascades), and the parser's quotes of the
    // source are cut off: they may hold a password.
    throw new ConfigError(doc.errors.slice(0, MAX_SYNTAX_ERRORS).map((e) => {
      const pos = lineCounter.linePos(e.pos[0]);
      const message = (e.message.split('\n')[0] ?? '').replace(/:\s*".*$/, '');
      return { file, line: pos.line, column: pos.col, path: '', message: `YAML syntax: ${message}` };
    }));
  }
  const js: unknown = doc.toJS({ maxAliasCount: 100 });
  const reader0 = new ConfigReader({ file, baseDir: dirname(resolve(file)), doc, lineCounter });
  const root = js === null || js === undefined ? {} : reader0.map(js, [], TOP_LEVEL_KEYS);
  if (!root) throw new ConfigError(reader0.issues);

  const envSources = applyEnvOverrides(root, env);
  const r = new ConfigReader({ file, baseDir: dirname(resolve(file)), doc, lineCounter, envSources });
  r.issues.push(...reader0.issues);
  const config: PgveilConfig = {
    file: resolve(file),
    api: readApiSection(r, root['api']),
    keys: readKeysSection(r, root['keys']),
    accounts: readAccountsSection(r, root['accounts']),
    logging: readLoggingSection(r, root['logging']),
    audit: readAuditSection(r, root['audit']),
  };
  const proxy = readProxySection(r, root['proxy']);
  if (proxy) {
    config.proxy = proxy;
    checkUpstreamLoginsOfAccounts(r, config.accounts, proxy.upstreamRoles);
  }
  const policies = r.path(root, 'policies', []);
  if (policies !== undefined) config.policies = policies;
  if (r.issues.length > 0) throw new ConfigError(inFileOrder(r.issues));
  return config;
}

/**
 * Each account's sessions log in upstream as one role: an account whose roles map to different
 * upstream logins is ambiguous (give it one role that maps, or map its roles alike).
 */
export function checkUpstreamLoginsOfAccounts(r: ConfigReader, accounts: readonly AccountConfig[], upstreamRoles: Record<string, UpstreamLoginConfig>): void {
  accounts.forEach((account, i) => {
    const users = new Set(account.roles.filter((role) => role in upstreamRoles).map((role) => upstreamRoles[role]?.user));
    if (users.size > 1) {
      r.issue(['accounts', i, 'roles'], `the roles of ${account.email} map to different upstream logins in proxy.upstreamRoles (${[...users].join(', ')}); `
        + 'an account logs in upstream as one role: map its roles to the same login, or give it one mapped role');
    }
  });
}

/** File issues by position, then those that came from the environment. */
function inFileOrder(issues: ConfigIssue[]): ConfigIssue[] {
  const pos = (i: ConfigIssue) => (i.line === undefined ? Number.MAX_SAFE_INTEGER : i.line * 10_000 + (i.column ?? 0));
  return [...issues].sort((a, b) => pos(a) - pos(b));
}

/** Reads and validates a configuration file. */
export async function loadConfig(file: string, opts: LoadConfigOptions = {}): Promise<PgveilConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError([{ file, path: '', message: `cannot read the configuration file (${code})` }]);
  }
  return parseConfig(text, file, opts);
}
