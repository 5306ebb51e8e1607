/** Who a request or a database session acts as; roles come from the configuration. */
export interface AuthenticatedAccount {
  email: string;
  roles: string[];
}

/** What the Postgres proxy needs to terminate client authentication with pgveil's accounts. */
export interface AccountAuthenticator {
  /**
   * `secret` is either an unexpired svc_token of that account or the account's password (checked
   * like a login, under the same rate limit). Null when wrong, expired, disabled or unknown; throws
   * AuthError `rate_limited` when this account has failed too often from this client.
   * `client` (e.g. the peer address) feeds the per-client rate limit when given.
   */
  authenticateDbUser(email: string, secret: string, client?: string): Promise<AuthenticatedAccount | null>;
  /**
   * Whether the accounts in force still grant what `account` (as authenticateDbUser returned it)
   * was granted at its login: the account exists, is enabled, and has the same roles and password.
   * A session whose account no longer passes must end: what it may see was decided at login.
   */
  stillAuthorises(account: AuthenticatedAccount): boolean;
  /** Runs `listener` after every change of the accounts in force; returns the unsubscribe. */
  onAccountsChanged(listener: () => void): () => void;
}
