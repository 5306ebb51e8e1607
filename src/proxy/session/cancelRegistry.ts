/**
 * Proxy-issued backend keys. Clients get a (process id, secret) the proxy made up; a CancelRequest
 * carrying it is matched here and forwarded with the upstream's own key, which clients never see.
 * The process id also names this instance and worker (see backendKeyLayout.ts), so a cancel that
 * lands elsewhere can be routed back here.
 */
import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { encodeProcessId, MAX_SESSION_NUMBER, type BackendKeyOwner } from './backendKeyLayout.js';

export interface IssuedBackendKey {
  processId: number;
  secretKey: number;
  release(): void;
}

interface Entry {
  secret: Buffer;
  cancel: () => void;
}

export class CancelRegistry {
  private readonly entries = new Map<number, Entry>();

  constructor(private readonly owner: BackendKeyOwner = { peerId: 0, workerSlot: 0 }) {}

  issue(cancel: () => void): IssuedBackendKey {
    // Past the session numbers of one worker, a session cannot be given a key that routes back here.
    if (this.entries.size >= MAX_SESSION_NUMBER) throw new Error('no free cancel key in this worker');
    let processId: number;
    do processId = encodeProcessId(this.owner, randomInt(1, MAX_SESSION_NUMBER + 1));
    while (this.entries.has(processId));
    const secret = randomBytes(4);
    this.entries.set(processId, { secret, cancel });
    return {
      processId,
      secretKey: secret.readInt32BE(0),
      release: () => {
        if (this.entries.get(processId)?.secret === secret) this.entries.delete(processId);
      },
    };
  }

  /** Runs the session's cancel when the key matches; false otherwise (ignored, as PostgreSQL does). */
  cancel(processId: number, secretKey: Buffer): boolean {
    const entry = this.entries.get(processId);
    if (!entry || secretKey.length !== entry.secret.length || !timingSafeEqual(secretKey, entry.secret)) return false;
    entry.cancel();
    return true;
  }
}
