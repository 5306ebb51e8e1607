import { createServer } from 'node:net';
import type { CliIo } from '../../../src/cli/cliIo.js';

export interface CapturedIo extends CliIo {
  stdout: string[];
  stderr: string[];
}

export function captureIo(env: Record<string, string | undefined> = {}, signal?: AbortSignal): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io: CapturedIo = { stdout, stderr, env, out: (t) => { stdout.push(t); }, err: (t) => { stderr.push(t); } };
  if (signal) io.signal = signal;
  return io;
}

/** A port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForHttp(url: string, ms = 15_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch { /* not up yet */ }
    if (Date.now() - start > ms) throw new Error(`timeout waiting for ${url}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The secrets `pgveil account add` printed. */
export function printedSecrets(out: string): { password: string; apiKey: string } {
  const password = /password: (\S+)/.exec(out)?.[1];
  const apiKey = /API key:\s+(\S+)/.exec(out)?.[1];
  if (!password || !apiKey) throw new Error('no secrets in the output');
  return { password, apiKey };
}
