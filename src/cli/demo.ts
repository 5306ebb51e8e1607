import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LOG_LEVELS, type LogLevel } from '../config/index.js';
import type { CliIo } from './cliIo.js';
import { demoConfig, DEMO_POLICIES_FILE } from './demo/demoConfig.js';
import { demoInstructions } from './demo/demoInstructions.js';
import { ensureDemoTable, seedThroughProxy } from './demo/demoSchema.js';
import { assertPortsFree, DEMO_APP_EMAIL, DEMO_PASSWORD, demoPorts } from './demo/demoSettings.js';
import { startDemoDatabase } from './demo/embeddedDatabase.js';
import { createLogger } from './logger.js';
import { startServices } from './services.js';

export const DEMO_USAGE = 'pgveil demo [--dir .pgveil/demo]';

/** Resolves on SIGINT/SIGTERM (or the io's abort signal); `requested` says whether it has. */
function stopRequest(io: CliIo): { done: Promise<void>; requested: () => boolean; dispose: () => void } {
  let requested = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => { resolveDone = r; });
  const stop = (): void => { requested = true; resolveDone(); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  io.signal?.addEventListener('abort', stop, { once: true });
  if (io.signal?.aborted) stop();
  return {
    done,
    requested: () => requested,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
    },
  };
}

/** How long one part may take to stop before the demo moves on to the next (the database last). */
const STOP_DEADLINE_MS = 10_000;

function withDeadline(work: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not stop within ${STOP_DEADLINE_MS / 1000} s`)), STOP_DEADLINE_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function logLevel(io: CliIo): LogLevel {
  const level = io.env.PGVEIL_LOG_LEVEL;
  if (level === undefined || level === '') return 'warn';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`PGVEIL_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return level as LogLevel;
}

/**
 * `pgveil demo`: everything on localhost with no Docker and no database installed — an embedded
 * PostgreSQL kept in a git-ignored folder (reused on the next start), the demo table and rows
 * written through the proxy, the API and the proxy with config/demo-policies.yaml, demo accounts
 * and secrets. Ports: PGVEIL_DEMO_DB_PORT (54329), PGVEIL_API_PORT (8080), PGVEIL_PROXY_PORT (6432).
 */
export async function demoCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { dir: { type: 'string' } }, strict: true });
  const dir = resolve(values.dir ?? join('.pgveil', 'demo'));
  const ports = demoPorts(io.env);
  const level = logLevel(io);
  await assertPortsFree(ports);

  // Listening from the start, so Ctrl-C during startup still stops what has started.
  const stop = stopRequest(io);
  const cleanups: { what: string; stop: () => Promise<void> }[] = [];
  try {
    const database = await startDemoDatabase({ dir, port: ports.database, password: DEMO_PASSWORD });
    cleanups.push({ what: 'the embedded PostgreSQL', stop: () => database.stop() });
    await ensureDemoTable({ port: ports.database, password: DEMO_PASSWORD });

    const config = await demoConfig(dir, ports, level);
    const services = await startServices(config, { logger: createLogger(level), env: io.env });
    cleanups.push({ what: 'the API and the proxy', stop: () => services.close() });

    const seeded = await seedThroughProxy({ port: ports.proxy, user: DEMO_APP_EMAIL, password: DEMO_PASSWORD });
    if (!stop.requested()) {
      io.out(demoInstructions({
        apiUrl: services.api?.url ?? '', ports, dataDir: database.dataDir, created: database.created,
        rows: seeded.rows, inserted: seeded.inserted, policiesFile: DEMO_POLICIES_FILE,
      }));
    }
    await stop.done;
  } catch (error) {
    // Ctrl-C in a terminal also stops PostgreSQL under a starting demo: that is a stop, not a failure.
    if (!stop.requested()) throw error;
  } finally {
    // The proxy and the API before the database they use.
    for (const { what, stop: stopPart } of cleanups.reverse()) {
      await withDeadline(stopPart(), what).catch((error: unknown) => io.err(`pgveil demo: while stopping: ${(error as Error).message}`));
    }
    stop.dispose();
  }
  io.out('pgveil demo stopped');
  return 0;
}
