import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli/main.js';
import { protectTableCommand } from '../../src/cli/protectTable.js';
import type { WalkHooks } from '../../src/cli/backfill/batchWalker.js';
import { createEngine } from '../../src/engine/engine.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import {
  PEOPLE_COLUMNS, capture, createPeople, insertPerson, personRow, readPeople, textClient, unprotectRows, writeConfig,
  writePolicies, type PeopleColumn, type PeopleRow, type Run,
} from './support/peopleTable.js';

const ROWS = 3000;
const KEY = generateMasterKey();
const env = { PGVEIL_KEY_V1: KEY };
const engine = createEngine({ masterKey: KEY });

let db: TestPostgres;
let client: pg.Client;
let dir: string;
let config: string;
const written = new Map<string, Map<string, PeopleRow>>();

async function protect(table: string, ...extra: string[]): Promise<Run> {
  const { io, result } = capture(env);
  return result(await main(['protect-table', table, '--config', config, '--database-url', db.url, '--batch-size', '500', ...extra], io));
}

/** Runs with fault-injection hooks (not reachable from main). */
async function protectWith(table: string, hooks: WalkHooks, signal?: AbortSignal): Promise<Run> {
  const { io, result } = capture(env, signal);
  return result(await protectTableCommand([table, '--config', config, '--database-url', db.url, '--batch-size', '500'], io, hooks));
}

async function progressOf(table: string): Promise<{ rows_done: string; finished: string }[]> {
  const { rows } = await client.query<{ rows_done: string; finished: string }>(
    'SELECT rows_done, (finished_at IS NOT NULL)::text AS finished FROM public.pgveil_backfill_progress WHERE table_name = $1 ORDER BY started_at',
    [table],
  );
  return rows;
}

/** Every row unprotects, in one step, to what was written; passthrough and NULLs are as written. */
async function expectProtectedOnce(table: string): Promise<void> {
  const stored = await readPeople(client, table);
  const original = written.get(table) as Map<string, PeopleRow>;
  expect(stored.size).toBe(original.size);
  expect(await unprotectRows(engine, stored)).toEqual(original);
  let differ = 0;
  for (const [id, row] of stored) {
    const before = original.get(id) as PeopleRow;
    expect(row.phone).toBe(before.phone);
    if (row.email !== before.email && row.ssn !== before.ssn && row.external_id !== before.external_id) differ++;
  }
  expect(differ).toBe(original.size);
}

beforeAll(async () => {
  db = await startTestPostgres();
  client = textClient(db.url);
  await client.connect();
  dir = await mkdtemp(join(tmpdir(), 'pgveil-protect-table-'));
  const tables = ['public.people_full', 'public.people_resume', 'public.people_dry', 'public.people_bad'];
  await writePolicies(dir, tables, [
    'public.mixed.email: { kind: email, method: tokenise, scope: people }',
    'public.mixed.card: { kind: ccn, method: mask }',
  ]);
  config = await writeConfig(dir, 'pgveil.yaml', { version: 1 });
  for (const table of tables.slice(0, 3)) written.set(table, await createPeople(client, table, ROWS));
  written.set('public.people_bad', await createPeople(client, 'public.people_bad', 40));
  await client.query("UPDATE public.people_bad SET email = 'not an email' WHERE id IN (17, 23)");
  await client.query("UPDATE public.people_bad SET ssn = '12-34' WHERE id = 5");
  const [elsewhere] = (await engine.protect('email', ['b@example.com'], { scope: 'elsewhere' })).result;
  await client.query('CREATE TABLE public.mixed (id int PRIMARY KEY, email text, card text)');
  await client.query("INSERT INTO public.mixed VALUES (1, 'a@example.com', '4111 1111 1111 1111'), (2, $1, '**** **** **** 1111')", [elsewhere]);
}, 180_000);

afterAll(async () => {
  await client?.end();
  await rm(dir, { recursive: true, force: true });
  await db?.stop();
});

