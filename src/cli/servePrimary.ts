/**
 * `pgveil serve` with `proxy.workers` above 1: this process is the primary. It serves the API, keeps
 * the signals and the reloads (SIGHUP, and a change to the configuration or policy file, is passed
 * to every worker; workers watch no file, so one missed file event cannot leave one worker on the
 * old accounts or policies while the others moved on) and forks the proxy workers (proxyWorkerPool.ts).
 *
 * Why node:cluster and not worker_threads: the proxy port must be shared. Node 20's net.Server has
 * no reusePort (it arrived in 22.12 / 23.1, and only on Linux and BSDs), so separate listeners
 * cannot share a port; cluster's primary accepts and hands each connection to a worker in turn
 * (round-robin, the default everywhere but Windows), which also balances better than the kernel's
 * SO_REUSEPORT hashing. Threads would share one process's memory but not a listening socket, and
 * handing sockets between threads is not possible in Node. Processes also isolate a crash: one
 * worker dying ends its sessions only, and it is restarted. After the hand-over the primary is out
 * of the data path (the worker owns the socket), so it relays no traffic, only cancels.
 */
import type { Logger } from 'pino';
import { watchFileChanges, type PgveilConfig } from '../config/index.js';
import type { CountedLogin } from '../auth/index.js';
import type { CliIo } from './cliIo.js';
import { ProxyWorkerPool } from './proxyWorkerPool.js';
import { serveUntilStopped } from './serveLoop.js';
import { startServices } from './services.js';

export interface ServePrimaryOptions {
  readonly file: string;
  readonly config: PgveilConfig;
  readonly workers: number;
  readonly io: CliIo;
  readonly logger: Logger;
  /** The command line the workers run. */
  readonly args: readonly string[];
}

/** SIGINT/SIGTERM (or the io's abort) while the workers start; `release` hands the signals back to serveUntilStopped. */
function stopSignalWhileStarting(io: CliIo): { signalled: Promise<string>; release(): void } {
  let release = (): void => undefined;
  const signalled = new Promise<string>((resolve) => {
    const onInt = (): void => resolve('SIGINT');
    const onTerm = (): void => resolve('SIGTERM');
    const onAbort = (): void => resolve('abort');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    io.signal?.addEventListener('abort', onAbort, { once: true });
    if (io.signal?.aborted) resolve('abort');
    release = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      io.signal?.removeEventListener('abort', onAbort);
    };
  });
  return { signalled, release };
}

export async function servePrimary(options: ServePrimaryOptions): Promise<number> {
  const { config, logger, io } = options;
  const services = await startServices(config, { logger, env: io.env, withoutProxy: true });
  // One failed-login budget for the instance: the API here and every worker count each other's.
  let countLogin: (login: CountedLogin) => void = () => undefined;
  const pool = new ProxyWorkerPool(options.workers, logger, options.args, (login) => countLogin(login));
  countLogin = services.auth.shareLoginCounts((login) => pool.shareLogin(login));
  // Watching starts before the workers do: a change while they start reaches each once it is ready.
  // The one watch of the configuration file also reloads this process's own (the API's accounts).
  let reloadOwnConfiguration: (() => void) | undefined;
  let ownReloadWaiting = false; // a change before this process's serve loop runs: reloaded once it does
  const watch = (file: string, alsoHere: boolean) => watchFileChanges(file, {
    onChange: () => {
      logger.info({ file }, 'file changed: telling every proxy worker to reload');
      if (alsoHere && reloadOwnConfiguration !== undefined) reloadOwnConfiguration();
      else if (alsoHere) ownReloadWaiting = true;
      pool.reload();
    },
    onError: () => logger.error({ file }, 'cannot watch this file: pgveil reloads it on SIGHUP only'),
  });
  const watchers = [watch(options.file, true), ...(config.policies === undefined ? [] : [watch(config.policies, false)])];
  // A stop asked while the workers start stops them too: without it the primary would die at
  // once and leave a worker that is not answering (stuck, or stopped) behind.
  const stopWhileStarting = stopSignalWhileStarting(io);
  const stopBeforeServing = async (): Promise<void> => {
    for (const watcher of watchers) watcher.close();
    await pool.stop();
    await services.close();
  };
  let stoppedBy: string | undefined;
  try {
    stoppedBy = await Promise.race([pool.start().then(() => undefined), stopWhileStarting.signalled]);
  } catch (error) {
    stopWhileStarting.release();
    await stopBeforeServing();
    throw error;
  }
  stopWhileStarting.release();
  if (stoppedBy !== undefined) {
    logger.info({ why: stoppedBy }, 'stopping while the proxy workers start');
    await stopBeforeServing();
    logger.info({ why: stoppedBy }, 'stopped');
    logger.flush();
    return 0;
  }
  logger.info({ port: config.proxy?.listen.port, workers: options.workers }, 'Postgres proxy listening');
  return serveUntilStopped({
    file: options.file, io, logger, services, watchFile: false,
    takeReload: (reload) => {
      reloadOwnConfiguration = reload;
      if (ownReloadWaiting) reload();
    },
    onSighup: () => {
      logger.info('SIGHUP: reloading, and telling every proxy worker');
      pool.reload();
    },
    beforeClose: () => {
      for (const watcher of watchers) watcher.close();
      return pool.stop();
    },
  });
}
