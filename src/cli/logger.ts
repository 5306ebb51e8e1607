import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/index.js';

/**
 * The process logger (JSON lines on stdout). pgveil never logs values, tokens, passwords or keys;
 * the redaction list is a safety net for fields with those names should one slip into a log call.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'pgveil' },
    redact: {
      paths: [
        'password', '*.password', 'secret', '*.secret', 'token', '*.token',
        'jwt_token', '*.jwt_token', 'svc_token', '*.svc_token', 'apiKey', '*.apiKey',
        'masterKey', '*.masterKey', 'data', '*.data', 'result', '*.result',
        'req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["svc-token"]',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
