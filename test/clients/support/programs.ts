/**
 * Runs a client program (psql, pg_dump, Debian's python3, java) as a child process and collects its
 * output. A missing program fails the test with the package that provides it: CI installs them all.
 */
import { execFile, execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';

export interface ProgramRun {
  stdout: string;
  stderr: string;
  code: number;
}

/** Debian's python, where python3-psycopg and python3-asyncpg install (not a pyenv python on PATH). */
export const DEBIAN_PYTHON = '/usr/bin/python3';

/** Throws, naming the Debian package to install, when `command --version`-style probe fails. */
export function requireProgram(command: string, probeArgs: readonly string[], debianPackage: string): void {
  try {
    execFileSync(command, [...probeArgs], { stdio: 'ignore', timeout: 60_000 });
  } catch {
    throw new Error(`${command} ${probeArgs.join(' ')} failed: install the Debian package ${debianPackage} (.ci/run installs it)`);
  }
}

export function run(command: string, args: readonly string[], env: Record<string, string>, stdin = '', timeoutMs = 60_000): Promise<ProgramRun> {
  return new Promise((resolve) => {
    const child = execFile(command, [...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), PGCONNECT_TIMEOUT: '10', ...env },
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    }, (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? Number((error as { code?: number }).code ?? 1) : 0 }));
    child.stdin?.end(stdin);
  });
}

/** Runs a program that prints one JSON document on stdout; fails with its stderr otherwise. */
export async function runJson<T>(command: string, args: readonly string[], env: Record<string, string>, timeoutMs?: number): Promise<T> {
  const result = await run(command, args, env, '', timeoutMs);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`${command} printed no JSON:\n${result.stdout}\n${result.stderr}`);
  }
}
