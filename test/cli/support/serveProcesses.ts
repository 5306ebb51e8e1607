/**
 * `pgveil serve` as a real process tree for the tests (a primary and its proxy workers, run from
 * the sources under tsx): a configuration with one account, the process and its JSON log lines, its
 * workers as /proc sees them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseDocument } from 'yaml';
import { main } from '../../../src/cli/main.js';
import { WORKER_SLOT_ENV } from '../../../src/cli/workerMessages.js';
import type { TestPostgres } from '../../support/postgres.js';
import { captureIo, freePort, printedSecrets } from './cliHarness.js';

export interface LogLine { msg?: string; worker?: number; pid?: number; to?: number; why?: string; native?: Record<string, string>; level: number }

export interface RunningServe {
  child: ChildProcess;
  apiPort: number;
  lines(): LogLine[];
  stdout(): string;
  exited: Promise<number | null>;
}

export async function serveConfig(database: TestPostgres, proxy: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ file: string; password: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pgveil-workers-'));
  const file = join(dir, 'pgveil.yaml');
  await copyFile('config/pgveil.example.yaml', file);
  const io = captureIo();
  expect(await main(['account', 'add', '--config', file, '--email', 'ops@example.com', '--roles', 'admin'], io)).toBe(0);
  const { password } = printedSecrets(io.stdout.join('\n'));
  const doc = parseDocument(await readFile(file, 'utf8'));
  doc.set('proxy', doc.createNode({
    tls: { mode: 'disable' },
    allowCleartextFromLoopback: true,
    upstream: { host: database.host, port: database.port, user: database.user, sslmode: 'disable' },
    ...proxy,
  }));
  for (const [key, value] of Object.entries(extra)) doc.set(key, doc.createNode(value));
  await writeFile(file, doc.toString());
  return { file, password };
}

/** `pgveil serve` started, not yet listening. */
export function spawnServe(database: TestPostgres, file: string, masterKey: string, apiPort: number): RunningServe {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', file], {
    env: {
      ...process.env, PGVEIL_MASTER_KEY: masterKey, PGVEIL_API_PORT: String(apiPort),
      PGVEIL_UPSTREAM_PASSWORD: database.password, PGVEIL_LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { stdout += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const running: RunningServe = {
    child, apiPort, exited, stdout: () => stdout,
    lines: () => stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine),
  };
  return running;
}

export async function startServe(database: TestPostgres, file: string, masterKey: string): Promise<RunningServe> {
  const running = spawnServe(database, file, masterKey, await freePort());
  try {
    // The primary's line (workers say it too, before the primary is ready for signals).
    await waitUntil(() => running.lines().some((line) => line.msg === 'Postgres proxy listening' && line.worker === undefined), 30_000, running.stdout);
  } catch (error) {
    await stopServe(running); // not left behind when it does not start in time
    throw error;
  }
  return running;
}

/**
 * The proxy workers a primary forked, from /proc: its children whose environment carries a worker
 * slot (under tsx the primary has other children, such as esbuild's service).
 */
export function workerPids(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      return readFileSync(`/proc/${child}/environ`, 'utf8').split('\0').some((entry) => entry.startsWith(`${WORKER_SLOT_ENV}=`));
    } catch {
      return false;
    }
  });
}

/** Running or stopped; not a zombie (one left to an init that does not reap counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

export async function waitUntil(done: () => boolean, ms: number, why: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${why()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function stopServe(serve: RunningServe): Promise<void> {
  if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  await serve.exited;
}
