/**
 * PostgreSQL's own privileges as pgveil's second line: an account that does not see every
 * protected column in plaintext must reach the database as a role that cannot read the server's
 * files, run programs, bypass row-level security or act as a superuser — or a SQL path pgveil
 * misses would hand it everything. Checked against the catalog when the proxy starts and when
 * policies or accounts are reloaded; a failure stops the start or refuses the reload.
 */
import type { CatalogQuery } from './catalogReader.js';
import { lacksPlaintextSomewhere } from './plaintextReach.js';
import type { PolicySet } from './policyTypes.js';

export interface UpstreamRoleFacts {
  readonly user: string;
  readonly exists: boolean;
  readonly superuser: boolean;
  readonly bypassRls: boolean;
  /** Members (directly or through other roles) of the roles that reach the server's files and programs. */
  readonly serverRoles: readonly string[];
  /** Member of pg_read_all_stats (sees every session's query text). */
  readonly readsAllStats: boolean;
  /** Protected tables it owns (an owner can add triggers, disable RLS, drop policies' objects). */
  readonly owns: readonly string[];
  /** Schemas of protected tables it may create objects in. */
  readonly createsIn: readonly string[];
}

export interface AccountLogin {
  readonly email: string;
  readonly roles: readonly string[];
  /** The upstream user its sessions log in as. */
  readonly user: string;
  /** The setting that decides it: proxy.upstreamRoles.<role>, or proxy.upstream.user. */
  readonly setting: string;
}

export interface PrivilegeReport {
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

const SERVER_ROLES = ['pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program'];

export async function readUpstreamRoleFacts(query: CatalogQuery, users: readonly string[], set: PolicySet): Promise<Map<string, UpstreamRoleFacts>> {
  const tables = set.tables();
  const roles = await query(`
    SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolbypassrls AS bypass,
      ARRAY(SELECT s FROM unnest($2::text[]) AS s WHERE pg_has_role(r.oid, s, 'MEMBER')) AS server_roles,
      pg_has_role(r.oid, 'pg_read_all_stats', 'MEMBER') AS stats
    FROM pg_roles r WHERE r.rolname = ANY($1::text[])`, [users, SERVER_ROLES]);
  const objects = tables.length === 0 ? [] : await query(`
    SELECT u.name, format('%I.%I', n.nspname, c.relname) AS tbl, n.nspname AS schema,
      pg_has_role(u.name, c.relowner, 'MEMBER') AS owns, has_schema_privilege(u.name, n.oid, 'CREATE') AS creates
    FROM unnest($1::text[]) AS u(name)
    JOIN pg_roles r ON r.rolname = u.name
    CROSS JOIN unnest($2::text[], $3::text[]) AS t(schema_name, table_name)
    JOIN pg_namespace n ON n.nspname = t.schema_name
    JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.table_name`,
  [users, tables.map((t) => t.schema), tables.map((t) => t.table)]);
  const facts = new Map<string, UpstreamRoleFacts>();
  for (const user of users) {
    const row = roles.find((r) => r['name'] === user);
    const mine = objects.filter((o) => o['name'] === user);
    facts.set(user, {
      user,
      exists: row !== undefined,
      superuser: row?.['superuser'] === true,
      bypassRls: row?.['bypass'] === true,
      serverRoles: (row?.['server_roles'] as string[] | undefined) ?? [],
      readsAllStats: row?.['stats'] === true,
      owns: [...new Set(mine.filter((o) => o['owns'] === true).map((o) => String(o['tbl'])))],
      createsIn: [...new Set(mine.filter((o) => o['creates'] === true).map((o) => String(o['schema'])))],
    });
  }
  return facts;
}

/** What is wrong (errors) or risky (warnings) with the upstream login of each restricted account. */
export function upstreamPrivilegeReport(set: PolicySet, accounts: readonly AccountLogin[], facts: ReadonlyMap<string, UpstreamRoleFacts>): PrivilegeReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const account of accounts) {
    if (!lacksPlaintextSomewhere(set, account.roles)) continue;
    const role = facts.get(account.user);
    const who = `${account.email} does not see every protected column in plaintext, but its upstream login "${account.user}" (${account.setting})`;
    if (role === undefined || !role.exists) {
      errors.push(`${account.email}: its upstream login "${account.user}" (${account.setting}) does not exist in the database`);
      continue;
    }
    const powers = [
      ...(role.superuser ? ['is a superuser'] : []),
      ...(role.bypassRls ? ['bypasses row-level security'] : []),
      ...role.serverRoles.map((server) => `is a member of ${server}`),
    ];
    if (powers.length > 0) {
      errors.push(`${who} ${powers.join(', ')}; map the account's roles in proxy.upstreamRoles to a least-privilege login`);
    }
    if (role.readsAllStats) warnings.push(`${who} is a member of pg_read_all_stats and sees other sessions' query text`);
    if (role.owns.length > 0) warnings.push(`${who} owns ${role.owns.join(', ')}: an owner can add triggers and change row-level security on it`);
    if (role.createsIn.length > 0) warnings.push(`${who} may create objects in schema ${role.createsIn.join(', ')}, which holds protected tables`);
  }
  return { errors: [...new Set(errors)], warnings: [...new Set(warnings)] };
}
