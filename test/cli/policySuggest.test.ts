import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli/main.js';
import { CUSTOMERS_TABLE_SQL } from '../../src/cli/demo/demoSchema.js';
import { generateDemoRows, type DemoCustomer } from '../../src/cli/demo/demoRows.js';
import { sampleSchema, type SampleQuery } from '../../src/discovery/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { captureIo } from './support/cliHarness.js';

let db: TestPostgres;
let dir: string;
let config: string;
/** Every text value seeded into a sampled column: none may appear in any output. */
const seeded = new Set<string>();

const ROWS = 200;
const GIVEN = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Niklaus'];
const FAMILY = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Wirth'];
const CITIES = ['Lisbon', 'Porto Alegre', 'Valparaíso', 'Kraków', 'Rotterdam', 'Bergen', 'Cork', 'Ghent'];
const NOTES = [
  'called about the invoice, will call back on Monday',
  'prefers email over phone; sent the brochure twice',
  'asked for a refund of the second order',
  'no answer',
];

function luhnDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** Deterministic digits: the same rows on every run. */
function digitsOf(seed: number, n: number): string {
  let out = '';
  let x = seed * 2654435761 % 4294967296;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += String(Math.floor(x / 65536) % 10);
  }
  return out;
}

function uuidOf(seed: number): string {
  const hex = (digitsOf(seed, 16) + digitsOf(seed + 7, 16)).slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The known answers: which crm.people columns are suggested, as which kind. */
const EXPECTED: Record<string, string> = {
  'crm.people.email': 'email',
  'crm.people.card_number': 'ccn',
  'crm.people.ssn': 'ssn',
  'crm.people.phone': 'phone',
  'crm.people.last_ip': 'ipv4',
  'crm.people.external_id': 'uuid',
  'crm.people.birth_date': 'date',
  'crm.people.full_name': 'name',
  'crm.people.city': 'city',
  'crm."VIP ""Guests"""."Contact Email"': 'email',
  'crm."x""; DROP TABLE crm.people; --".email': 'email',
};

function peopleRow(i: number): (string | number | null)[] {
  const cardBody = `4${digitsOf(i, 14)}`;
  const card = `${cardBody}${luhnDigit(cardBody)}`.replace(/(\d{4})(?=\d)/g, '$1 ');
  const codeBody = `5${digitsOf(i + 1000, 14)}`;
  const code = `${codeBody}${(luhnDigit(codeBody) + 1 + (i % 9)) % 10}`; // never the check digit
  const ssn = `${100 + (i % 500)}-${String(10 + (i % 89)).padStart(2, '0')}-${String(1000 + i).padStart(4, '0')}`;
  const row: Record<string, string | number | null> = {
    email: `${GIVEN[i % 8]?.toLowerCase()}.${FAMILY[(i * 3) % 8]?.toLowerCase()}${i}@example.org`,
    card_number: card,
    ssn,
    phone: `+1 (555) 01${digitsOf(i + 3, 1)}-${digitsOf(i + 5, 4)}`,
    last_ip: `10.${i % 250}.${(i * 7) % 250}.${(i * 13) % 250 + 1}`,
    external_id: uuidOf(i),
    request_id: uuidOf(i + 5000),
    birth_date: `19${50 + (i % 50)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    created_on: `2024-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    full_name: `${GIVEN[i % 8]} ${FAMILY[(i * 3) % 8]}`,
    city: CITIES[i % 8] ?? null,
    card_count: i % 4,
    code,
    // A few NULLs: the share counts non-null values only.
    notes: i % 10 === 0 ? null : NOTES[i % 4] ?? null,
  };
  return Object.values(row);
}

const PEOPLE_COLUMNS = 'email, card_number, ssn, phone, last_ip, external_id, request_id, birth_date, created_on, full_name, city, card_count, code, notes';

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

beforeAll(async () => {
  db = await startTestPostgres();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(`
    CREATE SCHEMA crm;
    CREATE TABLE crm.people (
      id serial PRIMARY KEY, email text, card_number varchar(19), ssn text, phone text, last_ip inet,
      external_id uuid, request_id uuid, birth_date date, created_on date, full_name text, city text,
      card_count integer, code text, notes text);
    CREATE TABLE crm."VIP ""Guests""" (id int, "Contact Email" text);
    CREATE TABLE crm."x""; DROP TABLE crm.people; --" (email text);
    CREATE TABLE crm.events (id int, kind text);
    INSERT INTO crm.events SELECT n, 'kind ' || (n % 7) FROM generate_series(1, 40000) AS n;
    ${CUSTOMERS_TABLE_SQL};`);
  for (let i = 0; i < ROWS; i++) {
    const values = peopleRow(i);
    await client.query(`INSERT INTO crm.people (${PEOPLE_COLUMNS}) VALUES (${values.map((_, k) => `$${k + 1}`).join(', ')})`, values);
    values.forEach((v) => { if (typeof v === 'string') seeded.add(v); });
  }
  for (let i = 0; i < 20; i++) {
    const email = `guest${i}@vip.example.net`;
    await client.query('INSERT INTO crm."VIP ""Guests""" VALUES ($1, $2)', [i, email]);
    await client.query('INSERT INTO crm."x""; DROP TABLE crm.people; --" VALUES ($1)', [`other${i}@example.com`]);
    seeded.add(email).add(`other${i}@example.com`);
  }
  await client.query(`CREATE SCHEMA hr;
    CREATE TABLE hr.staff (id int, home_address text, home_lat numeric(9,6), home_lng numeric(9,6), salary numeric(10,2), budget numeric(12,2))`);
  for (let i = 0; i < 60; i++) {
    const row = [i, `${10 + i} Harbour Road, Flat ${i % 9 + 1}, Cork`, (51 + i / 100).toFixed(6), (-8 - i / 100).toFixed(6), (42000 + i * 150).toFixed(2), (900000 + i).toFixed(2)];
    await client.query('INSERT INTO hr.staff VALUES ($1, $2, $3, $4, $5, $6)', row);
    row.slice(1).forEach((v) => seeded.add(String(v)));
  }
  // A plaintext copy of the demo's table and rows, as a database looks before pgveil.
  const demo = generateDemoRows();
  const columns = Object.keys(demo[0] as DemoCustomer) as (keyof DemoCustomer)[];
  for (const row of demo) {
    await client.query(`INSERT INTO public.customers (${columns.join(', ')}) VALUES (${columns.map((_, k) => `$${k + 1}`).join(', ')})`, columns.map((c) => row[c]));
    for (const c of columns) seeded.add(row[c]);
  }
  await client.query('ANALYZE');
  await client.end();
  dir = await mkdtemp(join(tmpdir(), 'pgveil-policy-suggest-'));
  config = join(dir, 'pgveil.yaml');
  await writeFile(config, [
    'proxy:',
    '  upstream:',
    `    host: ${db.host}`,
    `    port: ${db.port}`,
    `    user: ${db.user}`,
    `    password: "${db.password}"`,
    `    database: ${db.database}`,
    '    sslmode: prefer',
    '',
  ].join('\n'));
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.stop();
});

/** No seeded value, whole, in `text`. */
function leakedValues(text: string): string[] {
  return [...seeded].filter((value) => text.includes(value));
}

describe('pgveil policy suggest', () => {
  it('suggests exactly the sensitive columns, with their kinds, and lists the rest as looked at', async () => {
    const { code, out, err } = await run('policy', 'suggest', '--config', config, '--schema', 'crm', '--app-role', 'app');
    expect(err).toBe('');
    expect(code).toBe(0);
    const doc = parse(out) as { columns: Record<string, { kind: string; method: string; scope?: string; reveal: Record<string, string> }> };
    const kinds = Object.fromEntries(Object.entries(doc.columns).map(([key, entry]) => [key, entry.kind]));
    expect(kinds).toEqual(EXPECTED);
    expect(doc.columns['crm.people.birth_date']).toEqual({ kind: 'date', method: 'fpe', scope: 'people', reveal: { app: 'plaintext' } });
    expect(doc.columns['crm.people.full_name']?.method).toBe('tokenise');
    expect(doc.columns['crm.people.card_number']?.method).toBe('fpe');
    expect(out).toMatch(/# 100% of 200 sampled values are valid card numbers \(Luhn\); name hint: card\n/);
    const lookedAt = out.slice(out.indexOf('# Looked at, not suggested:'));
    for (const column of ['request_id', 'created_on', 'code', 'notes']) expect(lookedAt).toContain(`crm.people.${column} (`);
    expect(lookedAt).toMatch(/crm\.people\.code \(text\): best price 100% of 200 sampled values; kind price is suggested only when/);
    expect(lookedAt).toContain('crm.people.notes (text): 180 sampled values; no sampled value is valid for any kind');
    // Integers are not sampled: no kind of a card count is sensitive in a number.
    expect(out).not.toContain('card_count');
    expect(leakedValues(out)).toEqual([]);
  });

  it('writes a file that policy check accepts unchanged, and never overwrites one', async () => {
    const file = join(dir, 'suggested.yaml');
    const written = await run('policy', 'suggest', '--config', config, '--schema', 'crm', '--out', file);
    expect(written.err).toBe('');
    expect(written.code).toBe(0);
    expect(written.out).toContain(`${file}: 11 column(s) suggested`);
    const check = await run('policy', 'check', '--config', config, '--policies', file);
    expect(check.err).toBe('');
    expect(check.out.split('\n').at(-1)).toBe('valid (0 warnings)');
    expect(check.code).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(leakedValues(text)).toEqual([]);
    expect(leakedValues(written.out)).toEqual([]);

    await writeFile(file, 'columns: {}\n');
    const again = await run('policy', 'suggest', '--config', config, '--schema', 'crm', '--out', file);
    expect(again.code).toBe(1);
    expect(again.err).toContain('exists');
    expect(await readFile(file, 'utf8')).toBe('columns: {}\n');
  });

  it('prints a JSON report of counts and shares, never a value', async () => {
    const { code, out, err } = await run('policy', 'suggest', '--config', config, '--schema', 'crm', '--json', '--sample', '50');
    expect(err).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(out) as { schema: string; sampleLimit: number; columns: Record<string, unknown>[]; unsampled: unknown[] };
    expect(report.schema).toBe('crm');
    expect(report.sampleLimit).toBe(50);
    expect(report.unsampled).toEqual([]);
    const card = report.columns.find((c) => c['column'] === 'crm.people.card_number');
    expect(card).toEqual({ column: 'crm.people.card_number', type: 'character varying(19)', kind: 'ccn', score: 1, sampleSize: 50, hints: ['card'], suggested: true, method: 'fpe' });
    const request = report.columns.find((c) => c['column'] === 'crm.people.request_id');
    expect(request).toMatchObject({ kind: 'uuid', score: 1, sampleSize: 50, hints: [], suggested: false });
    expect(typeof request?.['reason']).toBe('string');
    // 40 000 rows, 50 sampled: block sampling, bounded by LIMIT.
    expect(report.columns.find((c) => c['column'] === 'crm.events.kind')).toMatchObject({ sampleSize: 50, suggested: false });
    const suggested = report.columns.filter((c) => c['suggested'] === true).map((c) => [c['column'], c['kind']]);
    expect(Object.fromEntries(suggested)).toEqual(EXPECTED);
    expect(leakedValues(out)).toEqual([]);
  });

  it('suggests addresses, coordinates and salaries from their names and shapes, in types policy check accepts', async () => {
    const { code, out, err } = await run('policy', 'suggest', '--config', config, '--schema', 'hr');
    expect(err).toBe('');
    expect(code).toBe(0);
    const doc = parse(out) as { columns: Record<string, { kind: string; method: string }> };
    expect(Object.fromEntries(Object.entries(doc.columns).map(([k, v]) => [k, `${v.kind} ${v.method}`]))).toEqual({
      'hr.staff.home_address': 'address tokenise',
      'hr.staff.home_lat': 'latlng fpe',
      'hr.staff.home_lng': 'latlng fpe',
      'hr.staff.salary': 'price fpe',
    });
    expect(out).toContain('#   hr.staff.budget (numeric(12,2)): best price 100% of 60 sampled values; kind price is suggested only when');
    expect(leakedValues(out)).toEqual([]);
    const file = join(dir, 'hr-suggested.yaml');
    await writeFile(file, out);
    const check = await run('policy', 'check', '--config', config, '--policies', file);
    expect(check.out.split('\n').at(-1)).toBe('valid (0 warnings)');
    expect(check.code).toBe(0);
  });

  it('finds every sensitive column of the demo from a plaintext copy of its table', async () => {
    const { code, out, err } = await run('policy', 'suggest', '--config', config, '--app-role', 'app');
    expect(err).toBe('');
    expect(code).toBe(0);
    const demoPolicies = parse(await readFile('config/demo-policies.yaml', 'utf8')) as { columns: Record<string, { kind: string }> };
    const doc = parse(out) as { columns: Record<string, { kind: string }> };
    const kinds = (columns: Record<string, { kind: string }>) => Object.fromEntries(Object.entries(columns).map(([k, v]) => [k, v.kind]));
    expect(kinds(doc.columns)).toEqual(kinds(demoPolicies.columns));
    expect(leakedValues(out)).toEqual([]);
    const file = join(dir, 'demo-suggested.yaml');
    await writeFile(file, out);
    const check = await run('policy', 'check', '--config', config, '--policies', file);
    expect(check.out.split('\n').at(-1)).toBe('valid (0 warnings)');
    expect(check.code).toBe(0);
  });

  it('samples through quoted names without running them as SQL, and leaves every table as it was', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM crm.people');
      expect(rows[0]?.n).toBe(String(ROWS));
    } finally {
      await client.end();
    }
  });

  it('reports a table it may not read as not sampled, with the SQLSTATE and no value', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(`DROP ROLE IF EXISTS suggest_reader; CREATE ROLE suggest_reader LOGIN PASSWORD 'reader-pw';
      GRANT USAGE ON SCHEMA crm TO suggest_reader; GRANT SELECT ON crm.people TO suggest_reader`);
    await client.end();
    const url = `postgres://suggest_reader:reader-pw@${db.host}:${db.port}/${db.database}`;
    const { code, out, err } = await run('policy', 'suggest', '--config', config, '--schema', 'crm', '--database-url', url);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('# Not sampled:\n#   crm."VIP ""Guests""": permission denied (SQLSTATE 42501)');
    expect(Object.keys((parse(out) as { columns: object }).columns)).toContain('crm.people.email');
    expect(leakedValues(out)).toEqual([]);
  });

  it('samples in read-only transactions with a statement timeout: a locked table is skipped, the others sampled', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    const sampler = new pg.Client({ connectionString: db.url, types: { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig });
    await locker.connect();
    await sampler.connect();
    const statements: string[] = [];
    const query: SampleQuery = async (sql, params = []) => {
      statements.push(sql);
      return (await sampler.query<Record<string, string | null>>(sql, [...params])).rows;
    };
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE crm."VIP ""Guests""" IN ACCESS EXCLUSIVE MODE');
      const report = await sampleSchema(query, { schema: 'crm', sampleLimit: 50, statementTimeoutMs: 300 });
      expect(report.unsampled).toEqual([{ schema: 'crm', table: 'VIP "Guests"', reason: 'the sample query ran into statement_timeout (SQLSTATE 57014)' }]);
      expect(report.columns.filter((c) => c.score.suggested).map((c) => `${c.table}.${c.column}`)).toContain('people.email');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await sampler.end();
    }
    const samples = statements.filter((sql) => sql.startsWith('SELECT left('));
    expect(samples.length).toBe(4);
    expect(samples.find((sql) => sql.includes('"crm"."events"'))).toMatch(/ TABLESAMPLE SYSTEM \([0-9.]+\) LIMIT 50$/);
    expect(samples.find((sql) => sql.includes('"crm"."people"'))).toMatch(/ FROM "crm"."people" LIMIT 50$/);
    expect(samples).toContainEqual(expect.stringContaining('FROM "crm"."x""; DROP TABLE crm.people; --" LIMIT 50'));
    for (const sample of samples) {
      const at = statements.indexOf(sample);
      expect(statements.slice(at - 2, at)).toEqual(['BEGIN TRANSACTION READ ONLY', 'SET LOCAL statement_timeout = 300']);
    }
  });

  it('refuses a wrong command line with exit 2', async () => {
    expect((await run('policy', 'suggest', '--config', config, '--sample', '0')).code).toBe(2);
    expect((await run('policy', 'suggest', '--config', config, '--app-role', 'no spaces')).code).toBe(2);
    expect((await run('policy', 'suggest', '--schema', 'crm')).code).toBe(2);
    const typo = await run('policy', 'suggest', '--config', config, '--schema', 'crn');
    expect(typo.code).toBe(1);
    expect(typo.err).toContain('schema "crn" has no tables');
    expect(typo.out).toBe('');
  });
});
