import { readFileSync } from 'node:fs';
import fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuthService } from '../auth/index.js';
import type { ApiConfig } from '../config/index.js';
import type { Engine } from '../engine/index.js';
import { NO_AUDIT, type AuditLog } from '../audit/index.js';
import { ApiError } from './apiError.js';
import { createApiAuthoriser, type ApiAuthoriser } from './authorisation.js';
import { clientErrorHandler } from './clientErrors.js';
import { toHttpError } from './httpErrors.js';
import { boundedJsonParser } from './jsonBody.js';
import { loginRoute } from './loginRoute.js';
import { ApiMetrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { operationalRoutes } from './operationalRoutes.js';
import { protectionRoutes } from './protectionRoutes.js';

export interface ApiServerOptions {
  /** The `api` section of the configuration (limits; listen is used by startApiServer). */
  config: ApiConfig;
  engine: Engine;
  auth: AuthService;
  /** Who may protect and unprotect what; by default only the configuration's api.grants apply. */
  authoriser?: ApiAuthoriser;
  /** Where unprotects, refusals and logins are recorded; nowhere by default. */
  audit?: AuditLog;
  /** pino logger; none by default. */
  logger?: Logger;
  metrics?: ApiMetrics;
}

export interface RunningApi {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  close(): Promise<void>;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, headers } = toHttpError(err);
  if (status >= 500) {
    // Name, code and stack frames only: an error message could quote a value.
    const e = err as Partial<FastifyError>;
    const frames = typeof e.stack === 'string' ? e.stack.split('\n').slice(1, 8).join('\n') : undefined;
    request.log.error({ errorName: e.name, errorCode: e.code, frames }, 'request failed');
  } else {
    request.log.debug({ statusCode: status, code: body.code }, 'request rejected');
  }
  void reply.code(status).headers(headers).type('application/json; charset=utf-8').send(body);
}

/** How often Node looks for requests past the timeout: a quarter of it (Node's default is 30 s whatever the timeout). */
function connectionsCheckingInterval(requestTimeoutMs: number): number {
  return Math.max(250, Math.min(30_000, Math.floor(requestTimeoutMs / 4)));
}

/** Builds the protection API (not listening). Tests use it with inject() or startApiServer(). */
export async function buildApiServer(opts: ApiServerOptions): Promise<FastifyInstance> {
  const metrics = opts.metrics ?? new ApiMetrics();
  const requestTimeoutMs = opts.config.limits.requestTimeoutSeconds * 1000;
  const app = fastify({
    loggerInstance: opts.logger as FastifyBaseLogger | undefined,
    bodyLimit: opts.config.limits.maxBodyBytes,
    // Request lines are written by the onResponse hook below, with the route and no URL query.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // A request (headers and body) must arrive within the limit: without one, a client trickling
    // a body a byte at a time holds its connection for ever, and enough of them hold every socket.
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: Math.min(60_000, requestTimeoutMs), connectionsCheckingInterval: connectionsCheckingInterval(requestTimeoutMs) },
    clientErrorHandler: clientErrorHandler(opts.config.limits.requestTimeoutSeconds),
    routerOptions: { ignoreTrailingSlash: true },
    // Types are checked, never coerced ("5" is not an id) and nothing is silently dropped.
    ajv: { customOptions: { allowUnionTypes: true, coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    frameworkErrors: (err, request, reply) => sendError(err, request, reply),
  });
  // Connections beyond the limit are closed as they arrive: the request timeout bounds how long a
  // client holds one, this how many.
  app.server.maxConnections = opts.config.limits.maxConnections;
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, boundedJsonParser(parseJson, opts.config.limits.maxElements));

  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new ApiError(404, 'not_found', 'no such endpoint'), request, reply));
  // A path that matches no route is answered before its body is read: anyone may send one.
  app.addHook('onRequest', async (request) => {
    if (request.is404) throw new ApiError(404, 'not_found', 'no such endpoint');
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    metrics.requests.inc({ route, method: request.method, status });
    metrics.latency.observe({ route }, reply.elapsedTime / 1000);
    request.log.debug({ method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
  });

  await app.register(loginRoute, { auth: opts.auth, audit: opts.audit ?? NO_AUDIT });
  const authoriser = opts.authoriser ?? createApiAuthoriser(opts.config.grants);
  const audit = opts.audit ?? NO_AUDIT;
  metrics.auditCounts = audit.counts;
  await app.register(protectionRoutes, { engine: opts.engine, auth: opts.auth, authoriser, audit, limits: opts.config.limits, metrics });
  await app.register(operationalRoutes, {
    metrics, openapi: buildOpenApiDocument(packageVersion()), ...(opts.config.metricsToken === undefined ? {} : { metricsToken: opts.config.metricsToken }),
  });
  return app;
}

/** Builds the API and listens on config.listen (port 0: a free port). */
export async function startApiServer(opts: ApiServerOptions): Promise<RunningApi> {
  const app = await buildApiServer(opts);
  await app.listen({ host: opts.config.listen.host, port: opts.config.listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : opts.config.listen.port;
  const host = opts.config.listen.host.includes(':') ? `[${opts.config.listen.host}]` : opts.config.listen.host;
  return { app, url: `http://${host}:${port}`, port, close: () => app.close() };
}
