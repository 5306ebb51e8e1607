import { STATUS_CODES } from 'node:http';
import { AuthError } from '../auth/index.js';
import { ProtectionError, type ProtectionErrorCode } from '../engine/index.js';
import { ApiError } from './apiError.js';

/** The body of every failing response. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
  /** Zero-based indexes of the `data` elements concerned, for per-element problems. */
  indexes?: number[];
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

const PROTECTION_STATUS: Record<ProtectionErrorCode, number> = {
  unknown_kind: 400,
  unknown_method: 400,
  unknown_lang: 400,
  unknown_operation: 400,
  lang_not_supported: 400,
  invalid_noise: 400,
  noise_not_supported: 400,
  invalid_scope: 400,
  invalid_data: 400,
  not_a_string: 400,
  not_reversible: 400,
  invalid_value: 422,
  domain_too_small: 422,
  value_too_long: 413,
};

/** Fastify's own errors, with messages that never quote the request (a JSON parse error would). */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', message: 'Content-Type must be application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'the request body is larger than the limit' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'bad_request', message: 'Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'the body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'the body is not valid JSON' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_request', message: 'the URL is malformed' },
  FST_ERR_NOT_FOUND: { status: 404, code: 'not_found', message: 'no such endpoint' },
};

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
}

function body(status: number, code: string, message: string, indexes?: number[]): ErrorBody {
  const out: ErrorBody = { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, code };
  if (indexes !== undefined) out.indexes = indexes;
  return out;
}

/** "body.options.noise must be integer,string" from ajv's first issue; names fields, not values. */
function validationMessage(issues: AjvIssue[], context: string): string {
  const first = issues[0];
  if (!first) return `${context} is invalid`;
  const where = context + (first.instancePath ?? '').replace(/\//g, '.');
  const params = first.params ?? {};
  if (first.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
    return `${where} has an unknown field "${params['additionalProperty'].slice(0, 64)}"`;
  }
  if (first.keyword === 'required' && typeof params['missingProperty'] === 'string') {
    return `${where} must have the field "${params['missingProperty']}"`;
  }
  return `${where} ${first.message ?? 'is invalid'}`;
}

/**
 * The one place where failures become HTTP responses: the contract's {statusCode, error, message}
 * (plus `code`, and `indexes` where elements are concerned) for every error, fastify's included.
 * Anything not recognised is a 500 whose message says nothing about the request.
 */
export function toHttpError(err: unknown): HttpError {
  const headers: Record<string, string> = {};
  if (err instanceof ApiError) {
    return { status: err.statusCode, body: body(err.statusCode, err.code, err.message, err.indexes), headers };
  }
  if (err instanceof ProtectionError) {
    const status = PROTECTION_STATUS[err.code] ?? 400;
    return { status, body: body(status, err.code, err.message, err.indexes), headers };
  }
  if (err instanceof AuthError) {
    if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
    const code = err.failure === 'rate_limited' ? 'rate_limited' : 'unauthorized';
    return { status: err.statusCode, body: body(err.statusCode, code, err.message), headers };
  }
  const fe = (typeof err === 'object' && err !== null ? err : {}) as FrameworkError;
  if (Array.isArray(fe.validation)) {
    const context = typeof fe.validationContext === 'string' ? fe.validationContext : 'body';
    return { status: 400, body: body(400, 'invalid_body', validationMessage(fe.validation as AjvIssue[], context)), headers };
  }
  const known = typeof fe.code === 'string' ? FASTIFY_ERRORS[fe.code] : undefined;
  if (known) return { status: known.status, body: body(known.status, known.code, known.message), headers };
  if (err instanceof SyntaxError) return { status: 400, body: body(400, 'invalid_json', 'the body is not valid JSON'), headers };
  // Prototype-poisoning and other parser rejections carry a 4xx status of their own.
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    return { status, body: body(status, 'bad_request', STATUS_CODES[status] ?? 'bad request'), headers };
  }
  return { status: 500, body: body(500, 'internal_error', 'internal error'), headers };
}
