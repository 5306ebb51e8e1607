import type { ConfigReader, KeyPath } from './configReader.js';
import {
  DEFAULTS, PROXY_TLS_MODES, UPSTREAM_SSL_MODES,
  type ProxyConfig, type ProxyPeerConfig, type ProxyTlsConfig, type UpstreamConfig, type UpstreamLoginConfig,
} from './configTypes.js';
import { ROLE_NAME } from './accountsSection.js';

const PROXY_KEYS = [
  'listen', 'tls', 'allowCleartextFromLoopback', 'maxClientConnections', 'maxPendingLogins', 'loginTimeoutSeconds', 'maxProtectedValueBytes',
  'idleTimeoutSeconds', 'nativeSocketIo', 'upstream', 'databases', 'upstreamRoles', 'workers', 'peerId', 'peers',
] as const;
const PEER_KEYS = ['id', 'host', 'port'] as const;
/** Bounds of the backend-key layout (the proxy's backendKeyLayout.ts): 6 bits of peer id, 7 of worker. */
const MAX_PEER_ID = 63;
const MAX_WORKERS = 128;
const LOGIN_KEYS = ['user', 'password', 'passwordEnv'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LISTEN_KEYS = ['host', 'port'] as const;
const TLS_KEYS = ['mode', 'cert', 'key'] as const;
const UPSTREAM_KEYS = ['host', 'port', 'user', 'password', 'database', 'sslmode', 'ca'] as const;

function readTls(r: ConfigReader, value: unknown, path: KeyPath): ProxyTlsConfig {
  const tls = r.map(value, path, TLS_KEYS) ?? {};
  const out: ProxyTlsConfig = { mode: r.choice(tls, 'mode', path, PROXY_TLS_MODES, DEFAULTS.proxyTlsMode) };
  const cert = r.path(tls, 'cert', path);
  const key = r.path(tls, 'key', path);
  if ((cert === undefined) !== (key === undefined)) {
    r.issue(path, 'give both cert and key, or neither (a self-signed pair is then generated)');
  } else if (cert !== undefined && key !== undefined) {
    out.cert = cert;
    out.key = key;
  }
  return out;
}

function readUpstream(r: ConfigReader, value: unknown, path: KeyPath): UpstreamConfig {
  const up = r.map(value, path, UPSTREAM_KEYS) ?? {};
  if (value === undefined || value === null) r.issue(path, 'is required: the PostgreSQL server the proxy connects to');
  const out: UpstreamConfig = {
    host: r.string(up, 'host', path) ?? DEFAULTS.upstreamHost,
    port: r.integer(up, 'port', path, DEFAULTS.upstreamPort, 1, 65535),
    user: r.string(up, 'user', path, { required: value !== undefined && value !== null }) ?? '',
    sslmode: r.choice(up, 'sslmode', path, UPSTREAM_SSL_MODES, DEFAULTS.upstreamSslMode),
  };
  // The password may legitimately be empty (trust auth), so it is read as a plain string.
  const password = up['password'];
  if (password !== undefined && password !== null) {
    if (typeof password !== 'string') r.issue([...path, 'password'], 'must be a string');
    else out.password = password;
  }
  const database = r.string(up, 'database', path);
  if (database !== undefined) out.database = database;
  const ca = r.path(up, 'ca', path);
  if (ca !== undefined) out.ca = ca;
  return out;
}

/** The entries of an optional mapping; reports `what` it must be when it is something else. */
function mappingEntries(r: ConfigReader, value: unknown, path: KeyPath, what: string): [string, unknown][] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    r.issue(path, `must be a mapping of ${what}`);
    return [];
  }
  return Object.entries(value as Record<string, unknown>);
}

function readDatabases(r: ConfigReader, value: unknown, path: KeyPath): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, target] of mappingEntries(r, value, path, 'client database name to upstream database name')) {
    if (typeof target !== 'string' || target === '') {
      r.issue([...path, name], 'must be the name of an upstream database');
    } else {
      out[name] = target;
    }
  }
  return out;
}

function readUpstreamRoles(r: ConfigReader, value: unknown, path: KeyPath): Record<string, UpstreamLoginConfig> {
  const out: Record<string, UpstreamLoginConfig> = {};
  const example = 'pgveil role to its upstream login, e.g. support: { user: pgveil_support, passwordEnv: PGVEIL_SUPPORT_PASSWORD }';
  for (const [role, entry] of mappingEntries(r, value, path, example)) {
    const rp: KeyPath = [...path, role];
    if (!ROLE_NAME.test(role)) r.issue(rp, 'must be a role name', true);
    const login = r.map(entry, rp, LOGIN_KEYS);
    if (!login) continue;
    const user = r.string(login, 'user', rp, { required: true });
    if (user === undefined) continue;
    const config: UpstreamLoginConfig = { user };
    const password = login['password'];
    if (password !== undefined && password !== null) {
      if (typeof password !== 'string') r.issue([...rp, 'password'], 'must be a string');
      else config.password = password;
    }
    const passwordEnv = r.string(login, 'passwordEnv', rp);
    if (passwordEnv !== undefined) {
      if (!ENV_NAME.test(passwordEnv)) r.issue([...rp, 'passwordEnv'], 'must be an environment variable name');
      else if (config.password !== undefined) r.issue(rp, 'give password or passwordEnv, not both');
      else config.passwordEnv = passwordEnv;
    }
    out[role] = config;
  }
  return out;
}

