/**
 * A policy reload while a COPY TO STDOUT runs, on a real server through the proxy: a reload that
 * changes what the COPY does to its columns ends the session with FATAL 40001 before a row of it
 * leaves under the old plan; the proxy and other sessions go on.
 */
import { writeFile } from 'node:fs/promises';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseErrorFields } from '../../../src/proxy/protocol/errorFields.js';
import { openRawSession } from '../support/rawProtocol.js';
import { ANALYST, APP, SCHEMA_SQL, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

const TOKENS_FOR_ANALYST = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext } }
`;
const MASKED_FOR_ANALYST = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, analyst: mask } }
`;

let harness: PolicyHarness;

beforeAll(async () => {
  harness = await startPolicyHarness(SCHEMA_SQL, TOKENS_FOR_ANALYST);
  const app = await harness.connect(APP);
  await app.query("INSERT INTO customers (id, ssn) VALUES (1, '123-45-6789')");
  await app.end();
});

afterAll(async () => {
  await harness?.stop();
});

describe('a policy reload while a COPY TO runs', () => {
  it('ends the session with FATAL 40001 when it changes what the COPY does, before its rows leave', async () => {
    const direct = await harness.direct();
    const stored = (await direct.query('SELECT ssn FROM customers WHERE id = 1')).rows[0].ssn as string;
    await direct.end();
    const session = await openRawSession(harness.via(ANALYST));
    // The server answers CopyOutResponse at once and its row two seconds later: the reload comes between.
    session.send(serialize.query('COPY (SELECT id, ssn FROM customers WHERE pg_sleep(2) IS NOT NULL) TO STDOUT'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await writeFile(harness.policyFile, MASKED_FOR_ANALYST);
    expect((await harness.store.reload()).ok).toBe(true);
    const messages = await session.readUntilClosed(10_000);
    const last = messages[messages.length - 1];
    expect(last?.type).toBe('E');
    expect(Object.fromEntries(parseErrorFields(last?.body ?? Buffer.alloc(0)))).toMatchObject({
      S: 'FATAL', C: '40001', M: expect.stringContaining('the policy file was reloaded'),
    });
    expect(messages.some((message) => message.type === 'd')).toBe(false);
    expect(Buffer.concat(messages.map((message) => message.body)).includes(stored)).toBe(false);
    // The same COPY run again follows the policies now in force, and other sessions never noticed.
    const analyst = await harness.connect(ANALYST);
    await expect(analyst.query('COPY (SELECT id, ssn FROM customers) TO STDOUT')).rejects.toMatchObject({ code: '0A000' });
    expect((await analyst.query('SELECT ssn FROM customers WHERE id = 1')).rows).toEqual([{ ssn: '***-**-6789' }]);
    await analyst.end();
  });
});
