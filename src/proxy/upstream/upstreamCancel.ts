/** Forwards a cancel to PostgreSQL: a new connection carrying the upstream's own backend key. */
import { cancelRequest } from '../protocol/messages.js';
import type { UpstreamOptions } from '../proxyOptions.js';
import type { UpstreamBackendKey } from './upstreamConnector.js';
import { openUpstreamTransport } from './upstreamTransport.js';

/** Resolves once PostgreSQL closed the cancel connection (it never answers), or on failure/timeout. */
export async function cancelUpstreamQuery(upstream: UpstreamOptions, key: UpstreamBackendKey, timeoutMs: number): Promise<void> {
  // libpq sends cancels in plaintext unless TLS is mandatory; PostgreSQL accepts both.
  const transportOptions: UpstreamOptions = upstream.sslmode === 'prefer' ? { ...upstream, sslmode: 'disable' } : upstream;
  const socket = await openUpstreamTransport(transportOptions, timeoutMs);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.on('error', () => socket.destroy());
    socket.on('data', () => undefined);
    socket.end(cancelRequest(key.processId, key.secretKey));
  });
}
