import { parseArgs } from 'node:util';
import { ConfigError, watchConfig, loadConfig } from '../config/index.js';
import type { CliIo } from './cliIo.js';
import { createLogger } from './logger.js';
import { startServices } from './services.js';

export const SERVE_USAGE = 'pgveil serve [--config config/pgveil.yaml]';
export const DEFAULT_CONFIG_PATH = 'config/pgveil.yaml';

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

/**
 * `pgveil serve`: validates the configuration, loads the keys, starts the API (and, with the
 * proxy, the proxy), then reloads accounts when the file changes or on SIGHUP until stopped.
 */
export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, strict: true });
  const file = values.config ?? DEFAULT_CONFIG_PATH;
  const config = await loadConfig(file, { env: io.env });
  const logger = createLogger(config.logging.level);
  const services = await startServices(config, { logger, env: io.env });

  const watcher = watchConfig(file, {
    env: io.env,
    onReload: (next) => services.applyConfig(next),
    onError: (err) => {
      // Validation messages carry locations and key paths, never values.
      const message = err instanceof ConfigError ? err.message : 'cannot reload the configuration';
      logger.error({ file }, `configuration not reloaded; the previous one stays:\n${message}`);
      services.configRefused();
    },
  });
  const onHup = () => { void watcher.reload(); };
  process.on('SIGHUP', onHup);

  const why = await waitForStop(io);
  logger.info({ why }, 'stopping');
  process.off('SIGHUP', onHup);
  watcher.close();
  await services.close();
  logger.info({ why }, 'stopped');
  logger.flush();
  return 0;
}
