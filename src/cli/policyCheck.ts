import { isAbsolute, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, type PgveilConfig } from '../config/index.js';
import {
  connectCatalog, checkAgainstCatalog, policyPathText, errorsOf, inFileOrder, warningsOf, readPolicyFile,
  renderIssues, renderPolicyTable, renderRoleRights, findCodeOnProtectedTables, renderCodeFindings,
  createPolicySet, readUpstreamRoleFacts, upstreamPrivilegeReport, type CatalogConnection,
  type CatalogTarget, type PolicyIssue, type CatalogQuery, type PolicySet, type AccountLogin,
  type PrivilegeReport, type ColumnPolicy,
} from '../policy/index.js';
import { UsageError, type CliIo } from './cliIo.js';

export const POLICY_CHECK_USAGE =
  'pgveil policy check --config config/pgveil.yaml [--policies FILE] [--database-url URL | --database NAME | --no-database]';

/** A path under the current folder is shown relative to it, as the user would type it. */
function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

function catalogTarget(values: { 'database-url'?: string; database?: string }, config: PgveilConfig | undefined): CatalogTarget {
  if (values['database-url'] !== undefined) return { url: values['database-url'] };
  const upstream = config?.proxy?.upstream;
  if (!upstream) {
    throw new UsageError('no database to check against: give --database-url, or a --config with a proxy.upstream section '
      + '(--no-database runs the file checks only)');
  }
  const database = values.database ?? upstream.database;
  if (database === undefined) {
    throw new UsageError('proxy.upstream.database is not set (the proxy uses the database each client asks for): give --database NAME');
  }
  return { upstream, database };
}

interface UpstreamDescription {
  /** Per pgveil role: its upstream login and what that login can do. */
  readonly byRole: ReadonlyMap<string, string>;
  readonly report: PrivilegeReport;
}

/** What each role's upstream login can do, and what `pgveil serve` would refuse of it. */
async function describeUpstreamLogins(query: CatalogQuery, set: PolicySet, config: PgveilConfig): Promise<UpstreamDescription> {
  const proxy = config.proxy as NonNullable<PgveilConfig['proxy']>;
  const loginOf = (roles: readonly string[]): { user: string; setting: string } => {
    const mapped = roles.find((role) => proxy.upstreamRoles[role] !== undefined);
    return mapped === undefined
      ? { user: proxy.upstream.user, setting: 'proxy.upstream.user' }
      : { user: (proxy.upstreamRoles[mapped] as { user: string }).user, setting: `proxy.upstreamRoles.${mapped}` };
  };
  const roles = [...new Set([...set.roles, ...config.accounts.flatMap((account) => account.roles), ...Object.keys(proxy.upstreamRoles)])];
  const logins: AccountLogin[] = config.accounts.filter((account) => account.enabled)
    .map((account) => ({ email: account.email, roles: account.roles, ...loginOf(account.roles) }));
  const users = [...new Set([...roles.map((role) => loginOf([role]).user), ...logins.map((login) => login.user)])];
  const facts = await readUpstreamRoleFacts(query, users, set);
  const byRole = new Map<string, string>();
  for (const role of roles) {
    const { user, setting } = loginOf([role]);
    const fact = facts.get(user);
    const can = fact === undefined || !fact.exists ? ['does not exist'] : [
      fact.superuser ? 'SUPERUSER' : 'not a superuser',
      ...(fact.bypassRls ? ['BYPASSRLS'] : []),
      ...fact.serverRoles,
      ...(fact.readsAllStats ? ['pg_read_all_stats'] : []),
      ...(fact.owns.length > 0 ? [`owns ${fact.owns.join(', ')}`] : []),
      ...(fact.createsIn.length > 0 ? [`may CREATE in ${fact.createsIn.join(', ')}`] : []),
    ];
    byRole.set(role, `${user} (${setting}): ${can.join(', ')}`);
  }
  return { byRole, report: upstreamPrivilegeReport(set, logins, facts) };
}

/** Roles the policies name that no account of the configuration holds: usually typos. */
function unheldRoles(columns: readonly ColumnPolicy[], config: PgveilConfig | undefined): PolicyIssue[] {
  if (!config || config.accounts.length === 0) return [];
  const held = new Set(config.accounts.flatMap((a) => a.roles));
  const issues: PolicyIssue[] = [];
  for (const c of columns) {
    for (const role of c.reveal.keys()) {
      if (held.has(role)) continue;
      issues.push({
        file: c.source.file, line: c.source.line, column: c.source.column, severity: 'warning',
        path: policyPathText(['columns', c.key, 'reveal', role]),
        message: `no account in ${displayPath(config.file)} has role ${JSON.stringify(role)}; check its spelling`,
      });
    }
  }
  return issues;
}

