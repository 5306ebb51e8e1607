/** The auth module's public surface, for the API, the proxy and the CLI. */
export type { AccountAuthenticator, AuthenticatedAccount } from './accountAuthenticator.js';
export { AccountStore } from './accountStore.js';
export { revocationsOnly } from './accountRevocations.js';
export { apiKeyMatches, generateApiKey, hashApiKey } from './apiKey.js';
export { AuthError, type AuthFailure } from './authErrors.js';
export { AuthService, createAccountAuthenticator, type AuthServiceOptions, type LoginResult, type RequestCredentials } from './authService.js';
export { systemClock, type Clock } from './clock.js';
export type { CountedLogin } from './loginRateLimiter.js';
export { generatePassword, hashPassword, verifyPassword } from './passwordHash.js';
export { TOKEN_LIFETIME_SECONDS } from './sessionTokens.js';
