/**
 * What a policy reload can take from a session that it cannot take back from what the session
 * already holds. Rows of protected columns are rewritten as they leave, under the policies in
 * force then; but a statement prepared (Parse or SQL PREPARE) or a cursor declared while a rule
 * was lifted or a passthrough column was seen in plaintext was checked once, before the reload,
 * and its results carry no column pgveil can mask (`phone || ''`, `pg_stats`). So a reload that
 * narrows the grant of a session's roles ends the session.
 */
import { readActionFor, type PolicySet, type StatementPrivilege } from '../../policy/index.js';
import { protectsWrites } from './catalog/columnPolicies.js';
import { sessionRights } from './statementRuleGuard.js';

export interface SessionGrant {
  /** The statement rules apply to the roles (they lack plaintext somewhere). */
  readonly restricted: boolean;
  /** Rules the roles' privileges lift. */
  readonly privileges: ReadonlySet<StatementPrivilege>;
  /** Passthrough columns (schema.table.column) the roles see masked: only bare reads of them are allowed. */
  readonly maskedPlaintext: ReadonlySet<string>;
}

export function sessionGrant(set: PolicySet, roles: readonly string[]): SessionGrant {
  const rights = sessionRights(set, roles);
  const maskedPlaintext = new Set<string>();
  for (const policy of set.columns) {
    if (!protectsWrites(policy) && readActionFor(policy, roles) !== 'pass') maskedPlaintext.add(`${policy.schema}.${policy.table}.${policy.column}`);
  }
  return { restricted: rights.restricted, privileges: rights.privileges, maskedPlaintext };
}

/** What `after` takes away that `before` granted, for the session's message; undefined: nothing. */
export function narrowing(before: SessionGrant, after: SessionGrant): string | undefined {
  if (after.restricted && !before.restricted) return 'its roles no longer see every protected column in plaintext';
  for (const privilege of before.privileges) if (!after.privileges.has(privilege)) return `its roles lost the privilege "${privilege}"`;
  for (const column of after.maskedPlaintext) if (!before.maskedPlaintext.has(column)) return `its roles now see column ${column} masked`;
  return undefined;
}
