/**
 * Every uuid input form PostgreSQL accepts reaches a protected uuid column through the proxy (bind
 * parameters, literals, arrays, COPY) and is stored as a token of its canonical form; a text column
 * holding uuids keeps the kind's strict reading. PostgreSQL's own uuid input is the reference.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalUuidText } from '../../../src/proxy/enforcement/valueCodecs/uuidText.js';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

const SCHEMA = `
CREATE TABLE devices (id serial PRIMARY KEY, device_id uuid, device_ref text, note text);
`;
const POLICIES = `
columns:
  public.devices.device_id: { kind: uuid, method: fpe, scope: devices, reveal: { app: plaintext } }
  public.devices.device_ref: { kind: uuid, method: fpe, scope: devices, reveal: { app: plaintext } }
`;

const CANONICAL = '5d2f7a1c-3b4e-4f60-9a8b-7c6d5e4f3a21';
const FORMS = [
  '5D2F7A1C-3B4E-4F60-9A8B-7C6D5E4F3A21',
  '{5d2f7a1c-3b4e-4f60-9a8b-7c6d5e4f3a21}',
  '5d2f7a1c3b4e4f609a8b7c6d5e4f3a21',
  '5d2f-7a1c-3b4e-4f60-9a8b-7c6d-5e4f-3a21',
  '{5d2f7a1c-3b4e4f60-9a8b7c6d-5e4f3a21}',
];
const NEAR_MISSES = [
  '{5d2f7a1c-3b4e-4f60-9a8b-7c6d5e4f3a21', '5d2f7a1c-3b4e-4f60-9a8b-7c6d5e4f3a21-', '5d2f7a1c--3b4e-4f60-9a8b-7c6d5e4f3a21',
  ' 5d2f7a1c-3b4e-4f60-9a8b-7c6d5e4f3a21', '5d2f7a1c3b4e4f609a8b7c6d5e4f3a2', '5d2f7-a1c-3b4e-4f60-9a8b-7c6d5e4f3a21',
];

let harness: PolicyHarness;
let app: pg.Client;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness(SCHEMA, POLICIES);
  app = await harness.connect(APP);
  direct = await harness.direct();
});

afterAll(async () => {
  for (const client of [app, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

/** What the database holds and what the app reads for rows with `note`. */
async function storedAndRead(note: string): Promise<{ stored: string[]; read: string[] }> {
  const sql = 'SELECT device_id FROM devices WHERE note = $1 ORDER BY id';
  const stored = (await direct.query<{ device_id: string }>(sql, [note])).rows.map((r) => r.device_id);
  const read = (await app.query<{ device_id: string }>(sql, [note])).rows.map((r) => r.device_id);
  return { stored, read };
}

function expectTokensOfCanonical(rows: { stored: string[]; read: string[] }, count: number): void {
  expect(rows.read).toEqual(Array(count).fill(CANONICAL));
  expect(rows.stored).toHaveLength(count);
  for (const stored of rows.stored) expect(stored).not.toBe(CANONICAL);
  // fpe of one canonical value is one token, whatever form it was written in.
  expect(new Set(rows.stored).size).toBe(1);
}

describe('uuid input forms through the proxy', () => {
  it('agrees with PostgreSQL’s own uuid input on every form and near miss', async () => {
    for (const text of [...FORMS, ...NEAR_MISSES]) {
      const postgres = await direct.query<{ u: string }>('SELECT $1::uuid::text AS u', [text]).then((r) => r.rows[0]!.u, () => undefined);
      expect(canonicalUuidText(text), text).toBe(postgres);
    }
  });

  it('stores every accepted form sent as a bind parameter as a token of the canonical form', async () => {
    for (const form of FORMS) await app.query('INSERT INTO devices (device_id, note) VALUES ($1, $2)', [form, 'bind']);
    expectTokensOfCanonical(await storedAndRead('bind'), FORMS.length);
  });

  it('stores every accepted form written as a literal, in an array parameter and through COPY', async () => {
    for (const form of FORMS) await app.query(`INSERT INTO devices (device_id, note) VALUES ('${form}', 'literal')`);
    expectTokensOfCanonical(await storedAndRead('literal'), FORMS.length);
    await app.query("INSERT INTO devices (device_id, note) SELECT u, 'array' FROM unnest($1::uuid[]) AS u", [FORMS]);
    expectTokensOfCanonical(await storedAndRead('array'), FORMS.length);
    await pipeline(Readable.from(FORMS.map((form) => `${form}\tcopy\n`)), app.query(copyFrom('COPY devices (device_id, note) FROM STDIN')));
    expectTokensOfCanonical(await storedAndRead('copy'), FORMS.length);
  });

  it('refuses each near miss (22P02) and stores nothing of it', async () => {
    for (const text of NEAR_MISSES) {
      const error = await failure(() => app.query('INSERT INTO devices (device_id, note) VALUES ($1, $2)', [text, 'miss']));
      expect(error.code, text).toBe('22P02');
      expect(error.message).not.toContain(text.trim());
    }
    expect((await direct.query("SELECT count(*)::int AS n FROM devices WHERE note = 'miss'")).rows[0].n).toBe(0);
  });

  it('keeps a text column of uuids strict: only the kind’s own form is accepted', async () => {
    await app.query('INSERT INTO devices (device_ref, note) VALUES ($1, $2)', [CANONICAL, 'text']);
    const stored = (await direct.query("SELECT device_ref FROM devices WHERE note = 'text'")).rows[0].device_ref;
    expect(stored).not.toBe(CANONICAL);
    expect((await app.query("SELECT device_ref FROM devices WHERE note = 'text'")).rows[0].device_ref).toBe(CANONICAL);
    const error = await failure(() => app.query('INSERT INTO devices (device_ref, note) VALUES ($1, $2)', ['5d2f7a1c3b4e4f609a8b7c6d5e4f3a21', 'text']));
    expect(error.code).toBe('22P02');
  });
});
