/**
 * An audit line that cannot be written fails closed: the disk is full (/dev/full) or the reader
 * of the audit pipe went away (a log shipper that died). No plaintext leaves through either door
 * without its line, and the next disclosure is refused again rather than silently unrecorded.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiAuthoriser } from '../../src/api/authorisation.js';
import { AuditWriteError, createAuditLog, recordUnlessUnwritable, type AuditEvent, type AuditLog } from '../../src/audit/index.js';
import { parsePolicies } from '../../src/policy/index.js';
import { apiConfig, authHeaders, login, makeAccount, startHarness, type Harness, type TestAccount } from '../api/support/apiHarness.js';
import { openRawSession } from '../proxy/support/rawProtocol.js';
import { APP, POLICIES_YAML, startPolicyHarness, type PolicyHarness } from '../proxy/enforcement/support/policyHarness.js';

const SSN = '123-45-6789';
const EMAIL = 'jane.doe@example.com';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'pgveil-audit-failure-'));
});
afterAll(async () => rm(folder, { recursive: true, force: true }));

/** The audit log on a pipe whose reader is gone: writes fail with EPIPE. */
function brokenPipeAudit(name: string): AuditLog {
  const fifo = path.join(folder, name);
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const audit = createAuditLog({ kind: 'file', path: fifo });
  closeSync(reader);
  return audit;
}

/** Logins recorded elsewhere (they happen before the destination fails); the rest on `failing`. */
function failingAfterLogin(failing: AuditLog): AuditLog {
  return { record: (event: AuditEvent) => (event.event === 'login' ? undefined : failing.record(event)) };
}

const destinations: [string, () => AuditLog][] = [
  ['the disk is full', () => createAuditLog({ kind: 'file', path: '/dev/full' })],
  ['the audit pipe\'s reader is gone', () => brokenPipeAudit(`pipe-${Math.random().toString(36).slice(2)}`)],
];

describe.each(destinations)('the API when %s', (_name, destination) => {
  let harness: Harness;
  const app: Record<string, TestAccount> = {};
  beforeAll(async () => {
    app['app'] = await makeAccount('app@example.com', ['app']);
    const policies = parsePolicies(POLICIES_YAML, 'policies.yaml');
    harness = await startHarness({
      accounts: [app['app']], config: apiConfig(), audit: failingAfterLogin(destination()),
      authoriser: createApiAuthoriser([], () => policies),
    });
  });
  afterAll(async () => harness?.close());

  it('hands out no plaintext, twice over', async () => {
    const session = await login(harness.url, app['app'] as TestAccount);
    const call = (operation: string, data: string[]) => fetch(`${harness.url}/api/email`, {
      method: 'POST', headers: authHeaders(session), body: JSON.stringify({ id: 1, operation, data, options: { scope: 'customers' } }),
    });
    const tokens = ((await (await call('protect', [EMAIL])).json()) as { result: string[] }).result;
    for (let i = 0; i < 2; i++) {
      const response = await call('unprotect', tokens);
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain(EMAIL);
    }
  });
});

describe.each(destinations)('the proxy when %s', (_name, destination) => {
  let harness: PolicyHarness;
  beforeAll(async () => {
    harness = await startPolicyHarness(undefined, undefined, { audit: failingAfterLogin(destination()) });
    const direct = await harness.direct();
    await direct.end();
    const writer = await harness.connect(APP);
    await writer.query('INSERT INTO customers (ssn, note) VALUES ($1, $2)', [SSN, 'failure']);
    await writer.end();
  });
  afterAll(async () => harness?.stop());

  it('sends no plaintext row, in this session or the next', async () => {
    for (let i = 0; i < 2; i++) {
      const session = await openRawSession(harness.via(APP));
      try {
        session.send(serialize.query("SELECT ssn FROM customers WHERE note = 'failure'"));
        const messages = await session.readUntilReady();
        expect(messages.some((m) => m.body.includes(SSN))).toBe(false);
        expect(messages.some((m) => m.type === 'E')).toBe(true);
      } finally {
        session.close();
      }
    }
  });
});

describe('a reload recorded on a failing destination', () => {
  it('is reported, not thrown (the reload happened); the next disclosure still fails', () => {
    for (const audit of [createAuditLog({ kind: 'file', path: '/dev/full' }), brokenPipeAudit('reload.fifo')]) {
      const reload: AuditEvent = { event: 'policy.reload', outcome: 'ok', file: 'policies.yaml', generation: 2, digest: 'sha256:0', columns: 1 };
      expect(recordUnlessUnwritable(audit, reload)).toBe(false);
      expect(() => audit.record({ event: 'api.unprotect', account: 'a@example.com', kind: 'ssn', scope: 's', method: 'fpe', count: 1 })).toThrow(AuditWriteError);
    }
  });
});
