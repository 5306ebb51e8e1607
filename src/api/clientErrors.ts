/**
 * Requests refused by Node's HTTP parser, before any route: malformed HTTP, headers over the size
 * limit, a request not received in time. Fastify's own handler logs the parser's error at trace
 * level, and that error carries `rawPacket`, the bytes read so far: the headers (x-api-key,
 * Authorization, svc-token) and the body (a login's password) of that request and of any sent
 * before it on the connection. Here only the error's code is logged, and the answer is the API's
 * error shape, naming the rule.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';

/** Node's default maxHeaderSize, which the API keeps. */
const MAX_HEADER_KIB = 16;

interface Refusal {
  status: number;
  code: string;
  message: string;
}

function refusalFor(errorCode: string, requestTimeoutSeconds: number): Refusal {
  switch (errorCode) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408, code: 'request_timeout',
        message: `the request was not received within ${requestTimeoutSeconds} s (api.limits.requestTimeoutSeconds)`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'headers_too_large', message: `the request headers are larger than ${MAX_HEADER_KIB} KiB` };
    default:
      return { status: 400, code: 'malformed_request', message: 'the request is not well-formed HTTP/1.1' };
  }
}

/** The parser's error code, when it looks like one (they are Node's constants, never request text). */
function codeOf(error: ConnectionError): string {
  const code: unknown = error.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : 'unknown';
}

/** Fastify's `clientErrorHandler` (called with the instance as `this`). */
export function clientErrorHandler(requestTimeoutSeconds: number): (this: FastifyInstance, error: ConnectionError, socket: Socket) => void {
  return function onClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
    const errorCode = codeOf(error);
    // A reset connection: nobody to answer.
    if (errorCode === 'ECONNRESET' || socket.destroyed) return;
    const { status, code, message } = refusalFor(errorCode, requestTimeoutSeconds);
    // The code only: the error's other fields quote the request's bytes.
    this.log.debug({ errorCode }, 'client error');
    if (socket.writable) {
      const reason = STATUS_CODES[status] ?? 'Error';
      const body = JSON.stringify({ statusCode: status, error: reason, message, code });
      socket.write(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}
