import type { FastifyPluginAsync } from 'fastify';
import { auditedAccountName, type AuditLog } from '../audit/index.js';
import { AuthError, type AuthService } from '../auth/index.js';
import { normaliseEmail } from '../config/index.js';
import { requireJsonContentType } from './contentType.js';
import { errorResponseSchema, loginRequestSchema, loginResponseSchema } from './schemas.js';

export interface LoginRouteOptions {
  auth: AuthService;
  audit?: AuditLog;
}

interface LoginBody {
  email: string;
  password: string;
}

/**
 * The most a login body needs: an email of 320 characters and a password of 1 024, every one
 * written as a six-byte \u escape, and the JSON around them. Anyone may call /auth/login, so it
 * does not get the 10 MiB the protection endpoints (behind credentials) may read and parse.
 */
export const LOGIN_BODY_LIMIT = 16 * 1024;

/**
 * What a failed login's audit line names: the email of a configured account; any other text that
 * looks like an email may be a password typed into the wrong field ("P@ssw0rd!"), so it is not kept.
 */
function failedLoginAccount(auth: AuthService, email: unknown): string {
  const name = auditedAccountName(email);
  if (!name.includes('@') || typeof email !== 'string') return name;
  return auth.accounts.get(normaliseEmail(email)) === undefined ? '(unknown account)' : name;
}

/** POST /auth/login → 201 with the jwt_token and svc_token of a new 24-hour session. */
export const loginRoute: FastifyPluginAsync<LoginRouteOptions> = async (app, { auth, audit }) => {
  app.post<{ Body: LoginBody }>('/auth/login', {
    bodyLimit: LOGIN_BODY_LIMIT,
    preValidation: requireJsonContentType,
    schema: {
      body: loginRequestSchema,
      response: { 201: loginResponseSchema, '4xx': errorResponseSchema },
    },
  }, async (request, reply) => {
    const { email, password } = request.body;
    let result: Awaited<ReturnType<typeof auth.login>>;
    try {
      result = await auth.login(email, password, request.ip);
    } catch (error) {
      const outcome = error instanceof AuthError && error.failure === 'rate_limited' ? 'rate_limited' : 'failed';
      audit?.record({ event: 'login', door: 'api', account: failedLoginAccount(auth, email), client: request.ip, outcome });
      throw error;
    }
    audit?.record({ event: 'login', door: 'api', account: result.account.email, client: request.ip, outcome: 'ok' });
    // The email identifies the account; it is the only field of the login that is logged.
    request.log.info({ account: result.account.email }, 'login');
    reply.code(201);
    return {
      statusCode: 201,
      message: 'Login successful',
      jwt_token: result.jwtToken,
      svc_token: result.svcToken,
    };
  });
};
