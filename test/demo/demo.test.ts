/**
 * End to end, as a user runs it: `npm start` (build + `pgveil demo`), the printed curl and psql
 * lines run with a shell, Ctrl-C, nothing left behind; then a second start that reuses the data.
 * Ports and the demo folder are the test's own (env variables and --dir), so a developer's demo
 * keeps its data. Needs psql (postgresql-client) on the PATH.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ROW_COUNT, generateDemoRows } from '../../src/cli/demo/demoRows.js';
import { freePort } from '../cli/support/cliHarness.js';
import { eventually, groupAlive, portFree, processesMentioning, startDemoProcess, type DemoProcess, type Exit } from './support/demoProcess.js';
import { printedLines, psqlRows, runLine, runLines, shellEnv, type PrintedLines } from './support/printedLines.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const expected = generateDemoRows().slice(0, 5);

let dir: string;
let ports: { db: number; api: number; proxy: number };
let running: DemoProcess | undefined;

function demoEnv(): NodeJS.ProcessEnv {
  return {
    ...shellEnv(),
    PGVEIL_DEMO_DB_PORT: String(ports.db),
    PGVEIL_API_PORT: String(ports.api),
    PGVEIL_PROXY_PORT: String(ports.proxy),
  };
}

/**
 * `exit` is what the spawned command must end with: `pgveil demo` exits 0; npm, whose script
 * shell dies of the SIGINT it deferred while the demo shut down, re-raises it on itself.
 */
async function stopAndCheckNothingLeft(demo: DemoProcess, exit: Exit[]): Promise<void> {
  const pgid = demo.child.pid as number;
  expect(exit).toContainEqual(await demo.interrupt(60_000));
  expect(demo.output().stdout).toMatch(/pgveil demo stopped\n?$/);
  expect(demo.output().stderr).not.toMatch(/pgveil demo (failed|: while stopping)/);
  expect(await eventually(() => !groupAlive(pgid))).toBe(true);
  expect(await processesMentioning(join(dir, 'postgres'))).toEqual([]);
  for (const port of Object.values(ports)) expect(await portFree(port)).toBe(true);
}

