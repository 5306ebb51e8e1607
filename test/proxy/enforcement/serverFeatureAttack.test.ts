/**
 * Attacks through server features that carry a masked column's value somewhere the read path does
 * not mask: a column's USING expression (ALTER TABLE … TYPE … USING), and the text of errors and
 * notices the server raises while it computes over stored values. Each attempt runs as an account
 * that sees customers.phone masked (SUPPORT, ANALYST) and asserts that no plaintext phone, nor its
 * digits, reaches the client.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ANALYST, SUPPORT, useDirectHarness, type TestAccount } from './support/policyHarness.js';
import { attempt, ATTACK_PHONE, simple } from './support/rawAttempts.js';

const h = useDirectHarness();

beforeEach(async () => {
  await h.direct.query('DELETE FROM customers');
  await h.direct.query('INSERT INTO customers (id, phone, note) VALUES (1, $1, $2)', [ATTACK_PHONE, 'victim']);
});

async function tried(account: TestAccount, statements: readonly string[]): Promise<string> {
  return attempt(h, account, async (session) => {
    let seen = '';
    for (const sql of statements) seen += await simple(session, sql);
    return seen;
  });
}

describe('ALTER TABLE … ALTER COLUMN … TYPE … USING', () => {
  it.each([
    ['the masked column', 'ALTER TABLE customers ALTER COLUMN note TYPE varchar USING phone'],
    ['an expression over it', "ALTER TABLE customers ALTER COLUMN note TYPE text USING (phone || '')"],
  ])('%s copied into an unmasked column is refused', async (_, alter) => {
    for (const account of [SUPPORT, ANALYST]) {
      const seen = await tried(account, [alter, 'SELECT note FROM customers']);
      expect(seen).toMatch(/E .*C42501.*column public\.customers\.phone is masked for this session/);
      expect(seen).not.toContain(ATTACK_PHONE);
    }
    const stored = await h.direct.query('SELECT note FROM customers');
    expect(stored.rows.map((row: { note: string }) => row.note)).toEqual(['victim']);
  });
});
