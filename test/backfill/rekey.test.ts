import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createEngine } from '../../src/engine/engine.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import {
  PEOPLE_COLUMNS, capture, createPeople, readPeople, textClient, unprotectRows, writeConfig, writePolicies,
  type PeopleColumn, type PeopleRow, type Run,
} from './support/peopleTable.js';

const ROWS = 2000;
const TABLE = 'public.people';
const V1 = generateMasterKey();
const V2 = generateMasterKey();
const env = { PGVEIL_KEY_V1: V1, PGVEIL_KEY_V2: V2 };

let db: TestPostgres;
let client: pg.Client;
let dir: string;
let configV1: string;
let configV2: string;
let written: Map<string, PeopleRow>;

async function run(command: string, config: string, ...extra: string[]): Promise<Run> {
  const { io, result } = capture(env);
  return result(await main([command, TABLE, '--config', config, '--database-url', db.url, '--batch-size', '400', ...extra], io));
}

/** Unprotects one column of the stored table with `engine`; the discrepancy as the engine reports it. */
async function unprotectColumn(engine: ReturnType<typeof createEngine>, column: PeopleColumn, stored: Map<string, PeopleRow>) {
  const [kind, method, scope] = PEOPLE_COLUMNS[column];
  const values = [...stored.values()].map((r) => r[column]).filter((v): v is string => v !== null);
  return { count: values.length, response: await engine.unprotect(kind, values, { method, scope }) };
}

beforeAll(async () => {
  db = await startTestPostgres();
  client = textClient(db.url);
  await client.connect();
  dir = await mkdtemp(join(tmpdir(), 'pgveil-rekey-'));
  await writePolicies(dir, [TABLE]);
  configV1 = await writeConfig(dir, 'v1.yaml', { version: 1 });
  configV2 = await writeConfig(dir, 'v2.yaml', { version: 2, previous: [1] });
  written = await createPeople(client, TABLE, ROWS);
  const protectedV1 = await run('protect-table', configV1);
  expect(protectedV1.code).toBe(0);
}, 180_000);

afterAll(async () => {
  await client?.end();
  await rm(dir, { recursive: true, force: true });
  await db?.stop();
});

describe('pgveil rekey', () => {
  it('needs --from-version for fpe columns, naming the versions held', async () => {
    const missing = await run('rekey', configV2);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('give --from-version N, the version they are encrypted with now (keys.previousKeys holds 1)');
    const unknown = await run('rekey', configV2, '--from-version', '3');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('keys.previousKeys holds no key of that version');
  });

  it('moves every token and fpe value from version 1 to 2, resumably; a v1-only engine no longer reads them', async () => {
    const before = await readPeople(client, TABLE);
    const dry = await run('rekey', configV2, '--from-version', '1', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/email\s+email\s+tokenise\s+2,000\s+0\s+0/);
    expect(await readPeople(client, TABLE)).toEqual(before);

    const partial = await run('rekey', configV2, '--from-version', '1', '--max-batches', '2');
    expect(partial.code).toBe(0);
    expect(partial.out).toMatch(/column\s+kind\s+method\s+moved to v2\s+already at v2/);
    const rest = await run('rekey', configV2, '--from-version', '1');
    expect(rest.code).toBe(0);
    expect(rest.out).toContain('resuming after 800 rows done earlier');
    expect(rest.out).toMatch(/ssn\s+ssn\s+fpe\s+1,200\s+0\s+0/);

    const stored = await readPeople(client, TABLE);
    const v2 = createEngine({ masterKey: V2, keyVersion: 2, previousKeys: [{ version: 1, key: V1 }] });
    expect(await unprotectRows(v2, stored)).toEqual(written);
    // fpe under the v2 key alone gives the originals back: the values were re-encrypted once.
    expect(await unprotectRows(createEngine({ masterKey: V2, keyVersion: 2 }), stored)).toEqual(written);

    const v1Only = createEngine({ masterKey: V1, keyVersion: 1 });
    for (const column of ['full_name', 'email', 'note'] as const) {
      const { count, response } = await unprotectColumn(v1Only, column, stored);
      expect(response.discrepancy?.invalid_token?.length).toBe(count);
    }
  });

  it('a rerun finds every token at version 2 and leaves fpe columns, which a finished run covered', async () => {
    const before = await readPeople(client, TABLE);
    const again = await run('rekey', configV2, '--from-version', '1');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/email\s+email\s+tokenise\s+0\s+2,000\s+0/);
    expect(again.out).toMatch(/birth_date\s+date\s+fpe\s+done by an earlier finished run/);
    expect(await readPeople(client, TABLE)).toEqual(before);
    // protect-table with the new keys recognises the v2 tokens too.
    const protectAgain = await run('protect-table', configV2);
    expect(protectAgain.out).toMatch(/email\s+email\s+tokenise\s+0\s+2,000\s+0/);
    expect(await readPeople(client, TABLE)).toEqual(before);
  });

  it('respells email tokens written with a digit in the TLD, which still read back, to the letters-only TLD', async () => {
    const base36 = 'abcdefghijklmnopqrstuvwxyz0123456789';
    const earlierSpelling = (token: string): string => {
      const dot = token.lastIndexOf('.');
      let n = [...token.slice(dot + 1)].reduce((acc, c) => acc * 26 + c.charCodeAt(0) - 97, 0);
      let tld = '';
      for (let i = 0; i < 3; i++) { tld = base36.charAt(n % 36) + tld; n = Math.floor(n / 36); }
      return token.slice(0, dot + 1) + tld;
    };
    const stored = await readPeople(client, TABLE);
    const respelled: string[] = [];
    for (const [id, row] of stored) {
      if (row.email === null || !/\.[a-z]{4}$/.test(row.email)) continue;
      await client.query(`UPDATE ${TABLE} SET email = $1 WHERE id = $2`, [earlierSpelling(row.email), id]);
      respelled.push(id);
    }
    expect(respelled.length).toBeGreaterThan(500);
    const oldSpelling = await readPeople(client, TABLE);
    const v2 = createEngine({ masterKey: V2, keyVersion: 2, previousKeys: [{ version: 1, key: V1 }] });
    expect(await unprotectRows(v2, oldSpelling)).toEqual(written);

    const again = await run('rekey', configV2, '--from-version', '1');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(new RegExp(`email\\s+email\\s+tokenise\\s+${respelled.length.toLocaleString('en-US')}\\s+${(2000 - respelled.length).toLocaleString('en-US')}\\s+0`));
    expect(await readPeople(client, TABLE)).toEqual(stored);
  });
});
