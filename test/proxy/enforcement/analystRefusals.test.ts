/**
 * What an analyst's BI tool is told when it filters a protected column in a way tokens and fpe
 * ciphertext cannot answer (a date range, LIKE, a function): the rule and what to do instead,
 * never the value.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYST, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;
let analyst: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  analyst = await harness.connect(ANALYST);
});

afterAll(async () => {
  await analyst?.end().catch(() => undefined);
  await harness?.stop();
});

const refusal = async (sql: string, values?: unknown[]): Promise<{ code?: string; message: string }> => {
  try {
    await analyst.query(sql, values);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('not refused');
};

describe('filters tokens cannot answer', () => {
  it.each([
    ["SELECT count(*) FROM customers WHERE birth_date > '1990-01-01'", 'birth_date', 'operator >'],
    ['SELECT count(*) FROM customers WHERE birth_date BETWEEN $1 AND $2', 'birth_date', 'BETWEEN', ['1990-01-01', '2000-12-31']],
    ["SELECT count(*) FROM customers WHERE email LIKE '%@example.org'", 'email', 'LIKE'],
    ["SELECT count(*) FROM customers WHERE lower(email) = 'someone@example.org'", 'email', 'lower()'],
  ] as const)('%s: names the column, the rule and what to do instead', async (sql, column, operator, values?: readonly string[]) => {
    const error = await refusal(sql, values === undefined ? undefined : [...values]);
    expect(error.code).toBe('0A000');
    expect(error.message).toContain(`public.customers.${column}`);
    expect(error.message).toContain(operator);
    expect(error.message).toContain('protected values keep equality only');
    expect(error.message).toContain('compare the column itself with = or IN');
    expect(error.message).not.toMatch(/1990|2000|example\.org|someone/);
  });
});
