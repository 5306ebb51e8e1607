/**
 * The API's authorisation: which account may protect or unprotect which kind and scope. Rights
 * come from the column policies (followed across reloads) and the configuration's `api.grants`
 * (see ApiRights); a refusal is a 403 naming the kind, scope and operation, never a value.
 */
import type { AuthenticatedAccount } from '../auth/index.js';
import type { ApiGrant } from '../config/index.js';
import { DEFAULT_METHOD, DEFAULT_SCOPE, isMethod, type Kind, type ProtectOptions } from '../engine/index.js';
import { ApiRights, needsApiRight, type ApiOperation, type PolicySet } from '../policy/index.js';
import { ApiError } from './apiError.js';

export interface ApiAuthoriser {
  /** Throws a 403 ApiError when the account may not run this call. */
  check(account: AuthenticatedAccount, kind: Kind, options: ProtectOptions, operation: ApiOperation): void;
}

/** `policies` gives the column policies in force (undefined: no policy file). */
export function createApiAuthoriser(grants: readonly ApiGrant[], policies: () => PolicySet | undefined = () => undefined): ApiAuthoriser {
  let rightsFor: PolicySet | undefined;
  let rights = new ApiRights(undefined, grants);
  const current = (): ApiRights => {
    const set = policies();
    if (set !== rightsFor) {
      rightsFor = set;
      rights = new ApiRights(set, grants);
    }
    return rights;
  };
  return {
    check(account, kind, options, operation) {
      const method = options.method ?? DEFAULT_METHOD;
      // An unknown method is the engine's to refuse (400); mask, redact and passthrough need no right.
      if (!isMethod(method) || !needsApiRight(method)) return;
      const scope = options.scope ?? DEFAULT_SCOPE;
      if (current().allows(account.roles, kind, scope, operation)) return;
      throw new ApiError(403, 'forbidden',
        `the account's roles may not ${operation} ${kind} values in scope "${scope}" (method ${method}); `
        + `a role gets this right by seeing a ${kind} column of that scope in plaintext in the policy file, or from api.grants in the configuration`);
    },
  };
}
