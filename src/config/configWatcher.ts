import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { PgveilConfig } from './configTypes.js';
import type { Env } from './envOverrides.js';
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
}

/**
 * Watches the configuration file so that account changes (disable, remove, new password) apply
 * without a restart. The folder is watched, not the file: editors replace files by renaming.
 */
export function watchConfig(file: string, opts: WatchConfigOptions): ConfigWatcher {
  const debounceMs = opts.debounceMs ?? 100;
  let timer: NodeJS.Timeout | undefined;
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

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (name !== null && name !== basename(file)) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => { void reload(); }, debounceMs);
    });
  } catch (err) {
    opts.onError(err);
  }
  return {
    reload,
    close() {
      if (timer) clearTimeout(timer);
      watcher?.close();
    },
  };
}
