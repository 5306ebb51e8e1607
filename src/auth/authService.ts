import { createHmac } from 'node:crypto';
import { normaliseEmail, DEFAULTS, type AccountConfig, type LoginRateLimit } from '../config/index.js';
import type { Keyring } from '../keys/index.js';
import type { AccountAuthenticator, AuthenticatedAccount } from './accountAuthenticator.js';
import { AccountStore } from './accountStore.js';
import { apiKeyMatches } from './apiKey.js';
import { AuthError } from './authErrors.js';
import { systemClock, type Clock } from './clock.js';
import { LoginRateLimiter, type CountedLogin } from './loginRateLimiter.js';
import { DEFAULT_SCRYPT_LOG_N, hashPassword, verifyPassword } from './passwordHash.js';
import { SessionTokens } from './sessionTokens.js';
import { throttledClient } from './throttledClient.js';
import { VerifiedPasswords, type PasswordVerifier } from './verifiedPasswords.js';

export interface AuthServiceOptions {
  /** The configured accounts, or a store shared with whoever reloads the configuration. */
  accounts: readonly AccountConfig[] | AccountStore;
  keyring: Keyring;
  clock?: Clock;
  loginRateLimit?: LoginRateLimit;
  /** How successful password checks are reused; defaults: 5 minutes, 10 000 accounts. */
  verifiedPasswords?: { lifetimeMs?: number; maxEntries?: number };
  /** The scrypt check itself; replaceable so tests can count how often it runs. */
  verifyPassword?: PasswordVerifier;
}

/** The three headers of a protection request, as received (any may be missing). */
export interface RequestCredentials {
  apiKey?: string | undefined;
  authorization?: string | undefined;
  svcToken?: string | undefined;
}

export interface LoginResult {
  jwtToken: string;
  svcToken: string;
  /** Seconds since the epoch. */
  expiresAt: number;
  account: AuthenticatedAccount;
}

const BEARER = /^bearer\s+/i;
const STRANGER_COST_PURPOSE = 'auth-stranger-cost';

function unauthorized(message = 'invalid credentials'): AuthError {
  return new AuthError('unauthorized', message);
}

/**
 * Logins and credential checks for the API and the proxy. Stateless apart from the failed-login
 * counts and the recent successful password checks (VerifiedPasswords, which spare scrypt): tokens
 * are verified by signature, and the account is looked up in the configuration on every check so
 * disabling or removing it takes effect immediately.
 */
export class AuthService implements AccountAuthenticator {
  readonly accounts: AccountStore;
  private readonly keyring: Keyring;
  private readonly tokens: SessionTokens;
  private readonly limiter: LoginRateLimiter;
  private readonly verifier: PasswordVerifier;
  private readonly verified: VerifiedPasswords;
  /** Unknown emails are checked against these (by cost) so they take as long as real ones. */
  private readonly dummyHashes = new Map<number, Promise<string>>();
  /** The check under way per account and client address; the next one waits for it. */
  private readonly checking = new Map<string, Promise<void>>();
  /** The configuration entry each proxy login was granted under (see stillAuthorises). */
  private readonly grantedUnder = new WeakMap<AuthenticatedAccount, AccountConfig>();

  constructor(options: AuthServiceOptions) {
    const clock = options.clock ?? systemClock;
    this.accounts = options.accounts instanceof AccountStore ? options.accounts : new AccountStore(options.accounts);
    this.keyring = options.keyring;
    this.tokens = new SessionTokens(options.keyring, clock);
    this.limiter = new LoginRateLimiter(options.loginRateLimit ?? {
      maxFailuresPerAccount: DEFAULTS.maxFailuresPerAccount,
      maxFailuresPerClient: DEFAULTS.maxFailuresPerClient,
      windowSeconds: DEFAULTS.loginWindowSeconds,
    }, clock);
    this.verifier = options.verifyPassword ?? verifyPassword;
    this.verified = new VerifiedPasswords({ ...options.verifiedPasswords, verify: this.verifier, clock });
    this.accounts.onReplace(() => this.verified.retain((email) => this.accounts.active(email)?.passwordHash));
  }

  /**
   * Checks a password under the rate limit; the account when right and enabled. Throws AuthError.
   * One check at a time per account and client address: a burst of guesses sent at once would
   * otherwise all pass the limit before the first failure is counted. A pool opening with the
   * right password waits for the first check and then finds it in VerifiedPasswords. Clients are
   * counted by throttledClient (an IPv6 address by its /64), not by the exact address.
   */
  private async checkPassword(email: string, password: string, address: string | undefined): Promise<AccountConfig> {
    const key = normaliseEmail(email);
    const client = throttledClient(address);
    const slot = `${key}\u0000${client ?? ''}`;
    for (let turn = this.checking.get(slot); turn !== undefined; turn = this.checking.get(slot)) await turn;
    let done = (): void => undefined;
    this.checking.set(slot, new Promise<void>((resolve) => { done = resolve; }));
    try {
      return await this.checkPasswordNow(key, password, client);
    } finally {
      this.checking.delete(slot);
      done();
    }
  }

