/**
 * The configuration `pgveil demo` runs: what `pgveil serve` would load from a file, built here
 * with the demo's accounts, its own master key, the API, and the proxy in front of the embedded
 * PostgreSQL with config/demo-policies.yaml.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashApiKey, hashPassword } from '../../auth/index.js';
import { DEFAULTS, type AccountConfig, type LogLevel, type PgveilConfig } from '../../config/index.js';
import { generateMasterKey } from '../../keys/index.js';
import { generateSelfSignedCertificate } from '../../proxy/index.js';
import { DEMO_UPSTREAM_ROLES } from './demoSchema.js';
import {
  DEMO_ACCOUNTS, DEMO_API_KEY, DEMO_DB_NAME, DEMO_DB_USER, DEMO_HOST, DEMO_PASSWORD, type DemoPorts,
} from './demoSettings.js';

/** Shipped in the package (`files` has config/); found from this module, whatever the cwd. */
export const DEMO_POLICIES_FILE = fileURLToPath(new URL('../../../config/demo-policies.yaml', import.meta.url));

/** The demo's master key lives in its folder, next to the data it protects: same tokens on every start. */
async function demoMasterKeyFile(dir: string): Promise<string> {
  const file = join(dir, 'master.key');
  await mkdir(dir, { recursive: true });
  try {
    await readFile(file, 'utf8');
  } catch {
    await writeFile(file, `${generateMasterKey()}\n`, { mode: 0o600 });
  }
  await chmod(file, 0o600);
  return file;
}

/**
 * The proxy's TLS pair, made once and kept: psql asks for TLS by default, and a fixed certificate
 * can be pinned (sslmode=verify-full sslrootcert=…/proxy.crt). Made again if either file is missing.
 */
async function demoTlsPair(dir: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, 'proxy.crt');
  const key = join(dir, 'proxy.key');
  const present = await Promise.all([cert, key].map((file) => readFile(file).then(() => true, () => false)));
  if (!present.every(Boolean)) {
    const pair = generateSelfSignedCertificate({ commonName: 'pgveil demo', altNames: ['localhost', DEMO_HOST] });
    await writeFile(key, pair.key, { mode: 0o600 });
    await writeFile(cert, pair.cert);
  }
  return { cert, key };
}

async function demoAccounts(): Promise<AccountConfig[]> {
  const passwordHash = await hashPassword(DEMO_PASSWORD, 14);
  const apiKeyHash = hashApiKey(DEMO_API_KEY);
  return DEMO_ACCOUNTS.map(({ email, roles }) => ({ email, roles, passwordHash, apiKeyHash, enabled: true }));
}

export async function demoConfig(dir: string, ports: DemoPorts, logLevel: LogLevel): Promise<PgveilConfig> {
  return {
    file: '(demo)',
    api: {
      enabled: true,
      listen: { host: DEMO_HOST, port: ports.api },
      limits: { maxElements: DEFAULTS.maxElements, maxElementBytes: DEFAULTS.maxElementBytes, maxBodyBytes: DEFAULTS.maxBodyBytes, requestTimeoutSeconds: DEFAULTS.requestTimeoutSeconds, maxConnections: DEFAULTS.maxApiConnections },
      loginRateLimit: {
        maxFailuresPerAccount: DEFAULTS.maxFailuresPerAccount,
        maxFailuresPerClient: DEFAULTS.maxFailuresPerClient,
        windowSeconds: DEFAULTS.loginWindowSeconds,
      },
      // The demo's API rights come from its column policies: app protects and unprotects the kinds
      // and scopes it sees in plaintext; support and analyst may only mask and redact.
      grants: [],
    },
    keys: { masterKeyFile: await demoMasterKeyFile(dir), masterKeyEnv: 'PGVEIL_DEMO_MASTER_KEY', keyVersion: 1, previousKeys: [] },
    accounts: await demoAccounts(),
    logging: { level: logLevel },
    // Who saw plaintext, who was refused, who logged in: one JSON line each, beside the demo's data.
    audit: { destination: 'file', file: join(dir, '..', 'audit.log') },
    proxy: {
      listen: { host: DEMO_HOST, port: ports.proxy },
      // TLS when the client asks (psql does by default), and cleartext passwords from loopback,
      // so the printed psql lines work with no TLS setup.
      tls: { mode: 'allow', ...(await demoTlsPair(dir)) },
      allowCleartextFromLoopback: true,
      maxClientConnections: 100,
      maxPendingLogins: 100,
      loginTimeoutSeconds: 10,
      idleTimeoutSeconds: DEFAULTS.idleTimeoutSeconds,
      nativeSocketIo: true,
      maxProtectedValueBytes: DEFAULTS.maxProtectedValueBytes,
      upstream: {
        host: DEMO_HOST, port: ports.database, user: DEMO_DB_USER, password: DEMO_PASSWORD,
        // Named, so the policies are checked against the catalog at start.
        database: DEMO_DB_NAME,
        sslmode: 'disable',
      },
      databases: {},
      // Each demo role reaches PostgreSQL as a least-privilege role of its own (demoSchema.ts);
      // the superuser above is only pgveil's catalog connection.
      upstreamRoles: Object.fromEntries(Object.entries(DEMO_UPSTREAM_ROLES).map(([role, user]) => [role, { user, password: DEMO_PASSWORD }])),
      workers: 1,
      peerId: 0,
      peers: [],
    },
    policies: DEMO_POLICIES_FILE,
  };
}
