/**
 * The commands the demo printed, taken from its output the way a user copies them (indented
 * lines), run with a shell, and psql's aligned tables read back into rows.
 */
import { execFile } from 'node:child_process';

export interface PrintedPsql {
  user: string;
  port: number;
  line: string;
}

export interface PrintedLines {
  /** The protection API block, in order; its lines share shell variables. */
  api: string[];
  psql: PrintedPsql[];
}

/** Indented lines of the block whose header line starts with `header`, up to the next blank line. */
function block(stdout: string, header: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  if (start < 0) throw new Error(`no "${header}" block in the output:\n${stdout}`);
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((line) => line.startsWith('  ')).map((line) => line.slice(2));
}

export function printedLines(stdout: string): PrintedLines {
  const commands = stdout.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.slice(2));
  const psql = commands.filter((line) => /(^|\s)psql\s/.test(line)).map((line) => {
    const conninfo = /"host=\S+ port=(\d+) user=(\S+) dbname=\S+"/.exec(line);
    if (!conninfo) throw new Error(`a psql line without host, port, user, dbname: ${line}`);
    return { port: Number(conninfo[1]), user: conninfo[2] as string, line };
  });
  return { api: block(stdout, 'Try the protection API').filter((line) => !line.startsWith('#')), psql };
}

/** A shell environment without the caller's PG* settings, which would change what psql does. */
export function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));
}

function sh(script: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], { env: shellEnv(), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ stdout, stderr, code });
    });
  });
}

/** Runs the lines in one shell, in order (later lines use earlier variables); one output per line. */
export async function runLines(lines: string[]): Promise<{ outputs: string[]; stderr: string; code: number }> {
  const marker = (i: number): string => `@@pgveil-demo-line-${i}@@`;
  const script = lines.map((line, i) => `echo '${marker(i)}'\n${line}`).join('\n');
  const { stdout, stderr, code } = await sh(script);
  const outputs = lines.map((_, i) => {
    const from = stdout.indexOf(`${marker(i)}\n`);
    const to = i + 1 < lines.length ? stdout.indexOf(marker(i + 1)) : stdout.length;
    return from < 0 ? '' : stdout.slice(from + marker(i).length + 1, to < 0 ? undefined : to).trim();
  });
  return { outputs, stderr, code };
}

export async function runLine(line: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return sh(line);
}

/** psql's aligned output as header → value records (values trimmed). */
export function psqlRows(output: string): Record<string, string>[] {
  const lines = output.split('\n');
  const separator = lines.findIndex((line) => /^-+(\+-+)*$/.test(line.trim()));
  if (separator < 1) throw new Error(`no table in psql output:\n${output}`);
  const header = (lines[separator - 1] as string).split('|').map((cell) => cell.trim());
  return lines.slice(separator + 1)
    .filter((line) => line.includes('|'))
    .map((line) => Object.fromEntries(line.split('|').map((cell, i) => [header[i] as string, cell.trim()])));
}
