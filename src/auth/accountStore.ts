import { normaliseEmail, type AccountConfig } from '../config/index.js';
import { parseScryptHash } from './passwordHash.js';

/**
 * The accounts of the loaded configuration, by email. It is the only source of truth for whether
 * an account exists, is enabled and which roles it has: tokens are checked against it on every
 * request, so replacing the accounts (a config reload) takes effect at once.
 */
export class AccountStore {
  private byEmail = new Map<string, AccountConfig>();
  /** Every account's scrypt cost, ascending (with repeats: their spread is what a stranger must match). */
  private costs: readonly number[] = [];
  private readonly listeners: Array<() => void> = [];

  constructor(accounts: readonly AccountConfig[] = []) {
    this.replaceAll(accounts);
  }

  replaceAll(accounts: readonly AccountConfig[]): void {
    const next = new Map<string, AccountConfig>();
    const costs: number[] = [];
    for (const account of accounts) {
      next.set(normaliseEmail(account.email), account);
      const logN = parseScryptHash(account.passwordHash)?.logN;
      if (logN !== undefined) costs.push(logN);
    }
    this.byEmail = next;
    this.costs = costs.sort((a, b) => a - b);
    for (const listener of [...this.listeners]) listener();
  }

  /** Called after every replaceAll, so whatever was derived from the old accounts can be dropped; returns the unsubscribe. */
  onReplace(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  /**
   * The scrypt cost at which a login for an unknown email is checked, undefined without accounts:
   * the cost of one account, chosen by `pick` (a keyed hash of the email, in [0, 1)). Always the
   * highest would let a login to an account hashed at a lower cost answer faster than any unknown
   * email, telling its email apart; so an unknown email costs what some account costs, the same
   * one each time, in the proportions the accounts' costs have.
   */
  strangerScryptLogN(pick: number): number | undefined {
    if (this.costs.length === 0) return undefined;
    return this.costs[Math.min(this.costs.length - 1, Math.floor(pick * this.costs.length))];
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
