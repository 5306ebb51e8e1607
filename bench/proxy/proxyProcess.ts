/**
 * Runs pgveil's proxy alone in this process, for the benchmark: options as JSON in PGVEIL_BENCH_PROXY,
 * one account (user/password from the same JSON). Prints `port=<n>` once listening.
 */
import pino from 'pino';
import { startProxy, type UpstreamOptions } from '../../src/proxy/index.js';

interface BenchProxyConfig {
  upstream: UpstreamOptions;
  databases: Record<string, string>;
  account: { email: string; password: string };
}

const config = JSON.parse(process.env.PGVEIL_BENCH_PROXY ?? '{}') as BenchProxyConfig;
const proxy = await startProxy({
  host: '127.0.0.1',
  port: 0,
  tls: { mode: 'disable' },
  allowCleartextFromLoopback: true,
  maxClientConnections: 200,
  idleTimeoutSeconds: 0,
  upstream: config.upstream,
  databases: config.databases,
  authenticator: {
    authenticateDbUser: async (email, secret) =>
      email === config.account.email && secret === config.account.password ? { email, roles: ['bench'] } : null,
  },
  logger: pino({ level: 'warn' }),
});
process.stdout.write(`port=${proxy.port}\n`);
process.on('SIGTERM', () => {
  void proxy.close().then(() => process.exit(0));
});
