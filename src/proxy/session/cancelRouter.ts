/**
 * Where a CancelRequest goes. The key's process id names the instance and worker holding the
 * session (backendKeyLayout.ts): this worker checks the secret itself; another worker of this
 * instance gets it over IPC (checked there); another instance in `proxy.peers` gets it as a plain
 * CancelRequest marked as forwarded, which is never forwarded again. Anything else (an unknown
 * peer, a forged or stale key) is dropped without an answer, as PostgreSQL does. Secrets are
 * never logged.
 */
import net from 'node:net';
import type { Logger } from 'pino';
import { cancelRequest } from '../protocol/messages.js';
import type { CancelRoutingOptions } from '../proxyOptions.js';
import { decodeProcessId, markForwarded, withoutForwardMark } from './backendKeyLayout.js';
import type { CancelRegistry } from './cancelRegistry.js';
import { WarningThrottle } from './warningThrottle.js';

export type CancelRoute = 'here' | 'worker' | 'peer' | 'dropped';

export const DEFAULT_MAX_CONCURRENT_FORWARDS = 16;
const FORWARD_TIMEOUT_MS = 5000;

export class CancelRouter {
  private readonly peerWarnings: WarningThrottle;
  private forwarding = 0;
  private readonly peers: ReadonlyMap<number, { host: string; port: number }>;
  private readonly maxForwards: number;

  constructor(
    private readonly registry: CancelRegistry,
    private readonly routing: CancelRoutingOptions,
    private readonly logger: Logger,
  ) {
    // This instance's own id is never a forwarding target, whatever the list says.
    this.peers = new Map(routing.peers.filter((peer) => peer.id !== routing.peerId).map((peer) => [peer.id, peer]));
    this.maxForwards = routing.maxConcurrentForwards ?? DEFAULT_MAX_CONCURRENT_FORWARDS;
    this.peerWarnings = new WarningThrottle(logger);
  }

  /** Routes a cancel that reached this worker; says which way it went (for logs and tests). */
  route(processId: number, secretKey: Buffer): CancelRoute {
    const key = decodeProcessId(processId);
    const issued = withoutForwardMark(processId);
    if (key.peerId !== this.routing.peerId) {
      const peer = this.peers.get(key.peerId);
      if (key.forwarded || peer === undefined) return this.dropped('names no peer this instance forwards to');
      if (this.forwarding >= this.maxForwards) return this.dropped('too many cancels being forwarded');
      this.forward(peer, markForwarded(issued), secretKey);
      this.logger.debug({ peer: key.peerId }, 'proxy: cancel forwarded to its peer');
      return 'peer';
    }
    if (key.workerSlot !== this.routing.workerSlot) {
      if (this.routing.toWorker === undefined || key.workerSlot >= (this.routing.workers ?? 1)) return this.dropped('names no worker of this instance');
      this.routing.toWorker(key.workerSlot, issued, secretKey);
      this.logger.debug({ to: key.workerSlot }, 'proxy: cancel relayed to the worker holding the session');
      return 'worker';
    }
    if (!this.registry.cancel(issued, secretKey)) return this.dropped('matches no session');
    this.logger.debug('proxy: cancel delivered to its session');
    return 'here';
  }

  private dropped(why: string): CancelRoute {
    this.logger.debug({ why }, 'proxy: cancel dropped');
    return 'dropped';
  }

  private forward(peer: { host: string; port: number }, processId: number, secretKey: Buffer): void {
    this.forwarding++;
    const socket = net.connect({ host: peer.host, port: peer.port });
    const timer = setTimeout(() => socket.destroy(), FORWARD_TIMEOUT_MS);
    // Any client can ask for forwards to an unreachable peer: the warnings are throttled.
    socket.on('error', (error) => this.peerWarnings.warn({ err: { message: error.message }, peer: peer.host }, 'proxy: cancel could not reach its peer'));
    socket.on('data', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      this.forwarding--;
    });
    socket.end(cancelRequest(processId, secretKey));
  }
}
