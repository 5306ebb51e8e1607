import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig, type ProxyConfig } from '../config/index.js';
import type { CliIo } from './cliIo.js';
import { createLogger } from './logger.js';
import { serveUntilStopped } from './serveLoop.js';
import { servePrimary } from './servePrimary.js';
import { serveWorker } from './serveWorker.js';
import { startServices } from './services.js';
import { WORKER_COUNT_ENV, WORKER_SLOT_ENV } from './workerMessages.js';

export const SERVE_USAGE = 'pgveil serve [--config config/pgveil.yaml]';
export const DEFAULT_CONFIG_PATH = 'config/pgveil.yaml';
/** The backend-key layout has room for this many workers per instance. */
const MAX_WORKERS = 128;

/** How many proxy event loops `proxy.workers` asks for on this machine. */
export function proxyWorkerCount(proxy: ProxyConfig | undefined): number {
  if (proxy === undefined) return 1;
  return proxy.workers === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : proxy.workers;
}

/**
 * `pgveil serve`: validates the configuration, loads the keys, starts the API (and, with the
 * proxy, the proxy), then reloads accounts when the file changes or on SIGHUP until stopped.
 * With `proxy.workers` above 1 this process becomes the primary of that many proxy workers
 * (servePrimary.ts); a worker is this same command, forked with its slot in the environment.
 */
export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, strict: true });
  const file = values.config ?? DEFAULT_CONFIG_PATH;
  const config = await loadConfig(file, { env: io.env });
  const logger = createLogger(config.logging.level);
  const slot = io.env[WORKER_SLOT_ENV];
  if (cluster.isWorker && slot !== undefined) {
    return serveWorker({ file, config, slot: Number(slot), workers: Number(io.env[WORKER_COUNT_ENV]), io, logger });
  }
  const workers = proxyWorkerCount(config.proxy);
  if (workers > 1) return servePrimary({ file, config, workers, io, logger, args: ['serve', '--config', file] });
  const services = await startServices(config, { logger, env: io.env });
  return serveUntilStopped({ file, io, logger, services });
}
