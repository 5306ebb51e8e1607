import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cliIo.js';
import { main } from '../../src/cli/main.js';
import { freePort, startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CUSTOMERS_TABLE_SQL as DEMO_TABLE_SQL } from '../../src/cli/demo/demoSchema.js';

const HASH = '$scrypt$ln=4,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const KEYHASH = '$sha256$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

let db: TestPostgres;
let dir: string;

interface Run { code: number; out: string; err: string }

async function run(...args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => { out.push(t); }, err: (t) => { err.push(t); }, env: {} };
  const code = await main(['policy', 'check', ...args], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function configText(policies: string | undefined, opts: { accounts?: string[][]; port?: number; database?: string | null } = {}): string {
  const database = opts.database === undefined ? db.database : opts.database;
  return [
    'proxy:',
    '  upstream:',
    `    host: ${db.host}`,
    `    port: ${opts.port ?? db.port}`,
    `    user: ${db.user}`,
    `    password: "${db.password}"`,
    ...(database === null ? [] : [`    database: ${database}`]),
    '    sslmode: prefer',
    ...(policies === undefined ? [] : [`policies: ${policies}`]),
    ...(opts.accounts ? ['accounts:', ...opts.accounts.map((roles, i) => `  - { email: a${i}@example.com, passwordHash: "${HASH}", apiKeyHash: "${KEYHASH}", roles: [${roles.join(', ')}] }`)] : []),
    '',
  ].join('\n');
}

beforeAll(async () => {
  db = await startTestPostgres();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(DEMO_TABLE_SQL);
  await client.query('CREATE TABLE public.orders (id int, card varchar(8), placed date)');
  await client.end();
  dir = await mkdtemp(join(tmpdir(), 'pgveil-policy-check-'));
  await copyFile('config/demo-policies.yaml', join(dir, 'demo-policies.yaml'));
  await writeFile(join(dir, 'pgveil.yaml'), configText('demo-policies.yaml'));
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.stop();
});

describe('pgveil policy check', () => {
  it('prints what each role sees of each column, and exits 0 for the demo policies', async () => {
    const { code, out, err } = await run('--config', join(dir, 'pgveil.yaml'));
    expect(err).toBe('');
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toBe(`${join(dir, 'demo-policies.yaml')}: 9 columns, checked against ${db.host}:${db.port}/${db.database} as ${db.user}`);
    expect(lines[2]?.split(/\s{2,}/)).toEqual(['column', 'type', 'kind', 'method', 'scope', 'app', 'support', 'analyst', '(other roles)']);
    const row = (column: string) => lines.find((l) => l.startsWith(`public.customers.${column} `))?.trim().split(/\s{2,}/);
    expect(row('ssn')).toEqual(['public.customers.ssn', 'text', 'ssn', 'fpe', 'customers', 'plaintext', 'mask', 'token', 'token']);
    expect(row('birth_date')).toEqual(['public.customers.birth_date', 'date', 'date', 'fpe', 'customers', 'plaintext', 'mask', 'token', 'token']);
    expect(row('full_name')).toEqual(['public.customers.full_name', 'text', 'name (lang en)', 'tokenise', 'customers', 'plaintext', 'mask', 'token', 'token']);
    expect(row('phone')).toEqual(['public.customers.phone', 'text', 'phone', 'passthrough', 'no-scope', 'plaintext', 'mask', 'mask', 'mask']);
    expect(row('city')).toEqual(['public.customers.city', 'text', 'city', 'passthrough', 'no-scope', 'plaintext', 'plaintext', 'redact', 'redact']);
    expect(lines.at(-1)).toBe('valid (0 warnings)');
  });

  it('prints each role\'s API rights: the app its plaintext kinds and scopes, support and analyst none', async () => {
    const { out } = await run('--config', join(dir, 'pgveil.yaml'));
    const lines = out.split('\n');
    const rights = (role: string) => lines[lines.indexOf(`  ${role}`) + 2]?.trim();
    expect(rights('app')).toContain('protect+unprotect ssn/customers (public.customers.ssn)');
    expect(rights('app')).toContain('protect+unprotect ccn/payments (public.customers.card_number)');
    expect(rights('app')).not.toContain('phone');
    expect(rights('support')).toBe('API    no tokenise/fpe rights');
    expect(rights('analyst')).toBe('API    no tokenise/fpe rights');
    expect(lines[lines.indexOf('  support') + 1]).toContain('plaintext: customers.city; mask: customers.full_name, customers.email, customers.ssn, customers.phone');
  });

  it('reports every error and warning with file:line:column and exits 1', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, [
      'columns:',
      '  public.orders.card:',
      '    kind: ccn',
      '  public.orders.placed:',
      '    kind: date',
      '    method: fpe',
      '  public.orders.id:',
      '    kind: numeric',
      '    method: fp',
      '  public.orders.note:',
      '    kind: text',
      '    noise: 2',
      '',
    ].join('\n'));
    const { code, out } = await run('--config', join(dir, 'pgveil.yaml'), '--policies', file);
    expect(code).toBe(1);
    expect(out).toContain(`${file}: 3 columns without errors, checked against`);
    expect(out).toContain([
      '3 errors:',
      `  ${file}:2:3: columns."public.orders.card": character varying(8) is too short for tokens of kind ccn: a 23-character value takes a 66-character token. Make the column varchar(66) or longer, or text, or use method fpe (keeps the length)`,
      `  ${file}:9:13: columns."public.orders.id".method: unknown method "fp"; valid: tokenise, fpe, mask, redact, passthrough`,
      `  ${file}:10:3: columns."public.orders.note": column note does not exist in public.orders; its columns: id, card, placed`,
      '',
      '1 warning:',
      `  ${file}:12:12: columns."public.orders.note".noise: noise 2 gives a value a new token on every write: equality search on this column (WHERE col = ..., IN, joins, GROUP BY, unique constraints) stops working. Use noise 0 if the column is searched`,
      '',
      'not valid: 3 errors, 1 warning; the proxy would refuse this file',
    ].join('\n'));
    expect(out).toMatch(/public\.orders\.placed\s+date\s+date\s+fpe\s+no-scope\s+token/);
  });

  it('reports what serve would refuse: a masked account logging in upstream as a superuser', async () => {
    const config = join(dir, 'superuser-support.yaml');
    await writeFile(config, configText('demo-policies.yaml', { accounts: [['app'], ['support']] }));
    const { code, out } = await run('--config', config);
    expect(code).toBe(1);
    expect(out).toContain(`a1@example.com does not see every protected column in plaintext, but its upstream login "${db.user}" (proxy.upstream.user) is a superuser`);
    expect(out).toMatch(new RegExp(`login  ${db.user} \\(proxy.upstream.user\\): SUPERUSER`));
  });

  it('accepts a least-privilege upstream login per role, and prints what it can do', async () => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'check_support') THEN CREATE ROLE check_support LOGIN; END IF; END $$");
    await admin.end();
    const config = join(dir, 'mapped-support.yaml');
    await writeFile(config, `${configText('demo-policies.yaml', { accounts: [['app'], ['support']] })}`.replace('proxy:\n', 'proxy:\n  upstreamRoles:\n    support: { user: check_support }\n'));
    const { code, out } = await run('--config', config);
    expect(out).toContain('login  check_support (proxy.upstreamRoles.support): not a superuser');
    expect(code).toBe(0);
  });

  it('lists triggers, rules, policies, views and functions on or over protected tables made on the database', async () => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`
      CREATE TABLE IF NOT EXISTS phone_log (phone text);
      CREATE OR REPLACE FUNCTION copy_phone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO phone_log VALUES (NEW.phone); RETURN NEW; END $$;
      CREATE OR REPLACE FUNCTION sneaky() RETURNS text LANGUAGE plpgsql AS $$ DECLARE r text; BEGIN EXECUTE 'select ph' || 'one from cust' || 'omers' INTO r; RETURN r; END $$;
      CREATE OR REPLACE FUNCTION reads_customers() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM public.customers $$;
      CREATE OR REPLACE FUNCTION unrelated() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
      DROP TRIGGER IF EXISTS copy_phone ON customers;
      CREATE TRIGGER copy_phone BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION copy_phone();
      CREATE OR REPLACE VIEW customer_names AS SELECT full_name FROM customers;
      DROP POLICY IF EXISTS everyone ON customers;
      CREATE POLICY everyone ON customers USING (true);`);
    try {
      const { out } = await run('--config', join(dir, 'pgveil.yaml'));
      expect(out).toContain('trigger copy_phone on public.customers: runs copy_phone for every change of the table');
      expect(out).toContain('policy everyone on public.customers: a row-level security policy');
      expect(out).toContain('view public.customer_names: reads public.customers');
      expect(out).toContain('function sneaky(): it runs dynamic SQL');
      expect(out).toContain('function reads_customers(): its body names customers');
      expect(out).not.toContain('function unrelated()');
    } finally {
      await admin.query('DROP TRIGGER copy_phone ON customers; DROP POLICY everyone ON customers; DROP VIEW customer_names');
      await admin.end();
    }
  });

  it('warns about roles no account of the configuration holds', async () => {
    const config = join(dir, 'with-accounts.yaml');
    await writeFile(config, configText('demo-policies.yaml', { accounts: [['app'], ['support', 'ops']] }));
    const { code, out } = await run('--config', config, '--no-database');
    expect(code).toBe(0);
    expect(out).toContain(`  ${join(dir, 'demo-policies.yaml')}:59:3: columns."public.customers.city".reveal.analyst: no account in ${config} has role "analyst"; check its spelling`);
    expect(out.split('\n').at(-1)).toBe('valid (1 warning)');
  });

  it('checks against --database-url without a configuration', async () => {
    const { code, out } = await run('--policies', 'config/demo-policies.yaml', '--database-url', db.url);
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe(`config/demo-policies.yaml: 9 columns, checked against ${db.host}:${db.port}/${db.database} as ${db.user}`);
    expect(out).not.toContain(db.password);
  });

  it('--no-database runs the file checks only', async () => {
    const { code, out } = await run('--policies', 'config/demo-policies.yaml', '--no-database');
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe('config/demo-policies.yaml: 9 columns, file checks only (--no-database)');
    expect(out.split('\n')[2]?.split(/\s{2,}/)).toEqual(['column', 'kind', 'method', 'scope', 'app', 'support', 'analyst', '(other roles)']);
  });

  it('exits 1 when the database cannot be reached, naming it without the password', async () => {
    const config = join(dir, 'unreachable.yaml');
    await writeFile(config, configText('demo-policies.yaml', { port: await freePort() }));
    const { code, out, err } = await run('--config', config);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(new RegExp(`^cannot connect to ${db.host}:\\d+/${db.database} to check the policies: `));
    expect(err).not.toContain(db.password);
  });

  it('exits 2 for command line and configuration mistakes', async () => {
    const usage = await run();
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('give --config (its `policies` path is checked) or --policies FILE');
    expect(usage.err).toContain('Usage: pgveil policy check --config config/pgveil.yaml');

    expect((await run('--config', join(dir, 'pgveil.yaml'), '--bogus')).code).toBe(2);
    expect((await run('--policies', 'x.yaml', '--no-database', '--database-url', db.url)).code).toBe(2);

    const noPolicies = join(dir, 'no-policies.yaml');
    await writeFile(noPolicies, configText(undefined));
    const missing = await run('--config', noPolicies);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`${noPolicies} sets no \`policies\` file: add one, or pass --policies FILE`);

    const noDatabase = join(dir, 'no-database.yaml');
    await writeFile(noDatabase, configText('demo-policies.yaml', { database: null }));
    const needsName = await run('--config', noDatabase);
    expect(needsName.code).toBe(2);
    expect(needsName.err).toContain('give --database NAME');
    expect((await run('--config', noDatabase, '--database', db.database)).code).toBe(0);

    const noUpstream = await run('--policies', 'config/demo-policies.yaml');
    expect(noUpstream.code).toBe(2);
    expect(noUpstream.err).toContain('no database to check against');

    const badConfig = join(dir, 'bad-config.yaml');
    await writeFile(badConfig, 'proxy:\n  upstream:\n    prot: 1\n');
    const configError = await run('--config', badConfig);
    expect(configError.code).toBe(2);
    expect(configError.err).toContain('configuration error:');

    const unreadable = await run('--policies', join(dir, 'nope.yaml'), '--no-database');
    expect(unreadable.code).toBe(2);
    expect(unreadable.err).toBe(`1 error:\n  ${join(dir, 'nope.yaml')}: cannot read the policy file (ENOENT)`);
  });
});
