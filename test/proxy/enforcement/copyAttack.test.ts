/**
 * Attacks on COPY through the proxy, as accounts that may store only tokens (analyst) or see only
 * masks (support): option spellings pgveil could read otherwise than PostgreSQL, frames split at
 * awkward places, binary streams. Each must be refused or harmless: no plaintext stored, none sent back.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYST, startPolicyHarness, SUPPORT, type PolicyHarness } from './support/policyHarness.js';

const SSN = '123-45-6789';
let harness: PolicyHarness;
let direct: pg.Client;
let analyst: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  direct = await harness.direct();
  analyst = await harness.connect(ANALYST);
});
afterAll(async () => {
  await analyst?.end().catch(() => undefined);
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});

async function copyIn(client: pg.Client, sql: string, data: (Buffer | string)[]): Promise<{ code?: string; message: string } | undefined> {
  try {
    await pipeline(Readable.from(data.map((d) => (typeof d === 'string' ? Buffer.from(d, 'utf8') : d))), client.query(copyFrom(sql)));
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

/** Every stored text of the customers table that holds the plaintext SSN. */
async function plaintextStored(): Promise<string[]> {
  const rows = (await direct.query('SELECT c::text AS r FROM customers c')).rows as { r: string }[];
  return rows.map((row) => row.r).filter((r) => r.includes(SSN) || r.includes('123456789'));
}

describe('COPY FROM STDIN options pgveil might read otherwise than PostgreSQL', () => {
  const cases: [string, string, string[]][] = [
    ['DELIMITER * (a star, not a string)', 'COPY customers (note, ssn, full_name) FROM STDIN WITH (DELIMITER *)', [`a*${SSN}*b\t111-22-3333\tc\n`]],
    ["DELIMITER ('|') (a list)", "COPY customers (note, ssn, full_name) FROM STDIN WITH (DELIMITER ('|'))", [`a|${SSN}|b\t111-22-3333\tc\n`]],
    ['FORMAT (csv) (a list)', 'COPY customers (note, ssn, full_name) FROM STDIN WITH (FORMAT (csv))', [`a,${SSN},b\t111-22-3333\tc\n`]],
    ['NULL 1.5 (a float)', 'COPY customers (note, ssn) FROM STDIN WITH (NULL 1.5)', ['fl\t\\N\n']],
  ];
  for (const [name, sql, data] of cases) {
    it(`${name}: refused or harmless`, async () => {
      await direct.query('TRUNCATE customers');
      const error = await copyIn(analyst, sql, data);
      expect(error?.code).toBe('0A000');
      expect(error?.message).toMatch(/COPY option (delimiter|format|null) must be a quoted string constant/);
      expect(await plaintextStored()).toEqual([]);
    });
  }
});

async function copyOut(client: pg.Client, sql: string): Promise<{ data: string; error?: { code?: string; message: string } }> {
  const chunks: Buffer[] = [];
  try {
    await pipeline(client.query(copyTo(sql)), new Writable({ write(chunk: Buffer, _e, done) { chunks.push(chunk); done(); } }));
    return { data: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    return { data: Buffer.concat(chunks).toString('utf8'), error: error as { code?: string; message: string } };
  }
}

const PHONE = '+1 555 010 4477';

describe('COPY TO STDOUT options pgveil might read otherwise than PostgreSQL', () => {
  const cases: [string, string][] = [
    ['FORMAT (csv) (a list)', 'COPY customers (note, phone, id) TO STDOUT WITH (FORMAT (csv))'],
    ['FORMAT csv, DELIMITER * (a star)', 'COPY customers (note, phone, id) TO STDOUT WITH (FORMAT csv, DELIMITER *)'],
  ];
  for (const [name, sql] of cases) {
    it(`${name}: refused or harmless for a session that sees phone masked`, async () => {
      await direct.query('TRUNCATE customers');
      await direct.query('INSERT INTO customers (note, phone) VALUES ($1, $2)', ['a\tb\tc', PHONE]);
      const support = await harness.connect(SUPPORT);
      try {
        const result = await copyOut(support, sql);
        expect(result.error?.code).toBe('0A000');
        expect(result.data).not.toContain(PHONE);
        expect(result.data).not.toContain('010 4477');
      } finally {
        await support.end().catch(() => undefined);
      }
    });
  }
});
