import type { Env } from '../config/index.js';

/** What a command may touch besides files: output streams, environment, a stop signal. Tests pass their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Env;
  /** Stops long-running commands (serve) as SIGINT/SIGTERM do. */
  signal?: AbortSignal;
}

export const processIo: CliIo = {
  out: (text) => { process.stdout.write(text.endsWith('\n') ? text : `${text}\n`); },
  err: (text) => { process.stderr.write(text.endsWith('\n') ? text : `${text}\n`); },
  env: process.env,
};

/** Thrown for a wrong command line; main prints it with the usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
