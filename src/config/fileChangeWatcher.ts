import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface FileChangeWatcher {
  close(): void;
}

export interface WatchFileChangesOptions {
  /** Quiet time after the last event before `onChange` runs. Default 100 ms. */
  readonly debounceMs?: number;
  readonly onChange: () => void;
  /** The folder cannot be watched (it is gone, or the system's watch limit is reached). */
  readonly onError: (error: unknown) => void;
}

/**
 * Calls `onChange` once a burst of changes to `file` has settled. The folder is watched, not the
 * file: editors replace files by renaming, which a watch on the file itself would lose.
 */
export function watchFileChanges(file: string, options: WatchFileChangesOptions): FileChangeWatcher {
  const name = basename(file);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(options.onChange, options.debounceMs ?? 100);
    });
    watcher.on('error', options.onError);
  } catch (error) {
    options.onError(error);
  }
  return {
    close() {
      if (timer) clearTimeout(timer);
      watcher?.close();
    },
  };
}
