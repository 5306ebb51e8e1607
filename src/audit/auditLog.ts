/**
 * The audit log: who saw plaintext, who was refused, who logged in — one JSON line per event, on
 * a destination of its own, never a value, a token or a password. Lines are written synchronously,
 * so an event is on its way to the file or stdout before the response that reveals the plaintext
 * leaves pgveil.
 */
import pino, { type Logger } from 'pino';

export type AuditEvent =
  /** POST /api/<kind> with operation unprotect (tokenise or fpe): plaintext handed out. */
  | { readonly event: 'api.unprotect'; readonly account: string; readonly kind: string; readonly scope: string; readonly method: string; readonly count: number }
  /** A protection call refused for a right the account's roles lack (403). */
  | { readonly event: 'api.refused'; readonly account: string; readonly kind: string; readonly scope: string; readonly method: string; readonly operation: string }
  /** A batch of result rows (at most 2 048) with plaintext of these columns, about to be sent. */
  | { readonly event: 'proxy.reveal'; readonly account: string; readonly roles: readonly string[]; readonly session: number; readonly columns: readonly string[]; readonly rows: number }
  /** A statement, Bind or COPY the proxy refused; `reason` names the rule and columns, never a value. */
  | { readonly event: 'proxy.refused'; readonly account: string; readonly session: number; readonly sqlstate: string; readonly reason: string }
  /** A login through the API or the proxy. */
  | { readonly event: 'login'; readonly door: 'api' | 'proxy'; readonly account: string; readonly client: string | undefined; readonly outcome: 'ok' | 'failed' | 'rate_limited' }
  /**
   * The column policies reloaded (file change or SIGHUP). `generation` and `digest` are those of
   * the set in force afterwards: the new one, or on failure the previous one, which stays.
   */
  | { readonly event: 'policy.reload'; readonly outcome: 'ok' | 'failed'; readonly file: string; readonly generation: number; readonly digest: string; readonly columns: number }
  /** A reloaded configuration's accounts, applied or refused (then the previous ones stay): names and counts only. */
  | ({ readonly event: 'accounts.reload' } & (
    | ({ readonly outcome: 'ok' } & AccountChanges)
    | ({ readonly outcome: 'failed'; readonly reason: 'upstream_login_refused' } & AccountChanges)
    | { readonly outcome: 'failed'; readonly reason: 'invalid_configuration' }
  ))
  /**
   * A reloaded configuration names other keys than those in force (`restart_required`: they take
   * effect at the next start), or keys that cannot be read (`failed`). Versions only.
   */
  | { readonly event: 'keys.reload'; readonly outcome: 'restart_required' | 'failed'; readonly keyVersion: number; readonly versions: readonly number[]; readonly requestedKeyVersion: number; readonly requestedVersions: readonly number[] };

/** What a reload does to the accounts: counts, and the names (emails) of the accounts concerned. */
export interface AccountChanges {
  /** Accounts after the reload (or, refused, in the refused configuration). */
  readonly total: number;
  readonly added: number;
  readonly removed: number;
  /** A new password or API key hash, other roles, enabled or disabled. */
  readonly changed: number;
  /** The emails of the accounts added, removed or changed, sorted. */
  readonly accounts: readonly string[];
}

/** A failed login's email as typed, unless it does not look like one (a password pasted in the wrong field). */
export function auditedAccountName(email: unknown): string {
  return typeof email === 'string' && /^[^\s@]{1,64}@[^\s@]{1,190}$/.test(email.trim()) ? email.trim().toLowerCase() : '(not an email address)';
}

export interface AuditLog {
  record(event: AuditEvent): void;
  /** Events recorded so far, by name (for /metrics). */
  readonly counts?: ReadonlyMap<string, number>;
}

/** An audit line could not be written (disk full, pipe closed): what it records must not happen. */
export class AuditWriteError extends Error {
  constructor(event: string, cause: unknown) {
    super(`pgveil could not write the audit line of ${event}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'AuditWriteError';
  }
}

/**
 * Records an event that discloses nothing (a reload): a line that cannot be written is reported
 * (false) rather than thrown, since the reload has happened. The next disclosure fails on the same
 * destination, so nothing is revealed unrecorded.
 */
export function recordUnlessUnwritable(audit: AuditLog, event: AuditEvent): boolean {
  try {
    audit.record(event);
    return true;
  } catch (error) {
    if (error instanceof AuditWriteError) return false;
    throw error;
  }
}

/** Records nothing (tests, and `audit.destination: off`). */
export const NO_AUDIT: AuditLog = { record: () => undefined };

export type AuditDestination = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string } | { readonly kind: 'off' };

export interface AuditCounters {
  /** Events by name, for /metrics. */
  readonly counts: ReadonlyMap<string, number>;
}

/**
 * `worker` tags every line of a proxy worker process (`proxy.workers` above 1): each worker puts a
 * reload in force on its own, and its line says which one did.
 */
export function createAuditLog(destination: AuditDestination, tags: { readonly worker?: number } = {}): AuditLog & AuditCounters {
  const counts = new Map<string, number>();
  let logger: Logger | undefined;
  /** The error of the write under way, if it failed (reported synchronously: the stream is sync). */
  let failure: unknown;
  if (destination.kind !== 'off') {
    const stream = pino.destination({ dest: destination.kind === 'stdout' ? 1 : destination.path, sync: true, mkdir: true });
    // pino's own handler turns the stream into a no-op on EPIPE (a log shipper that died): every
    // later line would be dropped while plaintext still left. Every failure is the caller's instead.
    stream.removeAllListeners('error');
    stream.on('error', (error: unknown) => {
      failure = error;
    });
    logger = pino({ base: { audit: true, ...tags }, messageKey: 'msg', timestamp: pino.stdTimeFunctions.isoTime }, stream);
  }
  return {
    counts,
    record(event) {
      counts.set(event.event, (counts.get(event.event) ?? 0) + 1);
      failure = undefined;
      logger?.info(event);
      // Unwritten, the line fails what it records: the caller sends nothing it would have recorded.
      if (failure !== undefined) throw new AuditWriteError(event.event, failure);
    },
  };
}
