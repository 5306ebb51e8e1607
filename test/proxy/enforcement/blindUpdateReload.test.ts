/**
 * The blind-update rule decides per session, from what its roles read: a statement prepared (Parse
 * or SQL PREPARE) while the session read a tokenised column in plaintext, bound or executed again
 * after a reload that shows it a mask, would write back what it now reads. A reload that narrows a
 * tokenised column's reveal does not end the session (rows are rewritten as they leave), so the
 * Bind and the EXECUTE check the statement again under the session's new read actions.
 */
import { writeFile } from 'node:fs/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, POLICIES_YAML, SUPPORT, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

const NAME = 'Wren Writeback';
const MASKED_NAME = 'public.customers.full_name: { kind: name, method: tokenise, scope: customers, reveal: { app: plaintext, support: mask } }';
/** Support reads full_name in plaintext (and the other columns as before). */
const NAME_REVEALED = POLICIES_YAML.replace(MASKED_NAME, MASKED_NAME.replace('support: mask', 'support: plaintext'));

let harness: PolicyHarness;
let app: pg.Client;
let direct: pg.Client;
let id: number;

beforeAll(async () => {
  expect(NAME_REVEALED).not.toBe(POLICIES_YAML);
  harness = await startPolicyHarness(undefined, NAME_REVEALED);
  app = await harness.connect(APP);
  direct = await harness.direct();
  id = (await app.query<{ id: number }>('INSERT INTO customers (full_name, note) VALUES ($1, $2) RETURNING id', [NAME, 'wb'])).rows[0]!.id;
});

afterAll(async () => {
  for (const client of [app, direct]) await client?.end().catch(() => undefined);
  await harness?.stop();
});

const storedName = async () => (await direct.query('SELECT full_name FROM customers WHERE id = $1', [id])).rows[0].full_name as string;

async function reveal(policies: string): Promise<void> {
  await writeFile(harness.policyFile, policies);
  expect((await harness.store.reload()).ok).toBe(true);
}

/** The refusal a statement met (undefined: it ran); never with the name in it. */
async function refusal(run: Promise<unknown>): Promise<{ code?: string; message: string } | undefined> {
  return run.then(() => undefined, (error: { code?: string; message: string }) => {
    expect(error.message).not.toContain(NAME);
    return error;
  });
}

describe('a statement prepared while the session read the column in plaintext', () => {
  it.each([
    ['by Parse, bound again', undefined,
      (support: pg.Client, value: string) => support.query({ name: 'parsed_write_back', text: 'UPDATE customers SET full_name = $1 WHERE id = $2', values: [value, id] })],
    ['by SQL PREPARE, executed again', 'PREPARE write_back(text, int) AS UPDATE customers SET full_name = $1 WHERE id = $2',
      (support: pg.Client, value: string) => support.query(`EXECUTE write_back('${value}', ${id})`)],
  ])('%s after a reload shows it a mask is refused; nothing changes', async (_how, prepare, write) => {
    await app.query('UPDATE customers SET full_name = $1 WHERE id = $2', [NAME, id]);
    await reveal(NAME_REVEALED);
    const support = await harness.connect(SUPPORT);
    try {
      if (prepare !== undefined) await support.query(prepare);
      await write(support, NAME);
      const before = await storedName();
      await reveal(POLICIES_YAML);
      const seen = (await support.query('SELECT full_name FROM customers WHERE id = $1', [id])).rows[0].full_name as string;
      expect(seen).not.toBe(NAME);
      expect(await refusal(write(support, seen))).toMatchObject({ code: '42501' });
      expect(await storedName()).toBe(before);
      expect((await app.query('SELECT full_name FROM customers WHERE id = $1', [id])).rows[0].full_name).toBe(NAME);
    } finally {
      await support.end();
    }
  });
});
