/**
 * One proxy worker of `pgveil serve` (forked by the primary, servePrimary.ts): it loads the same
 * configuration, keys, policies and engine, serves the proxy port (connections come from the
 * primary in turn), reloads on the primary's word as on SIGHUP (it watches no file itself: the
 * primary does, so that no worker can stay behind on a change the others saw), and stops on SIGTERM/SIGINT
 * ending every session with 57P01, as a lone `pgveil serve` does.
 */
import type { Logger } from 'pino';
import type { PgveilConfig } from '../config/index.js';
import type { CliIo } from './cliIo.js';
import { serveUntilStopped } from './serveLoop.js';
import { startServices } from './services.js';
import { asPrimaryMessage, cancelMessage, loginCountedMessage, type WorkerMessage } from './workerMessages.js';

export interface ServeWorkerOptions {
  readonly file: string;
  readonly config: PgveilConfig;
  readonly slot: number;
  readonly workers: number;
  readonly io: CliIo;
  readonly logger: Logger;
}

/**
 * The connection limits are the instance's: each worker admits its share, so N workers together do
 * not open N times the connections PostgreSQL was sized for. The failed-login limits need no share:
 * the counts themselves are shared, through the primary.
 */
function workerShare(config: PgveilConfig, workers: number): PgveilConfig {
  if (config.proxy === undefined || !(workers > 1)) return config;
  const share = (limit: number): number => Math.max(1, Math.ceil(limit / workers));
  return {
    ...config,
    proxy: { ...config.proxy, maxClientConnections: share(config.proxy.maxClientConnections), maxPendingLogins: share(config.proxy.maxPendingLogins) },
  };
}

export async function serveWorker(options: ServeWorkerOptions): Promise<number> {
  const { slot, io } = options;
  // Every line of this process says which worker wrote it.
  const logger = options.logger.child({ worker: slot });
  const send = (message: WorkerMessage): void => {
    if (process.connected) process.send?.(message);
  };
  const services = await startServices(workerShare(options.config, options.workers), {
    logger, env: io.env,
    proxyWorker: { slot, workers: options.workers, toWorker: (workerSlot, processId, secretKey) => send(cancelMessage(workerSlot, processId, secretKey)) },
  });
  const countLogin = services.auth.shareLoginCounts((login) => send(loginCountedMessage(login)));
  const onMessage = (raw: unknown): void => {
    const message = asPrimaryMessage(raw);
    if (message === undefined) return;
    if (message.kind === 'pgveil.login') {
      countLogin(message.login);
    } else if (message.kind === 'pgveil.reload') {
      logger.debug('proxy worker: reloading, as the primary got SIGHUP');
      // The same listeners as a SIGHUP sent to this process: configuration and policy file.
      process.emit('SIGHUP', 'SIGHUP');
    } else if (message.workerSlot === slot) {
      services.cancelHere(message.processId, Buffer.from(message.secretKey, 'base64'));
    }
  };
  process.on('message', onMessage);
  send({ kind: 'pgveil.ready' });
  const code = await serveUntilStopped({ file: options.file, io, logger, services, watchFile: false });
  process.off('message', onMessage);
  // The IPC channel would keep this process alive once its sessions are over.
  if (process.connected) process.disconnect();
  return code;
}
