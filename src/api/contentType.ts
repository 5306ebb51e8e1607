import type { FastifyRequest } from 'fastify';
import { ApiError } from './apiError.js';

/**
 * The contract requires Content-Type: application/json on every POST. Fastify answers 415 itself
 * for a body of another type; this also catches a request with no Content-Type at all.
 */
export async function requireJsonContentType(request: FastifyRequest): Promise<void> {
  const header = request.headers['content-type'];
  const type = (header ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');
  }
}
