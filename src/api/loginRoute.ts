import type { FastifyPluginAsync } from 'fastify';
import { auditedAccountName, type AuditLog } from '../audit/index.js';
import { AuthError, type AuthService } from '../auth/index.js';
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

/** POST /auth/login → 201 with the jwt_token and svc_token of a new 24-hour session. */
export const loginRoute: FastifyPluginAsync<LoginRouteOptions> = async (app, { auth, audit }) => {
  app.post<{ Body: LoginBody }>('/auth/login', {
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
      audit?.record({ event: 'login', door: 'api', account: auditedAccountName(email), client: request.ip, outcome });
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