function readWorkers(r: ConfigReader, proxy: Record<string, unknown>, path: KeyPath): number | 'auto' {
  if (proxy['workers'] === 'auto') return 'auto';
  if (typeof proxy['workers'] === 'string') {
    r.issue([...path, 'workers'], `must be auto or an integer from 1 to ${MAX_WORKERS}`);
    return 1;
  }
  return r.integer(proxy, 'workers', path, 1, 1, MAX_WORKERS);
}

function readPeers(r: ConfigReader, proxy: Record<string, unknown>, path: KeyPath): { peerId: number; peers: ProxyPeerConfig[] } {
  const peerId = r.integer(proxy, 'peerId', path, 0, 1, MAX_PEER_ID);
  const list = r.list(proxy['peers'], [...path, 'peers']) ?? [];
  const peers: ProxyPeerConfig[] = [];
  const seen = new Set<number>();
  list.forEach((entry, index) => {
    const pp: KeyPath = [...path, 'peers', index];
    const peer = r.map(entry, pp, PEER_KEYS);
    if (!peer) return;
    if (peer['id'] === undefined || peer['id'] === null) r.issue([...pp, 'id'], `is required: the peer's proxy.peerId (1 to ${MAX_PEER_ID})`);
    const id = r.integer(peer, 'id', pp, 0, 1, MAX_PEER_ID);
    const host = r.string(peer, 'host', pp, { required: true });
    if (peer['port'] === undefined || peer['port'] === null) r.issue([...pp, 'port'], "is required: the peer's proxy port");
    const port = r.integer(peer, 'port', pp, 0, 1, 65535);
    if (id !== 0 && seen.has(id)) r.issue([...pp, 'id'], 'this peer id is already used by another entry');
    seen.add(id);
    if (id !== 0 && host !== undefined && port !== 0) peers.push({ id, host, port });
  });
  if (list.length > 0 && peerId === 0) {
    r.issue([...path, 'peerId'], `is required with proxy.peers: this instance's id among its peers (1 to ${MAX_PEER_ID}), unique to each instance`);
  }
  return { peerId, peers };
}

/** The `proxy` section; the wire-protocol proxy reads it, the API ignores it. */
export function readProxySection(r: ConfigReader, value: unknown): ProxyConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const path: KeyPath = ['proxy'];
  const proxy = r.map(value, path, PROXY_KEYS);
  if (!proxy) return undefined;
  const listen = r.map(proxy['listen'], [...path, 'listen'], LISTEN_KEYS) ?? {};
  const lp: KeyPath = [...path, 'listen'];
  return {
    listen: {
      host: r.string(listen, 'host', lp) ?? DEFAULTS.proxyHost,
      port: r.port(listen, 'port', lp, DEFAULTS.proxyPort),
    },
    tls: readTls(r, proxy['tls'], [...path, 'tls']),
    allowCleartextFromLoopback: r.boolean(proxy, 'allowCleartextFromLoopback', path, false),
    maxClientConnections: r.integer(proxy, 'maxClientConnections', path, DEFAULTS.maxClientConnections, 1, 1_000_000),
    maxPendingLogins: r.integer(proxy, 'maxPendingLogins', path, 100, 1, 1_000_000),
    loginTimeoutSeconds: r.integer(proxy, 'loginTimeoutSeconds', path, 10, 1, 3600),
    maxProtectedValueBytes: r.integer(proxy, 'maxProtectedValueBytes', path, DEFAULTS.maxProtectedValueBytes, 16, 16 * 1024 * 1024),
    idleTimeoutSeconds: r.integer(proxy, 'idleTimeoutSeconds', path, DEFAULTS.idleTimeoutSeconds, 0, 365 * 24 * 3600),
    nativeSocketIo: r.boolean(proxy, 'nativeSocketIo', path, true),
    upstream: readUpstream(r, proxy['upstream'], [...path, 'upstream']),
    databases: readDatabases(r, proxy['databases'], [...path, 'databases']),
    upstreamRoles: readUpstreamRoles(r, proxy['upstreamRoles'], [...path, 'upstreamRoles']),
    workers: readWorkers(r, proxy, path),
    ...readPeers(r, proxy, path),
  };
}
