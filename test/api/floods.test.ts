/**
 * One client's dear request must not stall the others: while the API works through a batch that
 * builds a format-preserving table per value, or through long values, /healthz keeps answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, makeAccount, protect, startHarness, type Harness, type Session } from './support/apiHarness.js';

const PAUSE_LIMIT_MS = Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250);

let harness: Harness;
let session: Session;

beforeAll(async () => {
  const account = await makeAccount('flood@example.com');
  harness = await startHarness({ accounts: [account] });
  session = await login(harness.url, account);
  // One-time engine tables are built by the first call, not by the floods measured below.
  await protect(harness.url, session, 'email', { id: 1, operation: 'protect', data: ['warm@example.com'], options: { method: 'fpe' } });
  await protect(harness.url, session, 'name', { id: 1, operation: 'protect', data: ['Warm Up'] });
});

afterAll(() => harness?.close());

/** The slowest /healthz answer while `work` runs, polled every 10 ms. */
async function slowestHealthzDuring<T>(work: Promise<T>): Promise<{ result: T; slowestMs: number; polls: number }> {
  let done = false;
  const finished = work.finally(() => { done = true; });
  let slowestMs = 0;
  let polls = 0;
  while (!done) {
    const began = performance.now();
    const res = await fetch(`${harness.url}/healthz`);
    await res.text();
    expect(res.status).toBe(200);
    slowestMs = Math.max(slowestMs, performance.now() - began);
    polls++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { result: await finished, slowestMs, polls };
}

function uniqueTldEmails(count: number): string[] {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: count }, (_, i) => {
    let n = i + 7919;
    let tld = '';
    for (let k = 0; k < 4; k++) { tld += letters[n % 26]; n = Math.floor(n / 26); }
    return `ab@cd.${tld}`;
  });
}

describe('the API under a dear request', () => {
  it('answers /healthz while one request builds a table per email (unique four-letter TLDs)', async () => {
    const emails = uniqueTldEmails(120);
    const { result, slowestMs, polls } = await slowestHealthzDuring(protect(harness.url, session, 'email', { id: 1, operation: 'protect', data: emails, options: { method: 'fpe', scope: 'flood' } }));
    expect(result.status).toBe(200);
    expect((result.body['result'] as string[]).length).toBe(emails.length);
    expect(polls).toBeGreaterThan(5);
    if (process.env.PGVEIL_PRINT_PAUSES) console.log(`slowest /healthz during the table flood: ${slowestMs.toFixed(1)} ms over ${polls} polls`);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('answers /healthz while one request protects thousands of long values', async () => {
    const names = Array.from({ length: 500 }, (_, i) => `${"Grace Hopper ".repeat(300)}${i}`);
    const { result, slowestMs, polls } = await slowestHealthzDuring(protect(harness.url, session, 'name', { id: 1, operation: 'protect', data: names, options: { method: 'fpe', scope: 'flood' } }));
    expect(result.status).toBe(200);
    expect(polls).toBeGreaterThan(5);
    if (process.env.PGVEIL_PRINT_PAUSES) console.log(`slowest /healthz during the long-value flood: ${slowestMs.toFixed(1)} ms over ${polls} polls`);
    expect(slowestMs).toBeLessThan(PAUSE_LIMIT_MS);
  });

  it('refuses a value past api.limits.maxElementBytes before working on it', async () => {
    const res = await protect(harness.url, session, 'name', { id: 1, operation: 'protect', data: ['x'.repeat(5000)] });
    expect(res.status).toBe(413);
    expect(JSON.stringify(res.body)).not.toContain('xxxx');
  });
});
