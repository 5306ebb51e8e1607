export type AuthFailure = 'unauthorized' | 'rate_limited';

/**
 * A rejected login or request. Messages say what to do, never echo what was sent, and do not
 * tell an unknown email from a wrong password.
 */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  readonly failure: AuthFailure;
  /** For rate_limited: seconds until a new attempt may succeed. */
  readonly retryAfterSeconds: number | undefined;

  constructor(failure: AuthFailure, message: string, retryAfterSeconds?: number) {
    super(message);
    this.failure = failure;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get statusCode(): 401 | 429 {
    return this.failure === 'rate_limited' ? 429 : 401;
  }
}
