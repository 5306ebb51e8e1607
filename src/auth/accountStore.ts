import { normaliseEmail, type AccountConfig } from '../config/index.js';
import { parseScryptHash } from './passwordHash.js';

/**
 * The accounts of the loaded configuration, by email. It is the only source of truth for whether
 * an account exists, is enabled and which roles it has: tokens are checked against it on every
 * request, so replacing the accounts (a config reload) takes effect at once.
 */
export class AccountStore {
  private byEmail = new Map<string, AccountConfig>();
  private highestLogN: number | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(accounts: readonly AccountConfig[] = []) {
    this.replaceAll(accounts);
  }

  replaceAll(accounts: readonly AccountConfig[]): void {
    const next = new Map<string, AccountConfig>();
    let highest: number | undefined;
    for (const account of accounts) {
      next.set(normaliseEmail(account.email), account);
      const logN = parseScryptHash(account.passwordHash)?.logN;
      if (logN !== undefined && (highest === undefined || logN > highest)) highest = logN;
    }
    this.byEmail = next;
    this.highestLogN = highest;
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
   * The highest scrypt cost among the accounts' password hashes, undefined without accounts:
   * a login for an unknown email is checked at this cost so it takes as long as a real one.
   */
  get highestScryptLogN(): number | undefined {
    return this.highestLogN;
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
