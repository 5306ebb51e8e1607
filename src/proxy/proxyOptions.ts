/** The proxy's configuration: what the config loader produces and `startProxy` takes. */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/index.js';
import type { AccountAuthenticator } from '../auth/index.js';
import type { SessionHooksFactory } from './session/sessionHooks.js';
import { POSTGRES_LARGE_MESSAGE_LIMIT } from './protocol/messageLimits.js';

export type ClientTlsMode = 'disable' | 'allow' | 'require';
export type UpstreamSslMode = 'disable' | 'prefer' | 'require' | 'verify-full';

export interface ClientTlsOptions {
  /** disable: answer SSLRequest with 'N'; allow: TLS when asked; require: refuse plaintext clients. */
  mode: ClientTlsMode;
  /** PEM certificate chain and private key. Absent: a self-signed pair is generated at start (local use). */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface UpstreamOptions {
  /** A host name or address; or, as in libpq, a directory holding PostgreSQL's Unix-domain socket. */
  host: string;
  port: number;
  /** The proxy's own credentials; clients never see them. */
  user: string;
  password?: string;
  /** The upstream database when the client's database has no entry in `databases`. */
  database?: string;
  sslmode: UpstreamSslMode;
  /** PEM CA certificate(s) for verify-full. */
  ca?: string | Buffer;
}

/** A PostgreSQL login: the server asks for the password only when its pg_hba method needs one. */
export interface UpstreamLogin {
  readonly user: string;
  readonly password?: string;
}

export interface ProxyOptions {
  host: string;
  /** 0 picks a free port (see the `port` of the started proxy). */
  port: number;
  tls: ClientTlsOptions;
  /** Ask for a cleartext password over a plaintext connection when the client is on loopback. */
  allowCleartextFromLoopback: boolean;
  maxClientConnections: number;
  /** Close sessions idle (no query running, no traffic) this long; 0 disables. */
  idleTimeoutSeconds: number;
  upstream: UpstreamOptions;
  /**
   * Client database name → upstream database name. When it has entries, other names are refused;
   * when empty, every name maps to `upstream.database`, or passes unchanged if that is unset.
   */
  databases: Record<string, string>;
  /**
   * pgveil role → the upstream login its sessions use instead of `upstream.user` (least privilege
   * per role). An account logs in as the login of its mapped roles (they must agree), else as
   * `upstream.user`.
   */
  upstreamLogins?: ReadonlyMap<string, UpstreamLogin>;
  /** Where logins are recorded; nowhere by default. */
  audit?: AuditLog;
  authenticator: AccountAuthenticator;
  logger: Logger;
  /** Column policies plug in here (part 2). Default: every message passes as the same bytes. */
  hooks?: SessionHooksFactory;
  /** Largest Query/Parse/Bind/COPY message accepted from a client. Default: PostgreSQL's 1 GiB - 1. */
  maxMessageBytes?: number;
  /** Connect and handshake timeout, for clients and for the upstream. Default 30 s. */
  handshakeTimeoutSeconds?: number;
  /** From accept to authenticated: a client slower than this is closed. Default 10 s. */
  loginTimeoutSeconds?: number;
  /** Connections still logging in, counted apart from maxClientConnections. Default 100. */
  maxPendingLogins?: number;
  /** Which instance and worker this proxy is, for the backend keys it issues and the cancels it routes. Default: a lone proxy. */
  cancelRouting?: CancelRoutingOptions;
  /**
   * Plaintext sessions' sockets are read and written by the native socket addon once logged in
   * (when it is built). Default true; false keeps every session on Node's streams.
   */
  nativeSocketIo?: boolean;
}

/** Another pgveil instance cancels are forwarded to (`proxy.peers`). */
export interface CancelPeer {
  readonly id: number;
  readonly host: string;
  readonly port: number;
}

export interface CancelRoutingOptions {
  /** This instance (0 without peering). */
  readonly peerId: number;
  /** This worker inside the instance (0 with one worker). */
  readonly workerSlot: number;
  /** Workers of this instance (slots 0..workers-1). Default 1. */
  readonly workers?: number;
  readonly peers: readonly CancelPeer[];
  /** Hands a cancel for a session of another worker of this instance to that worker. */
  readonly toWorker?: (workerSlot: number, processId: number, secretKey: Buffer) => void;
  /** Cancels being forwarded to peers at once; past it they are dropped. Default 16. */
  readonly maxConcurrentForwards?: number;
}

export const DEFAULT_MAX_MESSAGE_BYTES = POSTGRES_LARGE_MESSAGE_LIMIT;
export const DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 30;
export const DEFAULT_LOGIN_TIMEOUT_SECONDS = 10;
export const DEFAULT_MAX_PENDING_LOGINS = 100;

/** Resolves the client database name to the upstream one; null when it is not served. */
export function mapDatabase(options: Pick<ProxyOptions, 'databases' | 'upstream'>, clientDatabase: string): string | null {
  const names = Object.keys(options.databases);
  if (names.length > 0) {
    return Object.hasOwn(options.databases, clientDatabase) ? (options.databases[clientDatabase] as string) : null;
  }
  return options.upstream.database ?? clientDatabase;
}
