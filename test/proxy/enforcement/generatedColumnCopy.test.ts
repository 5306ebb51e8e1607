/**
 * COPY without a column list skips a table's generated columns (PostgreSQL copies "all columns
 * except generated columns"), so a stream's fields are not the table's columns by position when
 * the table has one: pgveil must not reveal, mask or protect a field by a position that names
 * another column (a masked passthrough column was once shown in plaintext this way).
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';

const SCHEMA = `
CREATE TABLE contacts (
  id int PRIMARY KEY,
  doubled int GENERATED ALWAYS AS (id * 2) STORED,
  phone text,
  ssn text,
  note text
);
`;

const POLICIES = `
columns:
  public.contacts.phone: { kind: phone, method: passthrough, reveal: { app: plaintext, "*": mask } }
  public.contacts.ssn: { kind: ssn, method: fpe, scope: contacts, reveal: { app: plaintext, support: mask } }
`;

const PHONE = '+1 415 555 0142';
const SSN = '123-45-6789';

let harness: PolicyHarness;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness(SCHEMA, POLICIES);
  direct = await harness.direct();
  const app = await harness.connect(APP);
  await app.query('INSERT INTO contacts (id, phone, ssn, note) VALUES (1, $1, $2, $3)', [PHONE, SSN, 'plain note']);
  await app.end();
});

afterAll(async () => {
  for (const client of [direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

async function collect(client: pg.Client, sql: string): Promise<string> {
  const chunks: Buffer[] = [];
  await pipeline(client.query(copyTo(sql)), new Writable({ write(chunk: Buffer, _encoding, done) { chunks.push(chunk); done(); } }));
  return Buffer.concat(chunks).toString('utf8');
}

async function load(client: pg.Client, sql: string, data: string | Buffer): Promise<void> {
  await pipeline(Readable.from([Buffer.from(data)]), client.query(copyFrom(sql)));
}

/** The COPY's output as `account` on a connection of its own (a failed COPY ends the session). */
async function copyOutAs(account: typeof SUPPORT, sql: string): Promise<string | { failed: string | undefined }> {
  const client = await harness.connect(account);
  try {
    return await collect(client, sql);
  } catch (error) {
    return { failed: (error as { code?: string }).code ?? (error as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('COPY of a table with a generated column, without a column list', () => {
  it('masks a passthrough column by its place in the stream, generated columns left out (text COPY TO)', async () => {
    const masked = await copyOutAs(SUPPORT, 'COPY contacts TO STDOUT');
    expect(masked).toMatch(/^1\t[^\t]+\t[^\t]+\tplain note\n$/);
    expect(masked).not.toContain(PHONE);
    expect(masked).not.toContain(SSN);
    expect(await copyOutAs(APP, 'COPY contacts TO STDOUT')).toBe(`1\t${PHONE}\t${SSN}\tplain note\n`);
  });

  it('masks by place in a binary COPY TO as well', async () => {
    const masked = await copyOutAs(SUPPORT, 'COPY contacts TO STDOUT (FORMAT binary)');
    expect(typeof masked).toBe('string');
    expect(masked).not.toContain(PHONE);
    expect(masked).toContain('plain note');
  });

  it('masks and reveals by name with a column list', async () => {
    const masked = await copyOutAs(SUPPORT, 'COPY contacts (id, phone, ssn, note) TO STDOUT');
    expect(typeof masked).toBe('string');
    expect(masked).toMatch(/^1\t[^\t]+\t[^\t]+\tplain note\n$/);
    expect(masked).not.toContain(PHONE);
    expect(masked).not.toContain(SSN);
    expect(await copyOutAs(APP, 'COPY contacts (id, phone, ssn) TO STDOUT')).toBe(`1\t${PHONE}\t${SSN}\n`);
  });

  it('stores no plaintext in a protected column (text COPY FROM)', async () => {
    const client = await harness.connect(APP);
    const error = await load(client, 'COPY contacts FROM STDIN', '2\t+1 415 555 0199\t987-65-4321\tnote 2\n').catch((caught: unknown) => caught);
    await client.end().catch(() => undefined);
    expect(error).toBeInstanceOf(Error);
    expect((await direct.query('SELECT ssn FROM contacts WHERE id = 2')).rows).toEqual([]);
  });
});
