import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pgCatalogQuery } from '../../src/policy/catalogConnection.js';
import { PolicyError } from '../../src/policy/policyError.js';
import { openPolicyStore, type PolicyStore } from '../../src/policy/policyStore.js';
import type { PolicySet } from '../../src/policy/policyTypes.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const GOOD = 'columns:\n  public.customers.ssn:\n    kind: ssn\n    method: fpe\n    reveal: { app: plaintext }\n';
const GOOD_TOO = 'columns:\n  public.customers.ssn:\n    kind: ssn\n    method: fpe\n    reveal: { app: plaintext, support: mask }\n';
const BAD = 'columns:\n  public.customers.ssn:\n    kind: ssn\n    method: fp\n';

let dir: string;
let file: string;
let store: PolicyStore | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pgveil-policies-'));
  file = join(dir, 'policies.yaml');
  await writeFile(file, GOOD);
});

afterEach(async () => {
  store?.close();
  store = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Resolves with the next value `register` reports, or rejects after `ms`. */
function next<T>(register: (report: (value: T) => void) => void, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('nothing reported in time')), ms);
    register((value) => { clearTimeout(timer); resolve(value); });
  });
}

function supportView(set: PolicySet): string | undefined {
  return set.get('public', 'customers', 'ssn')?.reveal.get('support');
}

describe('PolicyStore (file checks)', () => {
  it('refuses to open on an invalid file', async () => {
    await writeFile(file, BAD);
    await expect(openPolicyStore({ file, watchFile: false, reloadOnSighup: false })).rejects.toBeInstanceOf(PolicyError);
  });

  it('reload() swaps in a valid file and keeps the previous set when the file is bad', async () => {
    const errors: unknown[] = [];
    const changes: PolicySet[] = [];
    store = await openPolicyStore({ file, watchFile: false, reloadOnSighup: false, onError: (e) => errors.push(e) });
    store.onChange((set) => changes.push(set));
    const first = store.current;

    await writeFile(file, BAD);
    const refused = await store.reload();
    expect(refused.ok).toBe(false);
    expect(store.current).toBe(first);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(PolicyError);
    expect((errors[0] as PolicyError).message).toBe(`${file}:4:13: columns."public.customers.ssn".method: unknown method "fp"; valid: tokenise, fpe, mask, redact, passthrough`);
    expect(changes).toEqual([]);

    await writeFile(file, GOOD_TOO);
    const applied = await store.reload();
    expect(applied.ok).toBe(true);
    expect(supportView(store.current)).toBe('mask');
    expect(changes).toEqual([store.current]);
  });

  it('reloads when the file changes, also when an editor replaces it by renaming', async () => {
    const reloads: PolicySet[] = [];
    const errors: unknown[] = [];
    let onReload: (set: PolicySet) => void = () => undefined;
    let onError: (err: unknown) => void = () => undefined;
    store = await openPolicyStore({
      file, reloadOnSighup: false, debounceMs: 20,
      onReload: (set) => { reloads.push(set); onReload(set); },
      onError: (err) => { errors.push(err); onError(err); },
    });
    const previous = store.current;

    const refused = next<unknown>((report) => { onError = report; });
    await writeFile(file, BAD);
    expect(await refused).toBeInstanceOf(PolicyError);
    expect(store.current).toBe(previous);

    const applied = next<PolicySet>((report) => { onReload = report; });
    await writeFile(join(dir, '.policies.yaml.swp'), GOOD_TOO);
    await rename(join(dir, '.policies.yaml.swp'), file);
    expect(supportView(await applied)).toBe('mask');
    expect(store.current).toBe(reloads.at(-1));
  });

  it('reloads on SIGHUP', async () => {
    let onReload: (set: PolicySet) => void = () => undefined;
    store = await openPolicyStore({ file, watchFile: false, onReload: (set) => onReload(set) });
    await writeFile(file, GOOD_TOO);
    const applied = next<PolicySet>((report) => { onReload = report; });
    process.kill(process.pid, 'SIGHUP');
    expect(supportView(await applied)).toBe('mask');
    expect(supportView(store.current)).toBe('mask');
  });

  it('close() stops listening', async () => {
    store = await openPolicyStore({ file, watchFile: false });
    const before = process.listenerCount('SIGHUP');
    store.close();
    expect(process.listenerCount('SIGHUP')).toBe(before - 1);
  });
});

describe('PolicyStore (with the catalog)', () => {
  let db: TestPostgres;
  let client: pg.Client;

  beforeAll(async () => {
    db = await startTestPostgres();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('CREATE TABLE public.customers (id int, ssn text, born date)');
  }, 180_000);

  afterAll(async () => {
    await client?.end();
    await db?.stop();
  });

  it('refuses a file that does not fit the database and keeps the previous set', async () => {
    const errors: unknown[] = [];
    store = await openPolicyStore({ file, catalog: pgCatalogQuery(client), watchFile: false, reloadOnSighup: false, onError: (e) => errors.push(e) });
    const previous = store.current;

    await writeFile(file, `${GOOD}  public.customers.born:\n    kind: date\n`);
    const outcome = await store.reload();
    expect(outcome.ok).toBe(false);
    expect(store.current).toBe(previous);
    expect((errors[0] as PolicyError).message).toBe(
      `${file}:6:3: columns."public.customers.born": tokens are text, longer than the value, and do not fit a date column; use method fpe to keep a date, or change the column to text`,
    );

    await writeFile(file, `${GOOD}  public.customers.born:\n    kind: date\n    method: fpe\n    noise: 0\n`);
    expect((await store.reload()).ok).toBe(true);
    expect(store.current.get('public', 'customers', 'born')?.method).toBe('fpe');
  });

  it('keeps the previous set when a column it names is dropped, until the file follows', async () => {
    store = await openPolicyStore({ file, catalog: pgCatalogQuery(client), watchFile: false, reloadOnSighup: false });
    await client.query('ALTER TABLE public.customers RENAME COLUMN ssn TO ssn_old');
    try {
      const outcome = await store.reload();
      expect(outcome.ok).toBe(false);
      expect(outcome.ok ? '' : (outcome.error as Error).message).toContain('column ssn does not exist in public.customers; its columns: id, ssn_old, born');
      expect(store.current.get('public', 'customers', 'ssn')).toBeDefined();
    } finally {
      await client.query('ALTER TABLE public.customers RENAME COLUMN ssn_old TO ssn');
    }
  });
});
