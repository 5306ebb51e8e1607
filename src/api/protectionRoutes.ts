import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedAccount, AuthService } from '../auth/index.js';
import type { ApiLimits } from '../config/index.js';
import {
  DEFAULT_METHOD, DEFAULT_SCOPE, KINDS, resolveOptions, type Engine, type Kind, type ProtectionResponse,
} from '../engine/index.js';
import type { AuditLog } from '../audit/index.js';
import { ApiError } from './apiError.js';
import type { ApiAuthoriser } from './authorisation.js';
import { requireJsonContentType } from './contentType.js';
import type { ApiMetrics } from './metrics.js';
import { toProtectionCall, type ProtectionRequestBody } from './protectionRequest.js';
import { protectionResponseBody, sendResponseBody } from './responseBody.js';
import { errorResponseSchema, protectionRequestSchema } from './schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account a protection request acts as, set by the authentication hook. */
    account: AuthenticatedAccount | null;
  }
}

export interface ProtectionRoutesOptions {
  engine: Engine;
  auth: AuthService;
  authoriser: ApiAuthoriser;
  audit: AuditLog;
  limits: ApiLimits;
  metrics: ApiMetrics;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * POST /api/<kind> for the fourteen kinds, plus /api/* answering 400 for any other kind.
 * Credentials are checked on request, before the body is read: an anonymous client cannot make
 * the server parse 10 MiB.
 */
export const protectionRoutes: FastifyPluginAsync<ProtectionRoutesOptions> = async (app, opts) => {
  const { engine, auth, authoriser, audit, limits, metrics } = opts;
  app.decorateRequest('account', null);
  app.addHook('onRequest', async (request) => {
    request.account = await auth.authenticateRequest({
      apiKey: header(request, 'x-api-key'),
      authorization: header(request, 'authorization'),
      svcToken: header(request, 'svc-token'),
    });
  });

  // No 200 schema: the body is written in slices by protectionResponseBody, in that schema's shape
  // (the OpenAPI document still describes it).
  const schema = {
    body: protectionRequestSchema(),
    response: { '4xx': errorResponseSchema },
  };

  for (const kind of KINDS) {
    app.post<{ Body: ProtectionRequestBody }>(`/api/${kind}`, { preValidation: requireJsonContentType, schema },
      async (request, reply): Promise<FastifyReply> => {
        const call = await toProtectionCall(request.body, limits);
        const account = request.account;
        if (account === null) throw new ApiError(401, 'unauthorized', 'missing credentials');
        // Options first (400): the refusal and its audit line below then name a scope of at most
        // MAX_SCOPE_BYTES, not whatever megabytes a caller without the right sent as one.
        resolveOptions(kind, call.options);
        const method = call.options.method ?? DEFAULT_METHOD;
        const scope = call.options.scope ?? DEFAULT_SCOPE;
        try {
          authoriser.check(account, kind, call.options, call.operation);
        } catch (error) {
          audit.record({ event: 'api.refused', account: account.email, kind, scope, method, operation: call.operation });
          throw error;
        }
        const response = call.operation === 'protect'
          ? await engine.protect(kind, call.data, call.options)
          : await engine.unprotect(kind, call.data, call.options);
        if (call.operation === 'unprotect' && (method === 'tokenise' || method === 'fpe')) {
          // Written before the response leaves: the plaintext is recorded as handed out.
          audit.record({ event: 'api.unprotect', account: account.email, kind, scope, method, count: call.data.length - countDiscrepancies(response) });
        }
        const body = await protectionResponseBody(response);
        countValues(metrics, kind, call.options.method, call.operation, call.data.length);
        return sendResponseBody(reply, body);
      });
  }

  app.post('/api/*', { preValidation: requireJsonContentType }, async () => {
    throw new ApiError(400, 'unknown_kind', `unknown kind; valid kinds: ${KINDS.join(', ')}`);
  });
};

function countDiscrepancies(response: ProtectionResponse): number {
  const discrepancy = response.discrepancy;
  return (discrepancy?.invalid_token?.length ?? 0) + (discrepancy?.invalid_scope?.length ?? 0);
}

function countValues(metrics: ApiMetrics, kind: Kind, method: string | undefined, operation: string, n: number): void {
  if (n === 0) return;
  // The engine accepted the method, so it is one of the five names: a bounded label.
  metrics.values.inc({ kind, method: method ?? DEFAULT_METHOD, operation }, n);
}
