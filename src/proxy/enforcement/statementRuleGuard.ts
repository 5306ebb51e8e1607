/**
 * The statement rules, per session. An account whose roles do not see every protected column in
 * plaintext may not create code or derived objects, reach the server's files or programs, switch
 * role, or read other sessions' query text — each of those could carry a column to it that its
 * view hides, through paths pgveil cannot follow. Every role needs the `code` privilege for code
 * pgveil cannot analyse on data with column policies (a trigger or rule on such a table, a body
 * with dynamic SQL or in a language pgveil does not read): it could store plaintext; and the `ddl`
 * privilege for logins and role memberships, which reach the database without pgveil. The
 * policy file's `privileges` section lifts rules per role; statements of a privileged role are
 * still analysed for plaintext at rest like any other.
 */
import { lacksPlaintextSomewhere, type PolicySet, type StatementPrivilege } from '../../policy/index.js';
import type { SqlAnalysis } from '../sql/index.js';
import { INSUFFICIENT_PRIVILEGE, PolicyRefusal } from './policyRefusal.js';

export interface SessionRights {
  /** The account's roles lack plaintext somewhere: the statement rules apply to it. */
  readonly restricted: boolean;
  /** Rules the roles' privileges lift. */
  readonly privileges: ReadonlySet<StatementPrivilege>;
}

export function sessionRights(set: PolicySet, roles: readonly string[]): SessionRights {
  const privileges = new Set<StatementPrivilege>();
  for (const role of roles) for (const privilege of set.privileges.get(role) ?? []) privileges.add(privilege);
  return { restricted: lacksPlaintextSomewhere(set, roles), privileges };
}

export function statementRuleRefusal(analysis: SqlAnalysis, rights: SessionRights): PolicyRefusal | undefined {
  for (const statement of analysis.statements) {
    for (const finding of statement.rules ?? []) {
      if (rights.privileges.has(finding.rule)) continue;
      if (finding.unanalysable === true) {
        return new PolicyRefusal(INSUFFICIENT_PRIVILEGE, `pgveil refused the statement: ${finding.what} runs code pgveil cannot analyse `
          + `where column policies apply (rule "code"); a role needs privileges: { <role>: [code] } in the policy file for it`);
      }
      if (finding.everyRole === true) {
        return new PolicyRefusal(INSUFFICIENT_PRIVILEGE, `pgveil refused the statement: ${finding.what} (rule "${finding.rule}", for every role); `
          + `a role needs privileges: { <role>: [${finding.rule}] } in the policy file for it`);
      }
      if (rights.restricted) {
        return new PolicyRefusal(INSUFFICIENT_PRIVILEGE, `pgveil refused the statement: ${finding.what} falls under the rule "${finding.rule}" `
          + `for roles that do not see every protected column in plaintext; privileges: { <role>: [${finding.rule}] } in the policy file allows it`);
      }
    }
  }
  return undefined;
}