  private async checkPasswordNow(key: string, password: string, client: string | undefined): Promise<AccountConfig> {
    const decision = this.limiter.check(key, client);
    if (decision.limited) {
      throw new AuthError('rate_limited', 'too many failed logins; try again later', decision.retryAfterSeconds);
    }
    const account = this.accounts.get(key);
    let ok: boolean;
    this.limiter.begin(client);
    try {
      if (account?.enabled) {
        ok = await this.verified.verify(key, password, account.passwordHash);
      } else {
        // Disabled or unknown: the full cost, never cached, so the answer comes no faster.
        const hash = account?.passwordHash ?? await this.dummyHash(this.accounts.strangerScryptLogN(this.strangerPick(key)) ?? DEFAULT_SCRYPT_LOG_N);
        ok = await this.verifier(password, hash);
      }
    } finally {
      this.limiter.end(client);
    }
    // The accounts may have been reloaded during the check: only the current, enabled account counts.
    const current = this.accounts.active(key);
    if (!ok || !account || current?.passwordHash !== account.passwordHash) {
      this.limiter.recordFailure(key, client);
      throw unauthorized('invalid email or password');
    }
    this.limiter.recordSuccess(key, client);
    return current;
  }

  /**
   * Shares the failed-login counts with the other processes of this instance: `sharer` hears of
   * every login counted here; the function returned counts one that another process heard of.
   */
  shareLoginCounts(sharer: (login: CountedLogin) => void): (login: CountedLogin) => void {
    this.limiter.onCounted(sharer);
    return (login) => this.limiter.applyShared(login);
  }

  /**
   * Where in the accounts' costs an unknown email falls: keyed, so no one can work out which
   * cost an email will show, and the same in every process and restart of the instance.
   */
  private strangerPick(email: string): number {
    return createHmac('sha256', this.keyring.subkey(STRANGER_COST_PURPOSE, '', '')).update(email).digest().readUInt32BE(0) / 2 ** 32;
  }

  private dummyHash(logN: number): Promise<string> {
    let hash = this.dummyHashes.get(logN);
    if (!hash) {
      hash = hashPassword('pgveil-dummy-password', logN);
      this.dummyHashes.set(logN, hash);
    }
    return hash;
  }

  /** POST /auth/login. Throws AuthError (401, or 429 when rate-limited). */
  async login(email: string, password: string, client?: string): Promise<LoginResult> {
    const account = await this.checkPassword(email, password, client);
    const issued = await this.tokens.issue(account);
    return {
      jwtToken: issued.jwtToken,
      svcToken: issued.svcToken,
      expiresAt: issued.claims.expiresAt,
      account: { email: account.email, roles: [...account.roles] },
    };
  }

  /**
   * The headers of a protection request: the jwt_token (with or without "Bearer "), its svc_token
   * from the same login and the API key of the same account, which must exist and be enabled.
   */
  async authenticateRequest(creds: RequestCredentials): Promise<AuthenticatedAccount> {
    const { apiKey, authorization, svcToken } = creds;
    if (!apiKey || !authorization || !svcToken) {
      throw unauthorized('missing credentials: the x-api-key, Authorization and svc-token headers are required');
    }
    const claims = await this.tokens.verifyJwt(authorization.replace(BEARER, '').trim());
    const account = this.accounts.active(claims.email);
    if (!account) throw unauthorized('the account of these tokens is disabled or no longer exists');
    // Both checks run before deciding, so the response time does not tell which one failed.
    const keyOk = apiKeyMatches(apiKey, account.apiKeyHash);
    const svcOk = this.tokens.svcMatchesJwt(svcToken.trim(), claims, account);
    if (!keyOk || !svcOk) throw unauthorized();
    return { email: account.email, roles: [...account.roles] };
  }

  async authenticateDbUser(email: string, secret: string, client?: string): Promise<AuthenticatedAccount | null> {
    const account = this.accounts.active(email);
    if (account && this.tokens.looksLikeSvcToken(secret)) {
      const verdict = this.tokens.verifySvc(secret, account);
      if (verdict === 'valid') return this.granted(account);
      if (verdict === 'expired') return null;
    }
    try {
      return this.granted(await this.checkPassword(email, secret, client));
    } catch (error) {
      // Throttled: the proxy says so rather than claim a wrong password.
      if (error instanceof AuthError && error.failure === 'rate_limited') throw error;
      return null;
    }
  }

  private granted(account: AccountConfig): AuthenticatedAccount {
    const authenticated = { email: account.email, roles: [...account.roles] };
    this.grantedUnder.set(authenticated, account);
    return authenticated;
  }

  stillAuthorises(account: AuthenticatedAccount): boolean {
    const granted = this.grantedUnder.get(account);
    const current = this.accounts.active(account.email);
    // Fail closed: an account this service did not grant, or any change to what decided the grant.
    if (granted === undefined || current === undefined || current.passwordHash !== granted.passwordHash) return false;
    return current.roles.length === granted.roles.length && current.roles.every((role, i) => role === granted.roles[i]);
  }

  onAccountsChanged(listener: () => void): () => void {
    return this.accounts.onReplace(listener);
  }
}

/**
 * The authenticator over the loaded accounts, keyring and clock. `pgveil serve` builds one
 * AuthService and hands it to both the API and the proxy so they share accounts, reloads and
 * the failed-login counts; this factory is for callers that need only the proxy's view.
 */
export function createAccountAuthenticator(options: AuthServiceOptions): AuthService {
  return new AuthService(options);
}
