import { normaliseEmail, type AccountConfig } from '../config/index.js';

/**
 * The accounts in force with only what `next` takes away: an account `next` removes or disables
 * is disabled, and so is one whose roles it changes other than by adding roles (a role taken away
 * may be what showed a column in plaintext, and the new set could not be put in force); one it
 * keeps enabled takes its new password and API key hashes (its roles stay those in force, which
 * then hold all it had and nothing more). Accounts `next` adds are left out. For a reload refused
 * over what it grants (an upstream login for new roles): a revocation or a credential rotation
 * must not wait for the rest to be fixed, and grants nothing, so needs no check. `inForce` itself
 * when nothing changes.
 */
export function revocationsOnly(inForce: readonly AccountConfig[], next: readonly AccountConfig[]): readonly AccountConfig[] {
  const nextByEmail = new Map(next.map((account) => [normaliseEmail(account.email), account]));
  let changed = false;
  const result = inForce.map((account) => {
    const later = nextByEmail.get(normaliseEmail(account.email));
    if (!account.enabled) return account;
    if (later === undefined || !later.enabled || account.roles.some((role) => !later.roles.includes(role))) {
      changed = true;
      return { ...account, enabled: false };
    }
    if (later.passwordHash === account.passwordHash && later.apiKeyHash === account.apiKeyHash) return account;
    changed = true;
    return { ...account, passwordHash: later.passwordHash, apiKeyHash: later.apiKeyHash };
  });
  return changed ? result : inForce;
}
