import type { PgveilConfig } from './configTypes.js';
import type { Env } from './envOverrides.js';
import { watchFileChanges, type FileChangeWatcher } from './fileChangeWatcher.js';
import { loadConfig } from './loadConfig.js';

export interface ConfigWatcher {
  /** Reloads now (also what SIGHUP triggers). Resolves once the reload was applied or refused. */
  reload(): Promise<void>;
  close(): void;
}

export interface WatchConfigOptions {
  env?: Env;
  /** Called with each new valid configuration. */
  onReload(config: PgveilConfig): void;
  /** Called when the changed file does not validate; the previous configuration stays. */
  onError(err: unknown): void;
  debounceMs?: number;
  /**
   * Reload when the file changes. Default true; a proxy worker passes false and reloads on its
   * primary's word, so that every process of one instance reloads from the same event.
   */
  watchFile?: boolean;
}

/**
 * Watches the configuration file so that account changes (disable, remove, new password) apply
 * without a restart.
 */
export function watchConfig(file: string, opts: WatchConfigOptions): ConfigWatcher {
  let chain: Promise<void> = Promise.resolve();

  const reload = (): Promise<void> => {
    chain = chain.then(async () => {
      try {
        const config = await loadConfig(file, opts.env === undefined ? {} : { env: opts.env });
        opts.onReload(config);
      } catch (err) {
        opts.onError(err);
      }
    });
    return chain;
  };

  const watcher: FileChangeWatcher | undefined = opts.watchFile === false ? undefined : watchFileChanges(file, {
    onChange: () => { void reload(); },
    onError: (err) => opts.onError(err),
    ...(opts.debounceMs === undefined ? {} : { debounceMs: opts.debounceMs }),
  });
  return {
    reload,
    close() {
      watcher?.close();
    },
  };
}
