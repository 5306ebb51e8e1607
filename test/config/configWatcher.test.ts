import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import type { PgveilConfig } from '../../src/config/configTypes.js';
import { watchConfig } from '../../src/config/configWatcher.js';

function waitFor<T>(get: () => T | undefined, ms = 5000): Promise<T> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      const v = get();
      if (v !== undefined) resolve(v);
      else if (Date.now() - start > ms) reject(new Error('timeout'));
      else setTimeout(tick, 20);
    };
    tick();
  });
}

it('reloads when the file changes, including by rename, and keeps the last good configuration on a mistake', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pgveil-watch-'));
  const file = join(dir, 'pgveil.yaml');
  await writeFile(file, 'api: { listen: { port: 1 } }\n');
  const reloaded: PgveilConfig[] = [];
  const errors: unknown[] = [];
  const watcher = watchConfig(file, { env: {}, onReload: (c) => reloaded.push(c), onError: (e) => errors.push(e), debounceMs: 20 });
  try {
    await writeFile(file, 'api: { listen: { port: 2 } }\n');
    await waitFor(() => reloaded.find((c) => c.api.listen.port === 2));
    await writeFile(join(dir, 'next.yaml'), 'api: { listen: { port: 3 } }\n');
    await rename(join(dir, 'next.yaml'), file);
    await waitFor(() => reloaded.find((c) => c.api.listen.port === 3));
    await writeFile(file, 'api: { listen: { port: nope } }\n');
    const err = await waitFor(() => errors[0]);
    expect(err).toBeInstanceOf(ConfigError);
    // An explicit reload (what SIGHUP does) works too.
    await writeFile(join(dir, 'other.txt'), 'unrelated');
    const before = reloaded.length;
    await watcher.reload();
    expect(reloaded.length).toBe(before); // still invalid: nothing applied
  } finally {
    watcher.close();
  }
});
