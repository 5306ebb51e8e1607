/**
 * The audit log, through the real API and proxy: every plaintext disclosure, refusal and login is
 * a line, written before the response that reveals the plaintext leaves, and no line holds a
 * value, a token or a password.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiAuthoriser } from '../../src/api/authorisation.js';
import { createAuditLog, type AuditLog } from '../../src/audit/index.js';
import { parsePolicies } from '../../src/policy/index.js';
import { apiConfig, authHeaders, login, makeAccount, startHarness, type Harness, type TestAccount } from '../api/support/apiHarness.js';
import { APP, POLICIES_YAML, startPolicyHarness, SUPPORT, type PolicyHarness } from '../proxy/enforcement/support/policyHarness.js';

const SSN = '123-45-6789';
const EMAIL = 'jane.doe@example.com';
const PHONE = '+1 (555) 010-4477';

let folder: string;
let file: string;
let audit: AuditLog;

async function lines(): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function rawText(): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'pgveil-audit-'));
  file = path.join(folder, 'audit', 'audit.log');
  audit = createAuditLog({ kind: 'file', path: file });
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the API', () => {
  let harness: Harness;
  const accounts: Record<string, TestAccount> = {};
  beforeAll(async () => {
    accounts['app'] = await makeAccount('app@example.com', ['app']);
    accounts['support'] = await makeAccount('support@example.com', ['support']);
    const policies = parsePolicies(POLICIES_YAML, 'policies.yaml');
    harness = await startHarness({
      accounts: Object.values(accounts), config: apiConfig(), audit,
      authoriser: createApiAuthoriser([], () => policies),
    });
  });
  afterAll(async () => harness?.close());

  it('records an unprotect before its response arrives, with the count and never the values', async () => {
    const app = await login(harness.url, accounts['app'] as TestAccount);
    const call = async (operation: string, data: string[]) => {
      const res = await fetch(`${harness.url}/api/email`, {
        method: 'POST', headers: authHeaders(app), body: JSON.stringify({ id: 1, operation, data, options: { scope: 'customers' } }),
      });
      return (await res.json()) as { result: string[] };
    };
    const tokens = (await call('protect', [EMAIL, 'x@y.zz'])).result;
    const revealed = await call('unprotect', tokens);
    expect(revealed.result[0]).toBe(EMAIL);
    // Read as soon as the response is in: the line is already there.
    const unprotects = (await lines()).filter((line) => line['event'] === 'api.unprotect');
    expect(unprotects).toEqual([expect.objectContaining({ audit: true, account: 'app@example.com', kind: 'email', scope: 'customers', method: 'tokenise', count: 2 })]);
    const text = await rawText();
    for (const secret of [EMAIL, ...tokens, (accounts['app'] as TestAccount).password]) expect(text).not.toContain(secret);
  });

  it('records refusals and logins, ok and failed, with the client address', async () => {
    const support = await login(harness.url, accounts['support'] as TestAccount);
    await fetch(`${harness.url}/api/ssn`, {
      method: 'POST', headers: authHeaders(support), body: JSON.stringify({ id: 1, operation: 'unprotect', data: [SSN], options: { method: 'fpe', scope: 'customers' } }),
    });
    await fetch(`${harness.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'support@example.com', password: 'wrong-password-123' }) });
    await fetch(`${harness.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'hunter2-typed-here', password: 'x' }) });
    const all = await lines();
    expect(all).toContainEqual(expect.objectContaining({ event: 'api.refused', account: 'support@example.com', kind: 'ssn', scope: 'customers', operation: 'unprotect' }));
    expect(all).toContainEqual(expect.objectContaining({ event: 'login', door: 'api', account: 'support@example.com', outcome: 'ok', client: expect.any(String) }));
    expect(all).toContainEqual(expect.objectContaining({ event: 'login', door: 'api', account: 'support@example.com', outcome: 'failed' }));
    expect(all).toContainEqual(expect.objectContaining({ event: 'login', door: 'api', account: '(not an email address)', outcome: 'failed' }));
    const text = await rawText();
    for (const secret of [SSN, 'wrong-password-123', 'hunter2-typed-here']) expect(text).not.toContain(secret);
  });

  it('counts events on /metrics', async () => {
    const metrics = await (await fetch(`${harness.url}/metrics`)).text();
    expect(metrics).toMatch(/pgveil_audit_events_total\{event="api.unprotect"\} 1/);
  });
});

describe('the proxy', () => {
  let harness: PolicyHarness;
  let direct: pg.Client;
  beforeAll(async () => {
    harness = await startPolicyHarness(undefined, undefined, { audit });
    direct = await harness.direct();
    const app = await harness.connect(APP);
    for (const email of [EMAIL, 'second@example.com', 'third@example.com']) {
      await app.query('INSERT INTO customers (ssn, email, phone, note) VALUES ($1, $2, $3, $4)', [SSN, email, PHONE, 'audit']);
    }
    await app.end();
  });
  afterAll(async () => {
    await direct?.end();
    await harness?.stop();
  });

  it('records what a session revealed, aggregated per batch of rows, before the rows leave', async () => {
    const before = (await lines()).length;
    const app = await harness.connect(APP);
    const rows = (await app.query("SELECT ssn, email FROM customers WHERE note = 'audit'")).rows;
    expect(rows.map((r) => r.ssn)).toEqual([SSN, SSN, SSN]);
    const reveals = (await lines()).slice(before).filter((line) => line['event'] === 'proxy.reveal');
    expect(reveals).toEqual([expect.objectContaining({
      account: 'app@example.com', roles: ['app'], columns: ['public.customers.ssn', 'public.customers.email'], rows: 3, session: expect.any(Number),
    })]);
    await app.end();
  });

  it('records no reveal for masks, and records refusals with their rule', async () => {
    const before = (await lines()).length;
    const support = await harness.connect(SUPPORT);
    await support.query("SELECT ssn, email FROM customers WHERE note = 'audit'");
    await support.query('CREATE VIEW audit_leak AS SELECT phone FROM customers').catch(() => undefined);
    await support.end();
    const after = (await lines()).slice(before);
    expect(after.filter((line) => line['event'] === 'proxy.reveal')).toEqual([]);
    expect(after).toContainEqual(expect.objectContaining({ event: 'proxy.refused', account: 'support@example.com', sqlstate: '42501', reason: expect.stringContaining('rule "derived"') }));
    expect(after).toContainEqual(expect.objectContaining({ event: 'login', door: 'proxy', account: 'support@example.com', outcome: 'ok' }));
    const text = await rawText();
    const stored = (await direct.query<{ ssn: string; email: string }>("SELECT ssn, email FROM customers WHERE note = 'audit' LIMIT 1")).rows[0];
    for (const secret of [SSN, EMAIL, PHONE, stored?.ssn ?? '-', stored?.email ?? '-', SUPPORT.password, APP.password]) expect(text).not.toContain(secret);
  });
});

describe('refusal reasons in the audit log', () => {
  it('keep no quoted text of the statement, even from a parser error', async () => {
    const harness = await startPolicyHarness(undefined, undefined, { audit });
    try {
      const support = await harness.connect(SUPPORT);
      await support.query(`INSERT INTO customers (ssn) VALUES ('${SSN}' '${SSN}') RETURNING nonsense!`).catch(() => undefined);
      await support.query(`SELECT pg_read_file('/etc/${SSN}')`).catch(() => undefined);
      // COPY options pgveil does not understand: the refusal names them to the client, not to the log.
      for (const option of [`FORMAT '${SSN}'`, `HEADER '${SSN}'`, `ENCODING 'x''${SSN}'`]) {
        await support.query(`COPY customers (ssn) FROM STDIN WITH (${option})`).catch(() => undefined);
      }
      await support.end();
      const refusals = (await lines()).filter((line) => line['event'] === 'proxy.refused');
      expect(refusals.length).toBeGreaterThan(0);
      expect(await rawText()).not.toContain(SSN);
    } finally {
      await harness.stop();
    }
  });
});
