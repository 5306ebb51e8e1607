import { normaliseEmail } from '../config/accountsSection.js';
import type { AccountConfig } from '../config/configTypes.js';

/**
 * The accounts of the loaded configuration, by email. It is the only source of truth for whether
 * an account exists, is enabled and which roles it has: tokens are checked against it on every
 * request, so replacing the accounts (a config reload) takes effect at once.
 */
export class AccountStore {
  private byEmail = new Map<string, AccountConfig>();

  constructor(accounts: readonly AccountConfig[] = []) {
    this.replaceAll(accounts);
  }

  replaceAll(accounts: readonly AccountConfig[]): void {
    const next = new Map<string, AccountConfig>();
    for (const account of accounts) next.set(normaliseEmail(account.email), account);
    this.byEmail = next;
  }

  get(email: string): AccountConfig | undefined {
    return this.byEmail.get(normaliseEmail(email));
  }

  /** The account when it exists and is enabled. */
  active(email: string): AccountConfig | undefined {
    const account = this.get(email);
    return account?.enabled ? account : undefined;
  }

  get size(): number {
    return this.byEmail.size;
  }
}
