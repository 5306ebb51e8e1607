/**
 * A table of plaintext people across tokenise, fpe and passthrough columns of several kinds, and
 * the helpers the backfill tests share: policies for it, in-process runs, raw reads.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { CliIo } from '../../../src/cli/cliIo.js';
import type { Engine } from '../../../src/engine/engineTypes.js';

/** Column → [kind, method, scope]; `phone` stays plaintext (passthrough). */
export const PEOPLE_COLUMNS = {
  full_name: ['name', 'tokenise', 'people'],
  email: ['email', 'tokenise', 'people'],
  note: ['text', 'tokenise', 'notes'],
  ssn: ['ssn', 'fpe', 'people'],
  birth_date: ['date', 'fpe', 'people'],
  ip: ['ipv4', 'fpe', 'people'],
  external_id: ['uuid', 'fpe', 'people'],
  phone: ['phone', 'passthrough', 'no-scope'],
} as const;

export type PeopleColumn = keyof typeof PEOPLE_COLUMNS;
export type PeopleRow = Record<PeopleColumn, string | null>;

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson'];

/** Row `i` of the fixture; every 7th row has NULLs in two columns. */
export function personRow(i: number): PeopleRow {
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    full_name: `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`,
    email: `user${i}@example.com`,
    note: i % 7 === 0 ? null : `customer since ${2000 + (i % 20)}, tier ${i % 5}`,
    ssn: `${100 + (i % 500)}-${two(10 + (i % 89))}-${String(1000 + i).padStart(4, '0')}`,
    birth_date: i % 7 === 0 ? null : `19${50 + (i % 50)}-${two(1 + (i % 12))}-${two(1 + (i % 28))}`,
    ip: `10.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}`,
    external_id: randomUUID(),
    phone: `+1 415 555 ${String(i % 10_000).padStart(4, '0')}`,
  };
}

const COLUMN_TYPES: Record<PeopleColumn, string> = {
  full_name: 'text', email: 'text', note: 'text', ssn: 'text', birth_date: 'date', ip: 'inet', external_id: 'uuid', phone: 'text',
};
const NAMES = Object.keys(PEOPLE_COLUMNS) as PeopleColumn[];

/** Every value as PostgreSQL prints it (inet without /32, ISO dates), as the backfill reads them. */
export function textClient(url: string): pg.Client {
  const getTypeParser = (() => (value: string) => value) as unknown as pg.CustomTypesConfig['getTypeParser'];
  return new pg.Client({ connectionString: url, types: { getTypeParser } });
}

/** Creates `table` with `rows` rows (ids 1..rows) and returns what was written, by id. */
export async function createPeople(db: pg.Client, table: string, rows: number): Promise<Map<string, PeopleRow>> {
  await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY, ${NAMES.map((c) => `${c} ${COLUMN_TYPES[c]}`).join(', ')})`);
  const written = new Map<string, PeopleRow>();
  for (let i = 1; i <= rows; i++) written.set(String(i), personRow(i));
  const ids = [...written.keys()];
  await db.query(
    `INSERT INTO ${table} (id, ${NAMES.join(', ')}) SELECT * FROM unnest($1::int[], ${NAMES.map((c, n) => `$${n + 2}::${COLUMN_TYPES[c]}[]`).join(', ')})`,
    [ids, ...NAMES.map((c) => ids.map((id) => written.get(id)?.[c] ?? null))],
  );
  return written;
}

/** Inserts one row as given (values already protected, as the proxy would have written them). */
export async function insertPerson(db: pg.Client, table: string, id: number, row: PeopleRow): Promise<void> {
  await db.query(
    `INSERT INTO ${table} (id, ${NAMES.join(', ')}) VALUES ($1, ${NAMES.map((c, n) => `$${n + 2}::${COLUMN_TYPES[c]}`).join(', ')})`,
    [id, ...NAMES.map((c) => row[c])],
  );
}

/** The table as stored, by id. */
export async function readPeople(db: pg.Client, table: string): Promise<Map<string, PeopleRow>> {
  const { rows } = await db.query<{ id: string } & PeopleRow>(`SELECT id, ${NAMES.join(', ')} FROM ${table} ORDER BY id`);
  return new Map(rows.map(({ id, ...row }) => [id, row]));
}

/** Policies for the people tables named (`public.people_a`, ...), plus `extra` entries. */
export async function writePolicies(dir: string, tables: readonly string[], extra: readonly string[] = []): Promise<string> {
  const lines = ['columns:', ...extra.map((line) => `  ${line}`)];
  for (const table of tables) {
    for (const [column, [kind, method, scope]] of Object.entries(PEOPLE_COLUMNS)) {
      lines.push(`  ${table}.${column}: { kind: ${kind}, method: ${method}, scope: ${scope} }`);
    }
  }
  const file = join(dir, 'policies.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** A configuration whose keys come from the environment, the database from --database-url. */
export async function writeConfig(dir: string, name: string, keys: { version: number; previous?: number[] }): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, [
    'policies: policies.yaml',
    'keys:',
    `  masterKeyEnv: PGVEIL_KEY_V${keys.version}`,
    `  keyVersion: ${keys.version}`,
    ...(keys.previous?.length
      ? ['  previousKeys:', ...keys.previous.map((v) => `    - { version: ${v}, env: PGVEIL_KEY_V${v} }`)]
      : ['  previousKeys: []']),
    '',
  ].join('\n'));
  return file;
}

export interface Run { code: number; out: string; err: string }

export function capture(env: Record<string, string>, signal?: AbortSignal): { io: CliIo; result: (code: number) => Run } {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => { out.push(t); }, err: (t) => { err.push(t); }, env };
  if (signal) io.signal = signal;
  return { io, result: (code) => ({ code, out: out.join('\n'), err: err.join('\n') }) };
}

/** Checks one stored row against what was written: protected columns unprotect to it (once). */
export async function unprotectRows(engine: Engine, stored: Map<string, PeopleRow>): Promise<Map<string, PeopleRow>> {
  const ids = [...stored.keys()];
  const plain = new Map<string, PeopleRow>(ids.map((id) => [id, { ...(stored.get(id) as PeopleRow) }]));
  for (const [column, [kind, method, scope]] of Object.entries(PEOPLE_COLUMNS) as [PeopleColumn, readonly string[]][]) {
    if (method === 'passthrough') continue;
    const present = ids.filter((id) => stored.get(id)?.[column] !== null);
    const values = present.map((id) => stored.get(id)?.[column] as string);
    const response = await engine.unprotect(kind as string, values, { method, scope });
    if (response.discrepancy) throw new Error(`${column}: ${JSON.stringify(response.discrepancy).slice(0, 200)}`);
    present.forEach((id, n) => { (plain.get(id) as PeopleRow)[column] = response.result[n] as string; });
  }
  return plain;
}