describe('pgveil protect-table', () => {
  it('protects every row per its policy, then a rerun recognises them and changes nothing', async () => {
    const first = await protect('public.people_full');
    expect(first.code).toBe(0);
    // Not a TTY: plain progress lines on stderr, the last one at the end.
    expect(first.err.split('\n').at(-1)).toMatch(/^public\.people_full: 3,000 \/ 3,000 rows \(100%\), [\d,]+ rows\/s, 0s left$/);
    expect(first.out).toContain(`public.people_full: ${ROWS.toLocaleString('en-US')} rows walked in 6 batches`);
    expect(first.out).toMatch(/email\s+email\s+tokenise\s+3,000\s+0\s+0/);
    expect(first.out).toMatch(/birth_date\s+date\s+fpe\s+2,572\s+0\s+0/); // every 7th is NULL
    expect(first.out).toContain('done: every row of public.people_full walked');
    expect(first.out).not.toContain('phone'); // passthrough: nothing to do
    await expectProtectedOnce('public.people_full');

    const before = await readPeople(client, 'public.people_full');
    const again = await protect('public.people_full');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/email\s+email\s+tokenise\s+0\s+3,000\s+0/);
    expect(again.out).toMatch(/ssn\s+ssn\s+fpe\s+done by an earlier finished run/);
    expect(await readPeople(client, 'public.people_full')).toEqual(before);
    expect(await progressOf('public.people_full')).toEqual([
      { rows_done: String(ROWS), finished: 'true' }, { rows_done: String(ROWS), finished: 'true' },
    ]);
  });

  it('resumes an interrupted run where it stopped and protects every row exactly once', async () => {
    const table = 'public.people_resume';
    const limited = await protect(table, '--max-batches', '2');
    expect(limited.code).toBe(0);
    expect(limited.out).toContain('stopped after 2 batches (--max-batches)');
    expect(await progressOf(table)).toEqual([{ rows_done: '1000', finished: 'false' }]);

    // A row the application writes through the proxy meanwhile arrives protected, past the walk's end.
    const late = personRow(ROWS + 1);
    written.get(table)?.set(String(ROWS + 1), late);
    const stored: PeopleRow = { ...late };
    for (const [column, [kind, method, scope]] of Object.entries(PEOPLE_COLUMNS) as [PeopleColumn, readonly string[]][]) {
      const value = late[column];
      if (value !== null && method !== 'passthrough') stored[column] = (await engine.protect(kind as string, [value], { method, scope })).result[0] ?? null;
    }
    await insertPerson(client, table, ROWS + 1, stored);

    // An interrupt (here the abort signal) stops the walk after the batch in flight commits.
    const stop = new AbortController();
    const interrupted = await protectWith(table, { beforeCommit: () => { stop.abort(); } }, stop.signal);
    expect(interrupted.code).toBe(1);
    expect(interrupted.out).toContain('resuming after 1,000 rows done earlier');
    expect(interrupted.out).toContain('interrupted: every committed batch is recorded');
    expect(await progressOf(table)).toEqual([{ rows_done: '1500', finished: 'false' }]);

    // A crash inside a batch rolls the whole batch back, its progress row included.
    await expect(protectWith(table, { beforeCommit: (batch) => { if (batch === 2) throw new Error('connection lost'); } }))
      .rejects.toThrow('connection lost');
    expect(await progressOf(table)).toEqual([{ rows_done: '2000', finished: 'false' }]);

    const rest = await protect(table);
    expect(rest.code).toBe(0);
    expect(rest.out).toMatch(/ssn\s+ssn\s+fpe\s+1,000\s+0\s+0/);
    expect(await progressOf(table)).toEqual([{ rows_done: String(ROWS), finished: 'true' }]);
    await expectProtectedOnce(table);
  });

  it('--dry-run reports what would change per column and writes nothing', async () => {
    const table = 'public.people_dry';
    const before = await readPeople(client, table);
    const dry = await protect(table, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/column\s+kind\s+method\s+would be protected\s+already protected\s+left as they are/);
    expect(dry.out).toMatch(/full_name\s+name\s+tokenise\s+3,000\s+0\s+0/);
    expect(dry.out).toMatch(/external_id\s+uuid\s+fpe\s+3,000\s+0\s+0/);
    expect(dry.out).toContain('dry run: nothing was written');
    expect(await readPeople(client, table)).toEqual(before);
    expect(await progressOf(table)).toEqual([]);
  });

  it('leaves values that are not of their kind as they are, lists their keys and exits 1', async () => {
    const table = 'public.people_bad';
    const run = await protect(table);
    expect(run.code).toBe(1);
    expect(run.out).toContain('  email (email): 2 not a value of the kind; id: 17, 23');
    expect(run.out).toContain('  ssn (ssn): 1 not a value of the kind; id: 5');
    expect(run.out).not.toContain('not an email');
    const stored = await readPeople(client, table);
    expect(stored.get('17')?.email).toBe('not an email');
    expect(stored.get('5')?.ssn).toBe('12-34');
    expect(stored.get('5')?.email).not.toBe('user5@example.com'); // the row's other values are protected
  });

  it('never tokenises a token of another scope again, and recognises masks at rest', async () => {
    const first = await protect('public.mixed');
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/email\s+email\s+tokenise\s+1\s+0\s+1/);
    expect(first.out).toMatch(/card\s+ccn\s+mask\s+1\s+1\s+0/);
    expect(first.out).toContain('  email (email): 1 tokens of another scope (left as they are, never tokenised twice); id: 2');
    const again = await protect('public.mixed');
    expect(again.out).toMatch(/email\s+email\s+tokenise\s+0\s+1\s+1/);
    expect(again.out).toMatch(/card\s+ccn\s+mask\s+0\s+2\s+0/);
    const { rows } = await client.query<{ card: string }>('SELECT card FROM public.mixed ORDER BY id');
    expect(rows.map((r) => r.card)).toEqual(['**** **** **** 1111', '**** **** **** 1111']);
  });

  it('refuses a table without a primary key, with what to do', async () => {
    await client.query('CREATE TABLE public.people_nokey (email text)');
    const { io, result } = capture(env);
    const run = result(await main(['protect-table', 'public.people_nokey', '--config', config, '--database-url', db.url], io));
    expect(run.code).toBe(1);
    expect(run.err).toContain('public.people_nokey has no primary key');
  });

  it('runs the first start of docker-compose.yml: its demo table, protected with config/compose.yaml', async () => {
    const compose = parse(await readFile('docker-compose.yml', 'utf8')) as { services: { postgres: { environment: Record<string, string> } } };
    await client.query(compose.services.postgres.environment['DEMO_SCHEMA_SQL'] as string);
    const composeEnv = {
      PGVEIL_MASTER_KEY: KEY, PGVEIL_UPSTREAM_HOST: db.host, PGVEIL_UPSTREAM_PORT: String(db.port),
      PGVEIL_UPSTREAM_USER: db.user, PGVEIL_UPSTREAM_PASSWORD: db.password,
    };
    for (const expected of [/email\s+email\s+tokenise\s+3\s+0\s+0/, /email\s+email\s+tokenise\s+0\s+3\s+0/]) {
      const { io, result } = capture(composeEnv);
      const run = result(await main(['protect-table', 'public.customers', '--config', 'config/compose.yaml', '--database', db.database], io));
      expect(run.code).toBe(0);
      expect(run.out).toMatch(expected);
    }
    const { rows } = await client.query<{ email: string; card_number: string }>('SELECT email, card_number FROM public.customers ORDER BY id');
    const emails = await engine.unprotect('email', rows.map((r) => r.email), { scope: 'customers' });
    expect(emails.result).toEqual(['jane.doe@example.com', 'ravi.kumar@example.org', 'marie@example.fr']);
    expect(rows[0]?.card_number).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    expect(rows[0]?.card_number).not.toBe('4111 1111 1111 1111');
  });
});
