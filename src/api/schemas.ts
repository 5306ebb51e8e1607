import { LANG_KINDS, LANGS, METHODS, OPERATIONS } from '../engine/index.js';

/**
 * JSON Schemas of the API: fastify validates bodies and serialises responses with them, and the
 * OpenAPI document is built from them. Validation checks shapes and types only; names (method,
 * lang, operation, kind) are checked by the engine so its error lists the valid choices, and the
 * enums appear in the OpenAPI document only (`documented`).
 */

type Schema = Record<string, unknown>;

function optionFields(documented: boolean): Record<string, Schema> {
  const withEnum = (base: Schema, values: readonly string[]): Schema => (documented ? { ...base, enum: [...values] } : base);
  return {
    method: withEnum({ type: 'string', description: 'transformation method; default tokenise' }, METHODS),
    scope: { type: 'string', description: 'separates tokens across applications or datasets; default no-scope' },
    noise: {
      type: ['integer', 'string'],
      description: '0 (default) gives deterministic tokens within a scope; non-zero adds a random nonce (tokenise only). An integer or a string of one',
    },
    lang: withEnum({
      type: 'string',
      description: `script of the input; only on ${[...LANG_KINDS].join(', ')}; default en`,
    }, LANGS),
  };
}

export function protectionRequestSchema(documented = false): Schema {
  const options = optionFields(documented);
  return {
    type: 'object',
    required: ['id', 'operation', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'integer', description: 'identifier of the request (not echoed)' },
      operation: documented ? { type: 'string', enum: [...OPERATIONS] } : { type: 'string' },
      data: {
        type: 'array',
        description: 'values to transform; strings only (400 with `indexes` otherwise)',
        ...(documented ? { items: { type: 'string' } } : {}),
      },
      options: { type: 'object', additionalProperties: false, properties: options },
      // The seed's scenario listings put these beside `operation`; both placements are accepted.
      method: options['method'],
      scope: options['scope'],
      noise: options['noise'],
      lang: options['lang'],
    },
  };
}

export const protectionResponseSchema: Schema = {
  type: 'object',
  required: ['operation', 'result'],
  properties: {
    operation: { type: 'string', enum: [...OPERATIONS] },
    result: { type: 'array', items: { type: 'string' } },
    method: { type: 'string', enum: [...METHODS], description: 'on protect' },
    scope: { type: 'string', description: 'on protect, when a scope was supplied' },
    noise: { type: 'string', description: 'on protect, when noise was supplied' },
    discrepancy: {
      type: 'object',
      description: 'only on unprotect, only when some elements were not valid tokens of this scope',
      properties: {
        invalid_token: { type: 'array', items: { type: 'integer' } },
        invalid_scope: { type: 'array', items: { type: 'integer' } },
      },
    },
  },
};

export const loginRequestSchema: Schema = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
};

export const loginResponseSchema: Schema = {
  type: 'object',
  required: ['statusCode', 'message', 'jwt_token', 'svc_token'],
  properties: {
    statusCode: { type: 'integer', enum: [201] },
    message: { type: 'string' },
    jwt_token: { type: 'string', description: 'for the Authorization header (with or without "Bearer "); valid 24 hours' },
    svc_token: { type: 'string', description: 'for the svc-token header; valid 24 hours' },
  },
};

export const errorResponseSchema: Schema = {
  type: 'object',
  required: ['statusCode', 'error', 'message'],
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string' },
    message: { type: 'string' },
    code: { type: 'string', description: 'machine-readable reason, e.g. invalid_value, unknown_method' },
    indexes: { type: 'array', items: { type: 'integer' }, description: 'zero-based indexes of the data elements concerned' },
  },
};

export const healthResponseSchema: Schema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};
