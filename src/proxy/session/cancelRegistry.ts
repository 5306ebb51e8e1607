/**
 * Proxy-issued backend keys. Clients get a (process id, secret) the proxy made up; a CancelRequest
 * carrying it is matched here and forwarded with the upstream's own key, which clients never see.
 */
import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

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

  issue(cancel: () => void): IssuedBackendKey {
    let processId: number;
    do processId = randomInt(1, 0x7fffffff);
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