/**
 * `pgveil policy check`: runs the checks the proxy runs on its policy file (static and against
 * the live catalog), prints what each role sees of each column and every error and warning with
 * file:line:column. Exit 0 when valid (warnings allowed), 1 when not (or the database cannot be
 * reached), 2 for a wrong command line, configuration or unreadable policy file.
 */
export async function policyCheckCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string', short: 'c' },
      policies: { type: 'string', short: 'p' },
      'database-url': { type: 'string' },
      database: { type: 'string', short: 'd' },
      'no-database': { type: 'boolean' },
    },
    strict: true,
  });
  if (values.config === undefined && values.policies === undefined) {
    throw new UsageError('give --config (its `policies` path is checked) or --policies FILE');
  }
  if (values['no-database'] && (values['database-url'] !== undefined || values.database !== undefined)) {
    throw new UsageError('--no-database cannot be combined with --database-url or --database');
  }
  const config = values.config === undefined ? undefined : await loadConfig(values.config, { env: io.env });
  const file = values.policies ?? (config?.policies === undefined ? undefined : displayPath(config.policies));
  if (file === undefined) throw new UsageError(`${values.config ?? 'the configuration'} sets no \`policies\` file: add one, or pass --policies FILE`);
  const target = values['no-database'] ? undefined : catalogTarget(values, config);

  const read = await readPolicyFile(file);
  if (read.text === undefined) {
    io.err(renderIssues('error', read.issues));
    return 2;
  }
  const issues: PolicyIssue[] = [...read.issues, ...unheldRoles(read.columns, config)];
  let columnTypes: ReadonlyMap<string, string> | undefined;
  let against = 'file checks only (--no-database)';
  let codeFindings: string | undefined;
  let upstream: UpstreamDescription | undefined;
  if (target) {
    let connection: CatalogConnection;
    try {
      connection = await connectCatalog(target);
    } catch (err) {
      const where = 'url' in target ? 'the database URL given' : `${target.upstream.host}:${target.upstream.port}/${target.database}`;
      io.err(`cannot connect to ${where} to check the policies: ${(err as Error).message}`);
      return 1;
    }
    try {
      const catalog = await checkAgainstCatalog(read, connection.query);
      issues.push(...catalog.issues);
      columnTypes = catalog.columnTypes;
      against = `checked against ${connection.description}`;
      const set = createPolicySet(file, read.columns, [], read.privileges);
      codeFindings = renderCodeFindings(await findCodeOnProtectedTables(connection.query, set));
      if (config?.proxy) upstream = await describeUpstreamLogins(connection.query, set, config);
    } finally {
      await connection.close();
    }
  }

  for (const message of upstream?.report.errors ?? []) issues.push({ file, path: 'proxy.upstreamRoles', message, severity: 'error' });
  for (const message of upstream?.report.warnings ?? []) issues.push({ file, path: 'proxy.upstreamRoles', message, severity: 'warning' });
  const ordered = inFileOrder(issues);
  const errors = errorsOf(ordered);
  const warnings = warningsOf(ordered);
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  io.out([
    `${file}: ${count(read.columns.length, 'column')}${errors.length > 0 ? ' without errors' : ''}, ${against}`,
    '',
    renderPolicyTable(read.columns, columnTypes),
    '',
    renderRoleRights(read.columns, config?.api.grants ?? [], config?.accounts.flatMap((account) => account.roles) ?? [], upstream?.byRole),
    ...(codeFindings === undefined ? [] : ['', codeFindings]),
    ...(errors.length > 0 ? ['', renderIssues('error', errors)] : []),
    ...(warnings.length > 0 ? ['', renderIssues('warning', warnings)] : []),
    '',
    errors.length === 0
      ? `valid (${count(warnings.length, 'warning')})`
      : `not valid: ${count(errors.length, 'error')}, ${count(warnings.length, 'warning')}; the proxy would refuse this file`,
  ].join('\n'));
  return errors.length === 0 ? 0 : 1;
}
