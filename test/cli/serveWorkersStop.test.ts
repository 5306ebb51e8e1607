/**
 * `pgveil serve` with proxy.workers: 2 stops whatever its workers do: a worker stopped (SIGSTOP) or
 * stuck is killed after the grace, also when the stop comes while the workers are still starting,
 * and no process is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_STOP_GRACE_MS } from '../../src/cli/proxyWorkerPool.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { freePort } from './support/cliHarness.js';
import { alive, serveConfig, spawnServe, startServe, stopServe, waitUntil, workerPids, type LogLine } from './support/serveProcesses.js';

let database: TestPostgres;
beforeAll(async () => { database = await startTestPostgres(); });
afterAll(async () => database?.stop());

describe('pgveil serve with proxy.workers: 2, stopping', () => {
  it('a worker that does not stop on SIGTERM is killed after the grace, and the primary exits', async () => {
    const proxyPort = await freePort();
    const { file } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 });
    const serve = await startServe(database, file, generateMasterKey());
    let stuck: (LogLine & { pid: number }) | undefined;
    try {
      const ready = () => serve.lines().filter((line) => line.msg === 'proxy worker ready');
      await waitUntil(() => ready().length === 2, 5000, serve.stdout);
      stuck = ready()[0] as LogLine & { pid: number };
      const stuckPid = stuck.pid;
      process.kill(stuckPid, 'SIGSTOP'); // a SIGTERM stays pending while a process is stopped
      const asked = Date.now();
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(Date.now() - asked).toBeGreaterThanOrEqual(WORKER_STOP_GRACE_MS - 1000);
      expect(serve.lines().find((line) => line.msg === 'proxy worker did not stop after SIGTERM; killing it')).toMatchObject({ worker: stuck.worker, pid: stuckPid });
      await waitUntil(() => !alive(stuckPid), 5000);
      // The other worker stopped on its own, as asked.
      expect(serve.lines().filter((line) => line.msg === 'stopped' && line.worker !== undefined).map((line) => line.worker)).toEqual([stuck.worker === 0 ? 1 : 0]);
    } finally {
      if (stuck !== undefined && alive(stuck.pid)) process.kill(stuck.pid, 'SIGKILL');
      await stopServe(serve);
    }
  }, 30_000);

  it('SIGTERM while the workers start stops them (a stuck one after the grace) and leaves no process behind', async () => {
    const proxyPort = await freePort();
    const { file } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 });
    const serve = spawnServe(database, file, generateMasterKey(), await freePort());
    const pid = serve.child.pid as number;
    let workers: number[] = [];
    try {
      // The first worker seen is stopped at once: it cannot finish starting (nor stop on SIGTERM).
      await waitUntil(() => workerPids(pid).length > 0, 20_000, serve.stdout);
      workers = workerPids(pid);
      process.kill(workers[0] as number, 'SIGSTOP');
      await waitUntil(() => workerPids(pid).length === 2, 10_000, serve.stdout);
      workers = workerPids(pid);
      expect(serve.lines().some((line) => line.msg === 'Postgres proxy listening' && line.worker === undefined)).toBe(false);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.lines().some((line) => line.msg === 'stopping while the proxy workers start')).toBe(true);
      await waitUntil(() => workers.every((worker) => !alive(worker)), 5000);
    } finally {
      for (const worker of workers) if (alive(worker)) process.kill(worker, 'SIGKILL');
      await stopServe(serve);
    }
  }, 45_000);
});
