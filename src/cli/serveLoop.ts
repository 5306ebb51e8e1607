import type { Logger } from 'pino';
import { ConfigError, watchConfig } from '../config/index.js';
import type { CliIo } from './cliIo.js';
import type { RunningServices } from './services.js';

export interface ServeLoopOptions {
  readonly file: string;
  readonly io: CliIo;
  readonly logger: Logger;
  readonly services: RunningServices;
  /** Also run on SIGHUP (the primary tells its workers). */
  readonly onSighup?: () => void;
  /** Reload when the configuration file changes (default true; a proxy worker leaves it to its primary). */
  readonly watchFile?: boolean;
  /**
   * Given this process's reload of the configuration (what SIGHUP runs here, without `onSighup`),
   * for a caller that watches the file itself (the primary, whose one watch also tells the workers).
   */
  readonly takeReload?: (reload: () => void) => void;
  /** Runs first when stopping, before the services close (the primary stops its workers). */
  readonly beforeClose?: () => Promise<void>;
}

function waitForStop(io: CliIo): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(why);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    if (io.signal?.aborted) stop('abort');
    io.signal?.addEventListener('abort', () => stop('abort'), { once: true });
  });
}

/** Reloads accounts when the file changes or on SIGHUP until SIGINT/SIGTERM (or the io's signal), then closes the services. */
export async function serveUntilStopped(options: ServeLoopOptions): Promise<number> {
  const { file, io, logger, services } = options;
  const watcher = watchConfig(file, {
    env: io.env,
    watchFile: options.watchFile ?? true,
    onReload: (next) => services.applyConfig(next),
    onError: (err) => {
      // Validation messages carry locations and key paths, never values.
      const message = err instanceof ConfigError ? err.message : 'cannot reload the configuration';
      logger.error({ file }, `configuration not reloaded; the previous one stays:\n${message}`);
      services.configRefused();
    },
  });
  const onHup = () => {
    void watcher.reload();
    options.onSighup?.();
  };
  process.on('SIGHUP', onHup);
  options.takeReload?.(() => { void watcher.reload(); });

  const why = await waitForStop(io);
  logger.info({ why }, 'stopping');
  process.off('SIGHUP', onHup);
  watcher.close();
  await options.beforeClose?.();
  await services.close();
  logger.info({ why }, 'stopped');
  logger.flush();
  return 0;
}
