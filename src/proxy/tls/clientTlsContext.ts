/** The TLS context for client connections: the configured certificate, or a generated self-signed one. */
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { ClientTlsOptions } from '../proxyOptions.js';
import { generateSelfSignedCertificate } from './selfSignedCertificate.js';

export function createClientTlsContext(options: ClientTlsOptions, logger: Logger): tls.SecureContext | null {
  if (options.mode === 'disable') return null;
  let { cert, key } = options;
  if (cert === undefined || key === undefined) {
    if (cert !== undefined || key !== undefined) throw new Error('proxy tls: give both cert and key, or neither');
    ({ cert, key } = generateSelfSignedCertificate());
    logger.warn('proxy tls: no certificate configured; using a self-signed one generated at start (local use only)');
  }
  return tls.createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
}
