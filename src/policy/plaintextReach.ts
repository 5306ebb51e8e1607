import { resolveView } from './revealView.js';
import type { ColumnPolicy, PolicySet } from './policyTypes.js';

/**
 * Whether the plaintext of a column can be had at all: from the stored value (passthrough) or
 * through the key (tokenise, fpe). A column masked or redacted at rest holds nothing more than
 * any role already sees.
 */
function plaintextRecoverable(policy: ColumnPolicy): boolean {
  return policy.method === 'passthrough' || policy.method === 'tokenise' || policy.method === 'fpe';
}

/**
 * The columns whose plaintext exists but is hidden from an account holding `roles` (it sees them
 * masked, tokenised or redacted). Stricter rules apply to such accounts (statement rules,
 * least-privilege upstream roles), because code or objects they create could otherwise carry a
 * column to them that their view hides.
 */
export function columnsWithoutPlaintext(set: PolicySet, roles: readonly string[]): ColumnPolicy[] {
  return set.columns.filter((policy) => plaintextRecoverable(policy) && resolveView(policy, roles) !== 'plaintext');
}

/** True when some column of `set` has plaintext that is hidden from `roles`. */
export function lacksPlaintextSomewhere(set: PolicySet, roles: readonly string[]): boolean {
  return set.columns.some((policy) => plaintextRecoverable(policy) && resolveView(policy, roles) !== 'plaintext');
}
