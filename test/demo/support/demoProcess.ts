/**
 * Runs the demo as a user would: the real command in its own process group (as a terminal runs
 * a foreground job), Ctrl-C as SIGINT to that whole group, and what is left afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { DEMO_READY_LINE } from '../../../src/cli/demo/demoSettings.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DemoProcess {
  readonly child: ChildProcess;
  /** Everything printed so far, stdout and stderr apart. */
  output(): { stdout: string; stderr: string };
  /** Resolves with stdout once the ready line is complete; rejects if the process ends first. */
  ready(timeoutMs: number): Promise<string>;
  /** Ctrl-C: SIGINT to the process group; resolves with how the spawned process ended. */
  interrupt(timeoutMs: number): Promise<Exit>;
  /** Last resort after a failed test: SIGINT, then SIGKILL to the group. */
  kill(): Promise<void>;
}

export function startDemoProcess(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): DemoProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch { /* the group is gone */ }
  };
  const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
    Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`)), ms).unref())]);

  return {
    child,
    output: () => ({ stdout, stderr }),
    ready: (timeoutMs) => within(new Promise<string>((resolve, reject) => {
      const check = (): void => {
        if (new RegExp(`^${DEMO_READY_LINE}.*\\n`, 'm').test(stdout)) {
          child.stdout?.off('data', check);
          resolve(stdout);
        }
      };
      child.stdout?.on('data', check);
      void exited.then(({ code, signal }) => reject(new Error(`the demo exited (${signal ?? `code ${code}`}) before it was ready\nstdout:\n${stdout}\nstderr:\n${stderr}`)));
      check();
    }), timeoutMs, 'no ready line'),
    interrupt: (timeoutMs) => {
      signalGroup('SIGINT');
      return within(exited, timeoutMs, 'the demo did not stop on SIGINT');
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup('SIGINT');
      const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      if (!stopped) signalGroup('SIGKILL');
    },
  };
}

/** Whether any process of the group is still alive (signal 0 probes without signalling). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Command lines of the running processes that mention `text` (e.g. PostgreSQL's -D data dir). */
export async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Polls until `check` holds (processes take a moment to be reaped). */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
