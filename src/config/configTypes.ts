/**
 * The validated pgveil configuration: what `loadConfig` returns. Every optional setting of the
 * YAML file has its default filled in here, so consumers never re-apply defaults.
 * Relative paths are already resolved against the configuration file's folder.
 */

export interface ListenAddress {
  host: string;
  port: number;
}

export interface ApiLimits {
  /** Most elements in one request's `data` (413 above). */
  maxElements: number;
  /** Most UTF-8 bytes in one element (413 above). */
  maxElementBytes: number;
  /** Most bytes in one request body (413 above). */
  maxBodyBytes: number;
  /** Most seconds to receive a whole request, headers and body (408 after). */
  requestTimeoutSeconds: number;
  /** Most connections open at once; further ones are closed as they arrive. */
  maxConnections: number;
}

export interface LoginRateLimit {
  /** Failed logins allowed per account within the window before 429. */
  maxFailuresPerAccount: number;
  /** Failed logins allowed per client address within the window before 429. */
  maxFailuresPerClient: number;
  windowSeconds: number;
}

/**
 * A grant of API rights beyond those the column policies give: the roles may `protect` and/or
 * `unprotect` values of these kinds in these scopes (tokenise and fpe; mask, redact and
 * passthrough reveal nothing and need no grant). `'*'` means every kind or every scope.
 */
export interface ApiGrant {
  roles: string[];
  kinds: string[] | '*';
  scopes: string[] | '*';
  operations: ('protect' | 'unprotect')[];
}

export interface ApiConfig {
  enabled: boolean;
  listen: ListenAddress;
  limits: ApiLimits;
  loginRateLimit: LoginRateLimit;
  /** Rights granted on top of those derived from the column policies (default: none). */
  grants: ApiGrant[];
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

/** Where one master key comes from; exactly one of the two is set after validation. */
export interface KeySource {
  /** Absolute path of a file holding the base64 key. */
  file?: string;
  /** Name of an environment variable holding the base64 key. */
  env?: string;
}

export interface PreviousKeyConfig extends KeySource {
  version: number;
}

export interface KeysConfig {
  /** The current master key file, if any (the environment variable wins when set). */
  masterKeyFile?: string;
  /** Name of the environment variable that may hold the current master key. */
  masterKeyEnv: string;
  keyVersion: number;
  previousKeys: PreviousKeyConfig[];
}

export interface AccountConfig {
  /** Lower-cased, trimmed. */
  email: string;
  /** scrypt PHC string: $scrypt$ln=17,r=8,p=1$salt$hash (other costs within SCRYPT_BOUNDS verify too) */
  passwordHash: string;
  /** $sha256$digest of the API key. */
  apiKeyHash: string;
  roles: string[];
  enabled: boolean;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggingConfig {
  level: LogLevel;
}

export const PROXY_TLS_MODES = ['disable', 'allow', 'require'] as const;
export type ProxyTlsMode = (typeof PROXY_TLS_MODES)[number];

export const UPSTREAM_SSL_MODES = ['disable', 'prefer', 'require', 'verify-full'] as const;
export type UpstreamSslMode = (typeof UPSTREAM_SSL_MODES)[number];

export interface ProxyTlsConfig {
  mode: ProxyTlsMode;
  /** Certificate and key paths; both or neither (then a self-signed pair is generated). */
  cert?: string;
  key?: string;
}

export interface UpstreamConfig {
  host: string;
  port: number;
  user: string;
  password?: string;
  /** Upstream database; when absent, the database the client asked for. */
  database?: string;
  sslmode: UpstreamSslMode;
  /** CA bundle path for verify-full; system CAs when absent. */
  ca?: string;
}

/** An upstream PostgreSQL login a pgveil role's sessions use instead of `upstream.user`. */
export interface UpstreamLoginConfig {
  user: string;
  password?: string;
  /** Name of an environment variable holding the password (read at start). */
  passwordEnv?: string;
}

export interface ProxyConfig {
  listen: ListenAddress;
  tls: ProxyTlsConfig;
  allowCleartextFromLoopback: boolean;
  maxClientConnections: number;
  /** Connections still logging in, counted apart from maxClientConnections (refused with 53300 past it). */
  maxPendingLogins: number;
  /** From accept to authenticated, in seconds. */
  loginTimeoutSeconds: number;
  /** 0 = no idle timeout. */
  idleTimeoutSeconds: number;
  /** Relay logged-in plaintext sessions through the native socket addon when it is built. */
  nativeSocketIo: boolean;
  /** The longest value pgveil protects on the write path, in UTF-8 bytes; longer ones are refused (54000). */
  maxProtectedValueBytes: number;
  upstream: UpstreamConfig;
  /** Client database name → upstream database name. */
  databases: Record<string, string>;
  /** pgveil role → the upstream login its sessions use (least privilege); others use `upstream.user`. */
  upstreamRoles: Record<string, UpstreamLoginConfig>;
  /** Event loops serving the proxy port: a count, or `auto` (the machine's available parallelism). */
  workers: number | 'auto';
  /** This instance among `peers` (0 without peering). */
  peerId: number;
  /** Other pgveil instances a CancelRequest for their sessions is forwarded to. */
  peers: ProxyPeerConfig[];
}

/** A pgveil instance of `proxy.peers`: its peer id and its proxy address. */
export interface ProxyPeerConfig {
  id: number;
  host: string;
  port: number;
}

/** Where audit events go: a file of their own, standard output, or nowhere. */
export type AuditConfig = { destination: 'stdout' } | { destination: 'file'; file: string } | { destination: 'off' };

export interface PgveilConfig {
  /** Absolute path of the file this came from (for messages and reloads). */
  file: string;
  api: ApiConfig;
  keys: KeysConfig;
  accounts: AccountConfig[];
  logging: LoggingConfig;
  audit: AuditConfig;
  /** Absent when the file has no `proxy` section: only the API is served. */
  proxy?: ProxyConfig;
  /** Path of the YAML column-policy file, when configured. */
  policies?: string;
}

export const DEFAULTS = {
  apiHost: '127.0.0.1',
  apiPort: 8080,
  maxElements: 10_000,
  maxElementBytes: 4096,
  maxProtectedValueBytes: 4096,
  maxBodyBytes: 10 * 1024 * 1024,
  requestTimeoutSeconds: 60,
  maxApiConnections: 1000,
  maxFailuresPerAccount: 5,
  maxFailuresPerClient: 20,
  loginWindowSeconds: 900,
  masterKeyEnv: 'PGVEIL_MASTER_KEY',
  keyVersion: 1,
  logLevel: 'info' as LogLevel,
  proxyHost: '127.0.0.1',
  proxyPort: 6432,
  proxyTlsMode: 'allow' as ProxyTlsMode,
  maxClientConnections: 1000,
  idleTimeoutSeconds: 0,
  upstreamHost: '127.0.0.1',
  upstreamPort: 5432,
  upstreamSslMode: 'prefer' as UpstreamSslMode,
} as const;
