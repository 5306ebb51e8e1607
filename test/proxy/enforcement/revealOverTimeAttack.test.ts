/**
 * Authorisation over time on the read path: a policy reload takes a reveal or a privilege from a
 * role while its sessions hold what was allowed before — a prepared statement, a statement of SQL
 * PREPARE, a cursor WITH HOLD. What leaves after the reload must be what the policies in force
 * allow: no plaintext of a column the role now sees masked, no result of a rule it no longer has
 * lifted.
 */
import { writeFile } from 'node:fs/promises';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP, ANALYST, POLICIES_YAML, useDirectHarness, type TestAccount } from './support/policyHarness.js';

const PHONE = '+1 555 010 4477';
const SSN = '123-45-6789';
const PHONE_MASKED_FOR_APP = POLICIES_YAML.replace('reveal: { app: plaintext, "*": mask }', 'reveal: { "*": mask }');
const SSN_MASKED_FOR_APP = POLICIES_YAML.replace(
  'public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }',
  'public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { support: mask, app: mask } }',
);
const ANALYST_MONITORS = `${POLICIES_YAML}privileges:\n  analyst: [monitor]\n`;

const h = useDirectHarness();

async function reload(yaml: string): Promise<void> {
  await writeFile(h.harness.policyFile, yaml);
  await h.harness.store.reload();
}

beforeEach(async () => {
  await reload(POLICIES_YAML);
  await h.direct.query('DELETE FROM customers');
  const app = await h.harness.connect(APP);
  // Through the proxy, so the ssn is stored as its fpe value.
  for (let id = 1; id <= 20; id++) await app.query('INSERT INTO customers (id, phone, ssn) VALUES ($1, $2, $3)', [id, PHONE, SSN]);
  await app.end();
  await h.direct.query('ANALYZE customers');
});

afterEach(async () => reload(POLICIES_YAML));

async function seen(client: pg.Client, query: pg.QueryConfig): Promise<string> {
  try {
    return JSON.stringify((await client.query(query)).rows);
  } catch (error) {
    const e = error as pg.DatabaseError;
    return `E ${e.code ?? ''} ${e.message}`;
  }
}

/** Prepares under `before`, reloads `after`, runs again; everything the client saw after the reload. */
async function afterReload(account: TestAccount, before: string, after: string, setup: readonly (string | pg.QueryConfig)[], run: readonly (string | pg.QueryConfig)[]): Promise<string> {
  await reload(before);
  const client = await h.harness.connect(account);
  let ended = '';
  client.on('error', (error) => { ended += `FATAL ${(error as pg.DatabaseError).code ?? ''} ${error.message}\n`; });
  try {
    for (const step of setup) {
      const out = await seen(client, typeof step === 'string' ? { text: step } : step);
      expect(out, JSON.stringify(step)).not.toMatch(/^E /);
    }
    await reload(after);
    let out = '';
    for (const step of run) out += `${await seen(client, typeof step === 'string' ? { text: step } : step)}\n`;
    return out + ended;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('a reveal taken from a role while its session holds statements and cursors', () => {
  const phoneExpression = "SELECT phone || '' AS p FROM customers WHERE id = 1";
  const prepared: pg.QueryConfig = { name: 'pp', text: phoneExpression };

  it.each([
    ['a statement prepared by Parse', [prepared], [prepared]],
    ['a statement of SQL PREPARE', [`PREPARE sp AS ${phoneExpression}`], ['EXECUTE sp']],
    ['a cursor WITH HOLD over an expression', [`DECLARE hc CURSOR WITH HOLD FOR ${phoneExpression}`], ['FETCH ALL FROM hc']],
    ['a cursor WITH HOLD over the bare column', ['DECLARE hb CURSOR WITH HOLD FOR SELECT phone FROM customers WHERE id = 1'], ['FETCH ALL FROM hb']],
  ])('passthrough phone, plaintext → mask: %s', async (_, setup, run) => {
    const out = await afterReload(APP, POLICIES_YAML, PHONE_MASKED_FOR_APP, setup, run);
    expect(out).not.toContain(PHONE);
    expect(out).toMatch(/^(E|FATAL) 57P01 terminating connection because a policy reload took from this session .*: its roles no longer see every protected column in plaintext$/m);
  });

  it.each([
    ['a cursor WITH HOLD', ['DECLARE hs CURSOR WITH HOLD FOR SELECT ssn FROM customers WHERE id = 1'], ['FETCH ALL FROM hs']],
    ['a statement of SQL PREPARE', ['PREPARE ss AS SELECT ssn FROM customers WHERE id = 1'], ['EXECUTE ss']],
    ['a statement prepared by Parse', [{ name: 'ps', text: 'SELECT ssn FROM customers WHERE id = 1' }], [{ name: 'ps', text: 'SELECT ssn FROM customers WHERE id = 1' }]],
  ])('fpe ssn, plaintext → mask: %s', async (_, setup, run) => {
    const out = await afterReload(APP, POLICIES_YAML, SSN_MASKED_FOR_APP, setup as (string | pg.QueryConfig)[], run as (string | pg.QueryConfig)[]);
    expect(out).not.toContain(SSN);
  });
});

describe('a privilege taken from a role while its session holds statements and cursors', () => {
  // pg_stats samples stored values: the passthrough phone is plaintext at rest, masked for analyst.
  const stats = "SELECT most_common_vals::text AS v FROM pg_stats WHERE tablename = 'customers' AND attname = 'phone'";

  it('the privilege works while granted', async () => {
    const client = await (async () => { await reload(ANALYST_MONITORS); return h.harness.connect(ANALYST); })();
    try {
      expect(await seen(client, { text: stats })).toContain(PHONE);
    } finally {
      await client.end();
    }
  });

  it.each([
    ['a statement prepared by Parse', [{ name: 'st', text: stats }], [{ name: 'st', text: stats }]],
    ['a statement of SQL PREPARE', [`PREPARE sst AS ${stats}`], ['EXECUTE sst']],
    ['a cursor WITH HOLD', [`DECLARE hst CURSOR WITH HOLD FOR ${stats}`], ['FETCH ALL FROM hst']],
  ])('monitor removed: %s', async (_, setup, run) => {
    const out = await afterReload(ANALYST, ANALYST_MONITORS, POLICIES_YAML, setup as (string | pg.QueryConfig)[], run as (string | pg.QueryConfig)[]);
    expect(out).not.toContain(PHONE);
    expect(out).toMatch(/^(E|FATAL) 57P01 .*: its roles lost the privilege "monitor"$/m);
  });

  it('a reload that takes nothing from the roles keeps the session and what it holds', async () => {
    const widened = `${ANALYST_MONITORS}  support: [derived]\n`.replace('reveal: { app: plaintext, "*": mask }', 'reveal: { app: plaintext, analyst: plaintext, "*": mask }');
    const out = await afterReload(ANALYST, ANALYST_MONITORS, widened, [{ name: 'kt', text: stats }, `DECLARE kh CURSOR WITH HOLD FOR ${stats}`],
      [{ name: 'kt', text: stats }, 'FETCH ALL FROM kh']);
    expect(out).not.toMatch(/^(E|FATAL) /m);
    expect(out.split(PHONE).length).toBe(3);
  });
});
