/**
 * Runs pgveil's proxy alone in this process, for the benchmarks: options as JSON in PGVEIL_BENCH_PROXY,
 * one account (user/password from the same JSON, role `bench`). With `policiesFile` and
 * `masterKeyHex` the column policies are applied through an engine, as `pgveil serve` does.
 * Prints `port=<n>` once listening.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import type { UpstreamOptions } from '../../src/proxy/index.js';
import { compiled } from '../compiled.js';

/** PGVEIL_BENCH_DIST: another build's dist/ to run instead of this checkout's (proxyBenchmark's baseline). */
const dist = process.env.PGVEIL_BENCH_DIST === undefined ? undefined : pathToFileURL(`${path.resolve(process.env.PGVEIL_BENCH_DIST)}/`);
const { createEngine } = await compiled<typeof import('../../src/engine/index.js')>('engine/index.js', dist);
const { openPolicyStore } = await compiled<typeof import('../../src/policy/index.js')>('policy/index.js', dist);
const { startProxy } = await compiled<typeof import('../../src/proxy/index.js')>('proxy/index.js', dist);
const { createPolicyHooks } = await compiled<typeof import('../../src/proxy/enforcement/index.js')>('proxy/enforcement/index.js', dist);

interface BenchProxyConfig {
  upstream: UpstreamOptions;
  databases: Record<string, string>;
  account: { email: string; password: string };
  policiesFile?: string;
  masterKeyHex?: string;
  /** false: sessions on Node's streams (proxy.nativeSocketIo); default as pgveil's. */
  nativeSocketIo?: boolean;
}

const config = JSON.parse(process.env.PGVEIL_BENCH_PROXY ?? '{}') as BenchProxyConfig;
const logger = pino({ level: 'warn' });
let hooks: Awaited<ReturnType<typeof createPolicyHooks>> | undefined;
if (config.policiesFile !== undefined) {
  const policies = await openPolicyStore({ file: config.policiesFile, watchFile: false, reloadOnSighup: false });
  const engine = createEngine({ masterKey: Buffer.from(config.masterKeyHex ?? '', 'hex') });
  hooks = await createPolicyHooks({ policies, engine, upstream: config.upstream, logger });
}
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
    // The bench's one account never changes.
    stillAuthorises: () => true,
    onAccountsChanged: () => () => undefined,
  },
  logger,
  ...(hooks ? { hooks: hooks.factory } : {}),
  ...(config.nativeSocketIo === undefined ? {} : { nativeSocketIo: config.nativeSocketIo }),
});
process.stdout.write(`port=${proxy.port}\n`);
process.on('SIGTERM', () => {
  void proxy.close().then(() => {
    hooks?.close();
    process.exit(0);
  });
});
