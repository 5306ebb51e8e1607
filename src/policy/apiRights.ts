/**
 * What each role may do on the protection API, per kind and scope: `protect` and `unprotect` with
 * the keyed methods (tokenise, fpe). Unprotect reveals plaintext; protect is an oracle too (with a
 * deterministic scope, protecting guesses of a low-entropy value confirms them against tokens one
 * can see), so both are rights. mask, redact and passthrough reveal nothing the caller did not send
 * and need none.
 *
 * Least privilege: a role has the rights its column policies imply — it sees a column of kind K
 * and scope S in plaintext, so it may unprotect and protect K/S, as the proxy lets it read and
 * write that column — plus the configuration's explicit grants (`api.grants`).
 */
import type { ApiGrant } from '../config/index.js';
import type { Method } from '../engine/index.js';
import { resolveView } from './revealView.js';
import type { PolicySet } from './policyTypes.js';

export type ApiOperation = 'protect' | 'unprotect';

const KEYED_METHODS: ReadonlySet<Method> = new Set(['tokenise', 'fpe']);

/** Whether a call with this method needs a right at all. */
export function needsApiRight(method: Method): boolean {
  return KEYED_METHODS.has(method);
}

export interface ApiRight {
  readonly kind: string;
  readonly scope: string;
  readonly operations: readonly ApiOperation[];
  /** Where the right comes from: a column policy (its key) or a grant (its index in api.grants). */
  readonly from: string;
}

export class ApiRights {
  constructor(private readonly policies: PolicySet | undefined, private readonly grants: readonly ApiGrant[]) {}

  allows(roles: readonly string[], kind: string, scope: string, operation: ApiOperation): boolean {
    for (const grant of this.grants) {
      if (!grant.operations.includes(operation) || !grant.roles.some((role) => roles.includes(role))) continue;
      if ((grant.kinds === '*' || grant.kinds.includes(kind)) && (grant.scopes === '*' || grant.scopes.includes(scope))) return true;
    }
    for (const policy of this.policies?.columns ?? []) {
      if (policy.kind === kind && policy.scope === scope && KEYED_METHODS.has(policy.method) && resolveView(policy, roles) === 'plaintext') return true;
    }
    return false;
  }

  /** The rights of one role, for `pgveil policy check`. */
  rightsOf(role: string): ApiRight[] {
    const rights: ApiRight[] = [];
    for (const policy of this.policies?.columns ?? []) {
      if (KEYED_METHODS.has(policy.method) && resolveView(policy, [role]) === 'plaintext') {
        rights.push({ kind: policy.kind, scope: policy.scope, operations: ['protect', 'unprotect'], from: policy.key });
      }
    }
    this.grants.forEach((grant, index) => {
      if (!grant.roles.includes(role)) return;
      const kinds = grant.kinds === '*' ? ['*'] : grant.kinds;
      const scopes = grant.scopes === '*' ? ['*'] : grant.scopes;
      for (const kind of kinds) for (const scope of scopes) rights.push({ kind, scope, operations: grant.operations, from: `api.grants[${index}]` });
    });
    return rights;
  }
}
