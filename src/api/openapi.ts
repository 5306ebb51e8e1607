import { KINDS, LANG_KINDS } from '../engine/index.js';
import {
  errorResponseSchema, healthResponseSchema, loginRequestSchema, loginResponseSchema,
  protectionRequestSchema, protectionResponseSchema,
} from './schemas.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: Json): Json => ({ 'application/json': { schema } });
const errorResponse = (description: string): Json => ({ description, content: jsonContent(ref('Error')) });

const PROTECTION_ERRORS: Json = {
  400: errorResponse('malformed JSON, a body nesting deeper than 16 levels, wrong field types, unknown method/lang/operation, lang on a kind without it, conflicting options, non-string elements (`indexes`)'),
  401: errorResponse('missing, wrong or expired credentials, or a disabled account'),
  403: errorResponse('the account\'s roles may not protect or unprotect this kind and scope with tokenise or fpe (code `forbidden`)'),
  413: errorResponse('too many elements, an element too long (`indexes`), or a body too large'),
  415: errorResponse('Content-Type is not application/json'),
  422: errorResponse('elements that are not values of this kind (`indexes`)'),
};

function protectionPath(kind: string): Json {
  const lang = LANG_KINDS.has(kind as never) ? ' Accepts `lang`.' : ' Does not accept `lang` (400).';
  return {
    post: {
      operationId: `${kind}Protection`,
      tags: ['protection'],
      summary: `Protect or unprotect ${kind} values`,
      description: `Transforms every element of \`data\` as a ${kind}; results come back in the same order.${lang}`
        + ' `method`, `scope` and `noise` may be given in `options` or at the top level (different values in both: 400).',
      security: [{ apiKey: [], jwtToken: [], svcToken: [] }],
      requestBody: { required: true, content: jsonContent(ref('ProtectionRequest')) },
      responses: {
        200: { description: 'the results', content: jsonContent(ref('ProtectionResponse')) },
        ...PROTECTION_ERRORS,
      },
    },
  };
}

/** The OpenAPI 3.1 document of the API, built from the schemas the routes validate with. */
export function buildOpenApiDocument(version: string): Json {
  const paths: Json = {
    '/auth/login': {
      post: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in: returns the jwt_token and svc_token (valid 24 hours)',
        requestBody: { required: true, content: jsonContent(ref('LoginRequest')) },
        responses: {
          201: { description: 'logged in', content: jsonContent(ref('LoginResponse')) },
          400: errorResponse('malformed body'),
          401: errorResponse('wrong email or password, or a disabled account'),
          413: errorResponse('a body over 16 KiB'),
          415: errorResponse('Content-Type is not application/json'),
          429: errorResponse('too many failed logins; see Retry-After'),
        },
      },
    },
  };
  for (const kind of KINDS) paths[`/api/${kind}`] = protectionPath(kind);
  paths['/healthz'] = {
    get: { operationId: 'health', tags: ['operations'], summary: 'Liveness', responses: { 200: { description: 'up', content: jsonContent(healthResponseSchema) } } },
  };
  paths['/metrics'] = {
    get: {
      operationId: 'metrics', tags: ['operations'], summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  };
  paths['/openapi.json'] = {
    get: { operationId: 'openapi', tags: ['operations'], summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1', content: jsonContent({ type: 'object' }) } } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'pgveil protection API',
      version,
      description: 'Protects and unprotects arrays of sensitive values of fourteen kinds. Every failing request gets {statusCode, error, message}.',
    },
    paths,
    components: {
      schemas: {
        ProtectionRequest: protectionRequestSchema(true),
        ProtectionResponse: protectionResponseSchema,
        LoginRequest: loginRequestSchema,
        LoginResponse: loginResponseSchema,
        Error: errorResponseSchema,
      },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        jwtToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'the jwt_token; "Bearer " is optional' },
        svcToken: { type: 'apiKey', in: 'header', name: 'svc-token' },
      },
    },
  };
}
