/**
 * The demo's fixed settings: its secrets, accounts, ports and the environment variables that
 * override the ports. The secrets exist only in demo mode; `pgveil serve` has no default account.
 */
import { createServer } from 'node:net';
import type { Env } from '../../config/index.js';

export const DEMO_PASSWORD = 'pgveil-demo';
export const DEMO_API_KEY = 'pgveil-demo-key';
/** The application's account: it writes the demo rows and logs in to the API in the printed lines. */
export const DEMO_APP_EMAIL = 'app@demo.pgveil';
export const DEMO_ACCOUNTS: readonly { email: string; roles: string[]; sees: string }[] = [
  { email: DEMO_APP_EMAIL, roles: ['app'], sees: 'plaintext' },
  { email: 'support@demo.pgveil', roles: ['support'], sees: 'masks' },
  { email: 'analyst@demo.pgveil', roles: ['analyst'], sees: 'tokens (as stored)' },
];
/** The embedded PostgreSQL's superuser; same password as the accounts, it is a demo. */
export const DEMO_DB_USER = 'postgres';
export const DEMO_DB_NAME = 'postgres';
export const DEMO_HOST = '127.0.0.1';
export const DEMO_READY_LINE = 'pgveil demo ready';

export interface DemoPorts {
  api: number;
  proxy: number;
  database: number;
}

const PORTS: readonly { key: keyof DemoPorts; env: string; fallback: number; what: string }[] = [
  { key: 'database', env: 'PGVEIL_DEMO_DB_PORT', fallback: 54329, what: 'the embedded PostgreSQL' },
  { key: 'api', env: 'PGVEIL_API_PORT', fallback: 8080, what: 'the protection API' },
  { key: 'proxy', env: 'PGVEIL_PROXY_PORT', fallback: 6432, what: 'the Postgres proxy' },
];

/** The three ports, each overridable by its environment variable. */
export function demoPorts(env: Env): DemoPorts {
  const ports = {} as DemoPorts;
  for (const { key, env: name, fallback } of PORTS) {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Error(`${name} must be a port number (1-65535)`);
    ports[key] = value;
  }
  const distinct = new Set(Object.values(ports));
  if (distinct.size !== PORTS.length) throw new Error(`${PORTS.map((p) => p.env).join(', ')} must be three different ports`);
  return ports;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: DEMO_HOST, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Fails before anything starts when a port is taken, naming the variable to change: a half-started
 * demo (database up, proxy refused) would only confuse.
 */
export async function assertPortsFree(ports: DemoPorts): Promise<void> {
  const taken: string[] = [];
  for (const { key, env, what } of PORTS) {
    if (!(await canListen(ports[key]))) taken.push(`port ${ports[key]} (${what}) is already in use on ${DEMO_HOST}: set ${env} to another port`);
  }
  if (taken.length > 0) {
    throw new Error(`${taken.join('; ')}. Is another pgveil demo already running?`);
  }
}
