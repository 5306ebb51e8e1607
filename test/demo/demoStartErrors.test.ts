/** What `pgveil demo` says when it cannot start, before it starts anything. */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureIo, freePort } from '../cli/support/cliHarness.js';

let holder: Server | undefined;
const folders: string[] = [];

afterEach(async () => {
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  holder = undefined;
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function env(): Promise<Record<string, string>> {
  return {
    PGVEIL_DEMO_DB_PORT: String(await freePort()),
    PGVEIL_API_PORT: String(await freePort()),
    PGVEIL_PROXY_PORT: String(await freePort()),
  };
}

async function folder(mode: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pgveil-demo-start-'));
  folders.push(dir);
  await chmod(dir, mode);
  return dir;
}

describe('pgveil demo start errors', () => {
  it.each(['PGVEIL_DEMO_DB_PORT', 'PGVEIL_API_PORT', 'PGVEIL_PROXY_PORT'])('names %s when its port is taken', async (name) => {
    const vars = await env();
    holder = createServer();
    await new Promise<void>((resolve) => holder?.listen(Number(vars[name]), '127.0.0.1', resolve));
    const dir = join(await folder(0o755), 'demo');
    const io = captureIo(vars);
    expect(await main(['demo', '--dir', dir], io)).toBe(1);
    expect(io.stderr.join('')).toContain(`port ${vars[name]}`);
    expect(io.stderr.join('')).toContain(`set ${name} to another port`);
  });

  it('refuses a port variable that is no port', async () => {
    const io = captureIo({ ...(await env()), PGVEIL_PROXY_PORT: 'six' });
    expect(await main(['demo', '--dir', join(await folder(0o755), 'demo')], io)).toBe(1);
    expect(io.stderr.join('')).toContain('PGVEIL_PROXY_PORT must be a port number');
  });

  it.runIf(process.getuid?.() === 0)('as root, says which folder the postgres user cannot reach', async () => {
    const closed = await folder(0o700);
    const io = captureIo(await env());
    expect(await main(['demo', '--dir', join(closed, 'demo')], io)).toBe(1);
    expect(io.stderr.join('')).toContain(`${closed} is not searchable by other users`);
  });
});
