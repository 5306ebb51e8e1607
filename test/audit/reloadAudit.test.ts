/**
 * Reloads in the audit log: policy reloads (a digest of what is in force, never the policies),
 * account reloads (names and counts, never a hash or a password) and keys the reload cannot apply
 * (versions only, never a key).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { accountChanges, policyDigest } from '../../src/audit/index.js';
import { startServices, type RunningServices } from '../../src/cli/services.js';
import type { AccountConfig, PgveilConfig } from '../../src/config/configTypes.js';
import { loadConfig } from '../../src/config/loadConfig.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { parsePolicies } from '../../src/policy/index.js';
import { makeAccount, type TestAccount } from '../api/support/apiHarness.js';

const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
`;
const MORE_POLICIES = `
# the same column, and one more
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { app: plaintext, support: mask } }
  public.customers.email: { kind: email, method: tokenise, scope: customers, reveal: { app: plaintext } }
`;

let folder: string;
let configFile: string;
let policiesFile: string;
let auditFile: string;
let masterKey: string;
let services: RunningServices;
const accounts: Record<string, TestAccount> = {};

async function auditLines(): Promise<Record<string, unknown>[]> {
  const text = await readFile(auditFile, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function eventually<T>(find: () => Promise<T | undefined>, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function writeConfig(list: AccountConfig[], keys: Record<string, unknown> = { masterKeyFile: 'master.key' }): Promise<PgveilConfig> {
  await writeFile(configFile, stringify({
    api: { listen: { host: '127.0.0.1', port: 0 } },
    keys,
    accounts: list,
    logging: { level: 'silent' },
    audit: { destination: 'file', file: 'audit.log' },
    policies: 'policies.yaml',
  }));
  return loadConfig(configFile, { env: {} });
}

/** Everything secret the configuration or the tests hold: none may reach the audit log. */
function secrets(): string[] {
  return [masterKey, ...Object.values(accounts).flatMap((a) => [a.password, a.apiKey, a.config.passwordHash, a.config.apiKeyHash])];
}

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'pgveil-reload-audit-'));
  configFile = path.join(folder, 'pgveil.yaml');
  policiesFile = path.join(folder, 'policies.yaml');
  auditFile = path.join(folder, 'audit.log');
  masterKey = generateMasterKey();
  await writeFile(path.join(folder, 'master.key'), `${masterKey}\n`, { mode: 0o600 });
  await writeFile(policiesFile, POLICIES);
  for (const [name, roles] of [['kept', ['app']], ['changed', ['support']], ['removed', ['app']], ['added', ['app']]] as const) {
    accounts[name] = await makeAccount(`${name}@example.com`, [...roles]);
  }
  const config = await writeConfig(['kept', 'changed', 'removed'].map((name) => (accounts[name] as TestAccount).config));
  services = await startServices(config, { logger: pino({ level: 'silent' }), env: {} });
});

afterAll(async () => {
  await services?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('policy reloads in the audit log', () => {
  it('records a reload with the new generation and digest, and a refused one with those still in force', async () => {
    await writeFile(policiesFile, MORE_POLICIES);
    const ok = await eventually(async () => (await auditLines()).find((line) => line['event'] === 'policy.reload'));
    const digest = policyDigest(parsePolicies(MORE_POLICIES, policiesFile));
    expect(ok).toMatchObject({ audit: true, outcome: 'ok', file: policiesFile, generation: 2, columns: 2, digest });
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digest).not.toBe(policyDigest(parsePolicies(POLICIES, policiesFile)));

    await writeFile(policiesFile, 'columns:\n  public.customers.ssn: { kind: nonsense }\n');
    const failed = await eventually(async () => (await auditLines()).find((line) => line['event'] === 'policy.reload' && line['outcome'] === 'failed'));
    expect(failed).toMatchObject({ generation: 2, columns: 2, digest });

    const text = await readFile(auditFile, 'utf8');
    for (const content of ['nonsense', 'tokenise', 'customers.email', 'plaintext']) expect(text).not.toContain(content);
  });

  it('digests what the policies decide, not how the file is written', () => {
    const layout = MORE_POLICIES.replace('# the same column, and one more', '# reworded').replace(/: \{ /g, ':  { ');
    expect(policyDigest(parsePolicies(layout, 'other.yaml'))).toBe(policyDigest(parsePolicies(MORE_POLICIES, policiesFile)));
  });
});

describe('account reloads in the audit log', () => {
  it('records the accounts added, removed and changed by name and count, never a hash or a password', async () => {
    const kept = accounts['kept'] as TestAccount;
    const changed = { ...(accounts['changed'] as TestAccount).config, enabled: false };
    const next = await writeConfig([kept.config, changed, (accounts['added'] as TestAccount).config]);
    await services.applyConfig(next);
    const line = (await auditLines()).find((l) => l['event'] === 'accounts.reload');
    expect(line).toEqual({
      audit: true, level: 30, time: expect.any(String), event: 'accounts.reload', outcome: 'ok',
      total: 3, added: 1, removed: 1, changed: 1, accounts: ['added@example.com', 'changed@example.com', 'removed@example.com'],
    });
    const text = await readFile(auditFile, 'utf8');
    for (const secret of secrets()) expect(text).not.toContain(secret);
  });

  it('records a configuration that did not load as a refused account reload', async () => {
    services.configRefused();
    expect((await auditLines()).filter((l) => l['event'] === 'accounts.reload').at(-1)).toMatchObject({ outcome: 'failed', reason: 'invalid_configuration' });
  });

  it('counts a new password or other roles as a change, and nothing else', () => {
    const a = (accounts['kept'] as TestAccount).config;
    expect(accountChanges([a], [{ ...a, email: ' KEPT@example.com', roles: [...a.roles] }])).toMatchObject({ changed: 0, added: 0, removed: 0 });
    expect(accountChanges([a], [{ ...a, roles: ['support'] }])).toMatchObject({ changed: 1, accounts: ['kept@example.com'] });
    expect(accountChanges([a], [{ ...a, passwordHash: (accounts['added'] as TestAccount).config.passwordHash }])).toMatchObject({ changed: 1 });
  });
});

describe('key reloads in the audit log', () => {
  it('says a reload naming other keys needs a restart, with versions only, and keeps the keys in force', async () => {
    const next = generateMasterKey();
    await writeFile(path.join(folder, 'next.key'), `${next}\n`, { mode: 0o600 });
    const current = [(accounts['kept'] as TestAccount).config];
    await services.applyConfig(await writeConfig(current, { masterKeyFile: 'next.key', keyVersion: 2, previousKeys: [{ version: 1, file: 'master.key' }] }));
    expect((await auditLines()).filter((l) => l['event'] === 'keys.reload')).toEqual([expect.objectContaining({
      outcome: 'restart_required', keyVersion: 1, versions: [1], requestedKeyVersion: 2, requestedVersions: [2, 1],
    })]);

    await services.applyConfig(await writeConfig(current, { masterKeyFile: 'missing.key' }));
    expect((await auditLines()).filter((l) => l['event'] === 'keys.reload').at(-1)).toMatchObject({ outcome: 'failed', keyVersion: 1, requestedKeyVersion: 1 });

    // The same keys again: nothing to say.
    const before = (await auditLines()).length;
    await services.applyConfig(await writeConfig(current));
    expect((await auditLines()).slice(before).filter((l) => l['event'] === 'keys.reload')).toEqual([]);

    const text = await readFile(auditFile, 'utf8');
    for (const secret of [next, ...secrets()]) expect(text).not.toContain(secret);
  });
});
