import type { Kind, Lang, Method } from '../engine/index.js';
import type { PolicyIssue } from './policyError.js';

/**
 * What a role sees of a column on read:
 * - `plaintext`: the original value (unprotected);
 * - `mask`: the kind's mask of the original (a ccn keeps its last four, a date its year...);
 * - `token`: the value as stored (the default for roles not listed);
 * - `redact`: NULL.
 */
export const REVEAL_VIEWS = ['plaintext', 'token', 'mask', 'redact'] as const;
export type RevealView = (typeof REVEAL_VIEWS)[number];

/** The reveal key that stands for every role not named in the column's reveal map. */
export const OTHER_ROLES = '*';

/** The view of roles not listed when the column has no `"*"` entry. */
export const DEFAULT_VIEW: RevealView = 'token';

/** Options for `engine.protect` / `engine.unprotect` of one column's values. */
export interface ColumnEngineOptions {
  readonly method: Method;
  readonly scope: string;
  readonly noise: number;
  /** Present only when the policy sets it (text kinds). */
  readonly lang?: Lang;
}

/** Where a column policy is written: its key in the policy file. */
export interface PolicySource {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One protected column, validated and with defaults applied. Frozen. */
export interface ColumnPolicy {
  /** Catalog names: unquoted names folded to lower case, quoted ones exact. */
  readonly schema: string;
  readonly table: string;
  readonly column: string;
  /** The key as written in the file (`public.customers.ssn`), for messages. */
  readonly key: string;
  readonly kind: Kind;
  readonly method: Method;
  readonly scope: string;
  readonly noise: number;
  readonly lang?: Lang;
  /** Role → view, as written (without the `"*"` entry). */
  readonly reveal: ReadonlyMap<string, RevealView>;
  /** What roles not listed in `reveal` see: the `"*"` entry, else `token`. */
  readonly otherRoles: RevealView;
  /** What `engine.protect` needs on the write path (and `engine.unprotect` on read). */
  readonly engineOptions: ColumnEngineOptions;
  readonly source: PolicySource;
}

/** A table named by a policy, with catalog names. */
export interface TableName {
  readonly schema: string;
  readonly table: string;
}

/** The column policies of one file. Immutable: a reload builds a new set. */
export interface PolicySet {
  /** The policy file, as it was named when loaded. */
  readonly file: string;
  /** In file order. */
  readonly columns: readonly ColumnPolicy[];
  /** Every role named in any reveal map, in order of first appearance. */
  readonly roles: readonly string[];
  /** Lookup by catalog names (exact, as pg_catalog stores them: `customers`, `Customers`). */
  get(schema: string, table: string, column: string): ColumnPolicy | undefined;
  /** The policies of one table by column name; undefined when the table has none. */
  table(schema: string, table: string): ReadonlyMap<string, ColumnPolicy> | undefined;
  /** The tables that have at least one policy. */
  tables(): readonly TableName[];
  /** Warnings found when the set was validated (the file is used nonetheless). */
  readonly warnings: readonly PolicyIssue[];
  /** Statement rules lifted per role (the file's `privileges` section). */
  readonly privileges: ReadonlyMap<string, ReadonlySet<StatementPrivilege>>;
}

/**
 * Statement rules the proxy applies to roles that do not see every protected column in plaintext
 * (and, for code it cannot analyse on protected tables, to every role), which a role's
 * `privileges` entry lifts:
 * - `code`: functions, procedures, DO, triggers, rules, event triggers, extensions, RLS policies,
 *   functions that run SQL given as text;
 * - `derived`: views, materialized views, CREATE TABLE AS, SELECT INTO, generated columns;
 * - `server-files`: COPY to or from a server file or PROGRAM, server file functions, lo_import/lo_export;
 * - `role-switch`: SET ROLE, SET SESSION AUTHORIZATION, set_config of them;
 * - `monitor`: other sessions' query text (pg_stat_activity, pg_stat_statements), and the planner's
 *   statistics, which hold sampled column values (pg_statistic, pg_stats, pg_stats_ext…);
 * - `ddl`: any other statement outside the short list every role may run;
 * - `blind-update`: UPDATE … SET of a tokenised, fpe or passthrough column the role does not read in
 *   plaintext (what it writes back is a mask, a token or NULL, which would replace the value).
 */
export const STATEMENT_PRIVILEGES = ['code', 'derived', 'server-files', 'role-switch', 'monitor', 'ddl', 'blind-update'] as const;
export type StatementPrivilege = (typeof STATEMENT_PRIVILEGES)[number];