async function storedCount(where: string, values: unknown[] = []): Promise<number> {
  const client = new pg.Client({ host: '127.0.0.1', port: ports.db, user: 'postgres', password: 'pgveil-demo', database: 'postgres' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM customers ${where}`, values);
    return Number(rows[0]?.n);
  } finally {
    await client.end();
  }
}

function psqlFor(lines: PrintedLines, user: string): string {
  const found = lines.psql.find((p) => p.user === user);
  if (!found) throw new Error(`no printed psql line for ${user}`);
  return found.line;
}

async function psqlTable(line: string): Promise<Record<string, string>[]> {
  const { stdout, stderr, code } = await runLine(line);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const rows = psqlRows(stdout);
  expect(rows).toHaveLength(expected.length);
  return rows;
}

beforeAll(async () => {
  try {
    execFileSync('psql', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('the demo test runs the printed psql lines: install psql (postgresql-client)');
  }
  dir = await mkdtemp(join(tmpdir(), 'pgveil-demo-test-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its folder
  ports = { db: await freePort(), api: await freePort(), proxy: await freePort() };
});

afterEach(async () => {
  await running?.kill();
  running = undefined;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start: the demo', () => {
  it('starts the database, API and proxy; the printed lines work; Ctrl-C stops everything', async () => {
    running = startDemoProcess('npm', ['start', '--', '--dir', dir], { cwd: ROOT, env: demoEnv() });
    const stdout = await running.ready(240_000);
    expect(stdout).toContain(`created in ${join(dir, 'postgres')}`);
    expect(stdout).toContain(`${DEMO_ROW_COUNT} demo rows written through the proxy`);
    const lines = printedLines(stdout);

    // The protection API: log in, then protect.
    const api = await runLines(lines.api);
    expect(api.code).toBe(0);
    const outputs = api.outputs.filter((o) => o !== '');
    expect(outputs).toHaveLength(4);
    const [ccn, name, ssn, openapi] = outputs as [string, string, string, string];
    expect(JSON.parse(ccn).result[0]).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    expect(JSON.parse(ccn).result[0]).not.toBe('4111 1111 1111 1111');
    expect(JSON.parse(name).result).toHaveLength(2);
    expect(JSON.parse(name).result[1]).toMatch(/^[\p{Script=Cyrillic} ]+$/u);
    expect(JSON.parse(ssn).result).toEqual(['***-**-6789']);
    expect(openapi).toMatch(/^\{"openapi":"3/);

    // psql through the proxy as each role, and straight to PostgreSQL.
    expect(lines.psql.map((p) => p.user).sort()).toEqual(['analyst@demo.pgveil', 'app@demo.pgveil', 'postgres', 'support@demo.pgveil']);
    expect(lines.psql.find((p) => p.user === 'postgres')?.port).toBe(ports.db);
    const app = await psqlTable(psqlFor(lines, 'app@demo.pgveil'));
    const support = await psqlTable(psqlFor(lines, 'support@demo.pgveil'));
    const analyst = await psqlTable(psqlFor(lines, 'analyst@demo.pgveil'));
    const stored = await psqlTable(psqlFor(lines, 'postgres'));

    expect(app).toEqual(expected.map((c) => ({
      full_name: c.full_name, email: c.email, ssn: c.ssn, card_number: c.card_number, birth_date: c.birth_date,
    })));
    support.forEach((row, i) => {
      const c = expected[i]!;
      expect(row.full_name).toContain('*');
      expect(row.full_name?.[0]).toBe(c.full_name[0]);
      expect(row.email).toBe(`${c.email[0]}${'*'.repeat(c.email.indexOf('@') - 1)}${c.email.slice(c.email.indexOf('@'))}`);
      expect(row.ssn).toBe(`***-**-${c.ssn.slice(-4)}`);
      expect(row.card_number).toBe(`**** **** **** ${c.card_number.slice(-4)}`);
      expect(row.birth_date).toBe(`${c.birth_date.slice(0, 4)}-01-01`);
    });
    expect(analyst).toEqual(stored); // tokens: what the database holds
    stored.forEach((row, i) => {
      const c = expected[i]!;
      for (const column of ['full_name', 'email', 'ssn', 'card_number', 'birth_date'] as const) expect(row[column]).not.toBe(c[column]);
      expect(row.card_number).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/); // fpe keeps the layout
    });
    const everything = generateDemoRows();
    expect(await storedCount('')).toBe(DEMO_ROW_COUNT);
    expect(await storedCount('WHERE full_name = ANY($1) OR email = ANY($2) OR ssn = ANY($3) OR card_number = ANY($4)', [
      everything.map((c) => c.full_name), everything.map((c) => c.email), everything.map((c) => c.ssn), everything.map((c) => c.card_number),
    ])).toBe(0);

    await stopAndCheckNothingLeft(running, [{ code: 0, signal: null }, { code: null, signal: 'SIGINT' }]);
  }, 300_000);

  it('a second start reuses the database and its rows, and starts in seconds', async () => {
    const started = Date.now();
    running = startDemoProcess(process.execPath, ['bin/pgveil.js', 'demo', '--dir', dir], { cwd: ROOT, env: demoEnv() });
    const stdout = await running.ready(60_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(stdout).toContain(`reused in ${join(dir, 'postgres')}`);
    expect(stdout).toContain(`${DEMO_ROW_COUNT} rows (kept from an earlier start)`);
    expect(await storedCount('')).toBe(DEMO_ROW_COUNT);
    const app = await psqlTable(psqlFor(printedLines(stdout), 'app@demo.pgveil'));
    expect(app[0]?.full_name).toBe(expected[0]?.full_name); // same master key: the stored tokens still read

    // A session open at Ctrl-C is told the server is going away, as PostgreSQL tells it.
    const open = new pg.Client({ host: '127.0.0.1', port: ports.proxy, user: 'app@demo.pgveil', password: 'pgveil-demo', database: 'postgres' });
    const errors: { code?: string }[] = [];
    open.on('error', (error) => errors.push(error as { code?: string }));
    await open.connect();
    await stopAndCheckNothingLeft(running, [{ code: 0, signal: null }]);
    expect(errors[0]).toMatchObject({ code: '57P01' });
  }, 120_000);
});
