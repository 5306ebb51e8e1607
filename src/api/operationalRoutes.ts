import type { FastifyPluginAsync } from 'fastify';
import { PROMETHEUS_CONTENT_TYPE, type ApiMetrics } from './metrics.js';
import { healthResponseSchema } from './schemas.js';

export interface OperationalRoutesOptions {
  metrics: ApiMetrics;
  openapi: Record<string, unknown>;
}

/** GET /healthz, /metrics and /openapi.json: unauthenticated, they reveal no values or accounts. */
export const operationalRoutes: FastifyPluginAsync<OperationalRoutesOptions> = async (app, { metrics, openapi }) => {
  const openapiText = JSON.stringify(openapi);
  app.get('/healthz', { schema: { response: { 200: healthResponseSchema } } }, async () => ({ status: 'ok' }));
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', PROMETHEUS_CONTENT_TYPE);
    return metrics.render();
  });
  app.get('/openapi.json', async (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return openapiText;
  });
};
