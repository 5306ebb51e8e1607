import type { ColumnEngineOptions, ColumnPolicy, RevealView } from './policyTypes.js';

/** Most revealing first wins: plaintext > mask > token > redact. */
const RANK: Readonly<Record<RevealView, number>> = { plaintext: 3, mask: 2, token: 1, redact: 0 };

/**
 * What a view amounts to given what is stored. With `passthrough` the stored value is the
 * plaintext, so `token` (as stored) is `plaintext`; with `mask` at rest the stored value is the
 * mask, so `mask` is `token`. Ranking the effective views keeps "most revealing wins" true to
 * what the role would actually see.
 */
export function effectiveView(policy: ColumnPolicy, view: RevealView): RevealView {
  if (policy.method === 'passthrough' && view === 'token') return 'plaintext';
  if (policy.method === 'mask' && view === 'mask') return 'token';
  return view;
}

/** The view of one role: its reveal entry, else the `"*"` entry, else `token`. */
export function viewOfRole(policy: ColumnPolicy, role: string): RevealView {
  return policy.reveal.get(role) ?? policy.otherRoles;
}

/**
 * The view an account gets of a column: each of its roles maps to a view (unlisted roles to
 * the `"*"` entry or `token`), and the most revealing one wins. No roles at all is the view of
 * roles not listed. The result is an effective view (see effectiveView).
 */
export function resolveView(policy: ColumnPolicy, roles: readonly string[]): RevealView {
  let best = effectiveView(policy, roles.length === 0 ? policy.otherRoles : viewOfRole(policy, roles[0] as string));
  for (let i = 1; i < roles.length; i++) {
    const view = effectiveView(policy, viewOfRole(policy, roles[i] as string));
    if (RANK[view] > RANK[best]) best = view;
  }
  return best;
}

/**
 * What the proxy does to a stored value for a view:
 * - `pass`: send the stored bytes unchanged;
 * - `null`: send NULL;
 * - `unprotect`: engine.unprotect(kind, values, policy.engineOptions);
 * - `mask`: engine.protect(kind, values, maskOptions(policy)) on the stored (plaintext) value;
 * - `unprotect-then-mask`: unprotect, then mask the plaintext.
 */
export type ReadAction = 'pass' | 'null' | 'unprotect' | 'mask' | 'unprotect-then-mask';

export function readAction(policy: ColumnPolicy, view: RevealView): ReadAction {
  const effective = effectiveView(policy, view);
  switch (effective) {
    case 'redact':
      return 'null';
    case 'token':
      return 'pass';
    case 'plaintext':
      // Validation refuses plaintext over one-way methods; were one to slip through, the stored
      // (one-way) value is all there is.
      return policy.method === 'tokenise' || policy.method === 'fpe' ? 'unprotect' : 'pass';
    case 'mask':
      if (policy.method === 'tokenise' || policy.method === 'fpe') return 'unprotect-then-mask';
      return policy.method === 'passthrough' ? 'mask' : 'pass';
  }
}

/** The action for an account: readAction of its resolved view. */
export function readActionFor(policy: ColumnPolicy, roles: readonly string[]): ReadAction {
  return readAction(policy, resolveView(policy, roles));
}

/** Options for masking a column's plaintext on read (same kind and lang as the policy). */
export function maskOptions(policy: ColumnPolicy): ColumnEngineOptions {
  return policy.lang ? { method: 'mask', scope: policy.scope, noise: 0, lang: policy.lang } : { method: 'mask', scope: policy.scope, noise: 0 };
}
