import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from './apiError.js';
import { PROMETHEUS_CONTENT_TYPE, type ApiMetrics } from './metrics.js';
import { healthResponseSchema } from './schemas.js';

export interface OperationalRoutesOptions {
  metrics: ApiMetrics;
  openapi: Record<string, unknown>;
  /** When set, /metrics needs `Authorization: Bearer <token>` (401 without). */
  metricsToken?: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests in constant time, so the answer's timing says nothing about the token. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/** GET /healthz, /metrics and /openapi.json: they reveal no values or accounts; /metrics may need a bearer token. */
export const operationalRoutes: FastifyPluginAsync<OperationalRoutesOptions> = async (app, { metrics, openapi, metricsToken }) => {
  const openapiText = JSON.stringify(openapi);
  app.get('/healthz', { schema: { response: { 200: healthResponseSchema } } }, async () => ({ status: 'ok' }));
  app.get('/metrics', async (request, reply) => {
    if (metricsToken !== undefined && !bearerMatches(request.headers.authorization, metricsToken)) {
      throw new ApiError(401, 'unauthorized', '/metrics needs Authorization: Bearer <token> (api.metricsToken, or PGVEIL_METRICS_TOKEN)');
    }
    reply.header('content-type', PROMETHEUS_CONTENT_TYPE);
    return metrics.render();
  });
  app.get('/openapi.json', async (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return openapiText;
  });
};
