/**
 * An attacker with a masked account (support: masks; analyst: tokens) and any SQL, through the
 * proxy alone: the upstream login here is a superuser, so nothing but pgveil's statement rules
 * stands between the attacker and the plaintext. For each category of PostgreSQL's command list,
 * every attempt must be refused (42501, the rule named, no value in any message) or harmless;
 * afterwards no table holds plaintext of a tokenised or fpe column and no object was created.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { ANALYST, APP, POLICIES_YAML, startPolicyHarness, SUPPORT, type PolicyHarness, type TestAccount } from './support/policyHarness.js';

const PHONE = '+1 (555) 010-4477';
const SSN = '123-45-6789';
const EMAIL = 'jane.doe@example.com';
const SECRETS = [PHONE, SSN, EMAIL, '5550104477'];

let harness: PolicyHarness;
let direct: pg.Client;
let app: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness();
  direct = await harness.direct();
  app = await harness.connect(APP);
  await app.query('INSERT INTO customers (full_name, email, ssn, phone, note) VALUES ($1, $2, $3, $4, $5)', ['Jane Doe', EMAIL, SSN, PHONE, 'red-team']);
});

afterAll(async () => {
  await app?.end().catch(() => undefined);
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});

/** Everything the attacker's session receives: rows, notices, notifications, the error. */
interface Outcome {
  code?: string;
  text: string;
}

async function attempt(account: TestAccount, sql: string): Promise<Outcome> {
  const client = await harness.connect(account);
  const received: string[] = [];
  client.on('notice', (notice) => received.push(`${notice.message ?? ''}\n${notice.detail ?? ''}`));
  client.on('notification', (n) => received.push(JSON.stringify(n)));
  try {
    await client.query('LISTEN leak');
    const result = await client.query(sql);
    received.push(JSON.stringify(Array.isArray(result) ? result.map((r) => r.rows) : result.rows));
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { text: received.join('\n') };
  } catch (error) {
    const e = error as { code?: string; message: string; detail?: string; hint?: string };
    received.push([e.message, e.detail ?? '', e.hint ?? ''].join('\n'));
    return { code: e.code, text: received.join('\n') };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Every text-like column of every user table: plaintext of the protected columns must be nowhere but phone (passthrough). */
async function plaintextAtRest(): Promise<string[]> {
  const columns = await direct.query<{ t: string; c: string }>(`
    SELECT format('%I.%I', n.nspname, c.relname) AS t, quote_ident(a.attname) AS c
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'm', 'p') AND a.attnum > 0 AND NOT a.attisdropped
      AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`);
  const found: string[] = [];
  for (const { t, c } of columns.rows) {
    if (t === 'public.customers' && c === 'phone') continue;
    const rows = await direct.query<{ v: string | null }>(`SELECT ${c}::text AS v FROM ${t}`);
    for (const { v } of rows.rows) if (v !== null && [SSN, EMAIL].some((secret) => v.includes(secret))) found.push(`${t}.${c}`);
  }
  return found;
}

function expectRefused(outcome: Outcome, rule: RegExp): void {
  expect(outcome.code).toBe('42501');
  expect(outcome.text).toMatch(rule);
  for (const secret of SECRETS) expect(outcome.text).not.toContain(secret);
}

const CATEGORIES: Record<string, [string, string, RegExp][]> = {
  'CREATE …': [
    ['a function with dynamic SQL', `CREATE FUNCTION leak() RETURNS text LANGUAGE plpgsql AS $$ DECLARE r text; BEGIN EXECUTE 'select ph' || 'one from custo' || 'mers limit 1' INTO r; RETURN r; END $$`, /rule "code"|cannot analyse/],
    ['a plain function', 'CREATE FUNCTION harmless() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$', /rule "code"/],
    ['a procedure', 'CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$', /rule "code"/],
    ['a view', 'CREATE VIEW v_leak AS SELECT phone || \'\' AS p FROM customers', /rule "derived"/],
    ['a materialized view', 'CREATE MATERIALIZED VIEW mv_leak AS SELECT phone FROM customers', /rule "derived"/],
    ['a table as a query', 'CREATE TABLE t_leak AS SELECT phone FROM customers', /rule "derived"/],
    ['a temporary table as a query', 'CREATE TEMP TABLE t_leak AS SELECT ssn FROM customers', /rule "derived"/],
    ['a trigger on a protected table', 'CREATE TRIGGER t BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()', /rule "code"|cannot analyse/],
    ['a rule on a protected table', "CREATE RULE r AS ON INSERT TO customers DO ALSO NOTIFY leak", /rule "code"|cannot analyse/],
    ['an extension', 'CREATE EXTENSION IF NOT EXISTS dblink', /rule "code"/],
    ['a row-level security policy', 'CREATE POLICY p ON customers USING (true)', /rule "code"/],
    ['an event trigger', 'CREATE EVENT TRIGGER e ON ddl_command_start EXECUTE FUNCTION pg_catalog.now()', /rule "code"/],
    ['a table with a generated column', "CREATE TABLE g (a text, b text GENERATED ALWAYS AS (a || '') STORED)", /rule "derived"/],
    ['a role', 'CREATE ROLE sneaky SUPERUSER', /rule "ddl"/],
    ['a schema holding a view', 'CREATE SCHEMA s_leak CREATE VIEW v AS SELECT phone FROM public.customers', /rule "derived"/],
  ],
  'ALTER …': [
    ['a generated column on a protected table', "ALTER TABLE customers ADD COLUMN phone_copy text GENERATED ALWAYS AS (phone || '') STORED", /rule "derived"|refused/],
    ['row-level security off', 'ALTER TABLE customers DISABLE ROW LEVEL SECURITY', /rule "code"/],
    ['triggers off', 'ALTER TABLE customers DISABLE TRIGGER ALL', /rule "code"/],
    ['a role', 'ALTER ROLE CURRENT_USER SET search_path = public', /rule "ddl"/],
    ['the system', "ALTER SYSTEM SET log_statement = 'all'", /rule "code"/],
  ],
  COPY: [
    ['to a server file', "COPY customers TO '/tmp/pgveil-red-team.csv'", /rule "server-files"/],
    ['to a program', "COPY customers TO PROGRAM 'cat > /tmp/pgveil-red-team.txt'", /rule "server-files"/],
    ['from a program', "COPY customers (note) FROM PROGRAM 'echo x'", /rule "server-files"/],
    ['a query to a file', "COPY (SELECT phone FROM customers) TO '/tmp/pgveil-red-team-2.csv'", /rule "server-files"|masked/],
  ],
  DO: [
    ['a notice of a protected column', "DO $$ BEGIN RAISE NOTICE '%', (SELECT phone FROM customers LIMIT 1); END $$", /rule "code"|refused/],
    ['dynamic SQL', "DO $$ BEGIN EXECUTE 'insert into custo' || 'mers (ssn) values (''123-45-6789'')'; END $$", /rule "code"|cannot analyse/],
  ],
  CALL: [
    ['a procedure that does not exist', 'CALL leak_proc()', /./],
  ],
  PREPARE: [
    ['a server file read', "PREPARE p AS SELECT pg_read_file('postgresql.conf')", /rule "server-files"/],
    ['SQL in text', "PREPARE q AS SELECT query_to_xml('select phone from customers', true, false, '')", /rule "code"/],
  ],
  'LISTEN/NOTIFY': [
    ['pg_notify of a masked column', "SELECT pg_notify('leak', phone) FROM customers", /masked|refused/],
  ],
  SET: [
    ['SET ROLE', 'SET ROLE postgres', /rule "role-switch"/],
    ['SET SESSION AUTHORIZATION', 'SET SESSION AUTHORIZATION postgres', /rule "role-switch"/],
    ['set_config of the role', "SELECT set_config('role', 'postgres', false)", /rule "role-switch"/],
    ['set_config of a computed setting', "SELECT set_config(lower('ROLE'), 'postgres', false)", /rule "role-switch"/],
  ],
  'SELECT (built-ins)': [
    ['pg_read_file', "SELECT pg_read_file('postgresql.conf')", /rule "server-files"/],
    ['pg_read_file, quoted and qualified', 'SELECT "pg_catalog"."PG_READ_FILE"(\'postgresql.conf\')', /./],
    ['lo_import', "SELECT lo_import('/etc/hostname')", /rule "server-files"/],
    ['lo_export', "SELECT lo_export(1, '/tmp/pgveil-red-team.lo')", /rule "server-files"/],
    ['query_to_xml', "SELECT query_to_xml('select ssn from customers', true, false, '')", /rule "code"/],
    ['table_to_xml', "SELECT table_to_xml('customers', true, false, '')", /rule "code"/],
    ['other sessions\' queries', 'SELECT query FROM pg_stat_activity', /rule "monitor"/],
    ['other sessions\' queries, by function', 'SELECT * FROM pg_stat_get_activity(NULL)', /rule "monitor"/],
  ],
};

for (const [label, account] of [['support', SUPPORT], ['analyst', ANALYST]] as [string, TestAccount][]) {
  describe(`red team as ${label}`, () => {
    for (const [category, attempts] of Object.entries(CATEGORIES)) {
      describe(category, () => {
        for (const [name, sql, rule] of attempts) {
          it(name, async () => {
            const outcome = await attempt(account, sql);
            if (rule.source === '.') {
              // Refused by pgveil or failing on the server: either way, nothing of value comes back.
              expect(outcome.code).toBeDefined();
              for (const secret of SECRETS) expect(outcome.text).not.toContain(secret);
            } else {
              expectRefused(outcome, rule);
            }
          });
        }
      });
    }
  });
}

describe('after the attacks', () => {
  it('no plaintext of a tokenised or fpe column is stored anywhere, and no attacker object exists', async () => {
    expect(await plaintextAtRest()).toEqual([]);
    const objects = await direct.query(`
      SELECT relname FROM pg_class WHERE relname IN ('v_leak', 'mv_leak', 't_leak', 'g')
      UNION ALL SELECT proname FROM pg_proc WHERE proname IN ('leak', 'harmless', 'p')
      UNION ALL SELECT tgname FROM pg_trigger WHERE tgname = 't'
      UNION ALL SELECT rulename FROM pg_rules WHERE rulename = 'r'
      UNION ALL SELECT rolname FROM pg_roles WHERE rolname = 'sneaky'`);
    expect(objects.rows).toEqual([]);
  });
});

describe('what still works', () => {
  it('analysts and support read, filter, join and listen as before', async () => {
    for (const account of [SUPPORT, ANALYST]) {
      const client = await harness.connect(account);
      try {
        expect((await client.query("SELECT full_name, phone FROM customers WHERE note = 'red-team'")).rows).toHaveLength(1);
        expect((await client.query('SELECT count(*)::int AS n FROM customers c JOIN orders o ON o.customer_email = c.email')).rows).toHaveLength(1);
        for (const sql of ['LISTEN news', "SET statement_timeout = '5s'", 'RESET ROLE', 'SET ROLE NONE', 'BEGIN; SELECT 1; COMMIT']) await client.query(sql);
      } finally {
        await client.end();
      }
    }
  });

  it('the app (plaintext everywhere) still creates views, tables and plain functions', async () => {
    await app.query('CREATE VIEW app_view AS SELECT full_name FROM customers');
    await app.query('CREATE FUNCTION app_plain() RETURNS int LANGUAGE sql AS $$ SELECT 41 + 1 $$');
    expect((await app.query('SELECT app_plain() AS n')).rows).toEqual([{ n: 42 }]);
    await app.query('CREATE TABLE app_table (id int)');
  });

  /** What every role needs a privilege for, the app (plaintext everywhere) included. */
  const EVERY_ROLE: Record<'code' | 'ddl', readonly string[]> = {
    // Code pgveil cannot analyse on protected tables, and routes to the tables under names it does not know.
    code: [
      'CREATE TRIGGER t_app BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()',
      "CREATE FUNCTION app_dynamic() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'insert into custo' || 'mers (ssn) values (''123-45-6789'')'; END $$",
      "DO $$ BEGIN EXECUTE 'insert into custo' || 'mers (ssn) values (''123-45-6789'')'; END $$",
      // SQL as text, another connection, a foreign table.
      "SELECT query_to_xml('insert into custo' || 'mers (ssn) values (''123-45-6789'') returning ssn', true, false, '')",
      'CREATE EXTENSION IF NOT EXISTS dblink',
      "SELECT dblink_exec('dbname=postgres', 'insert into custo' || 'mers (ssn) values (''123-45-6789'')')",
      'CREATE EXTENSION IF NOT EXISTS postgres_fdw',
      "CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'postgres')",
      'CREATE USER MAPPING FOR CURRENT_USER SERVER loopback',
      'IMPORT FOREIGN SCHEMA public LIMIT TO (customers) FROM SERVER loopback INTO app_foreign',
      'CREATE FOREIGN TABLE app_customers (ssn text) SERVER loopback OPTIONS (table_name \'customers\')',
      // A library loaded into the server, or rows replicated into the tables around pgveil.
      "LOAD 'auto_explain'",
      "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'",
      "CREATE SUBSCRIPTION app_sub CONNECTION 'dbname=postgres' PUBLICATION app_pub WITH (connect = false)",
    ],
    // Logins and role memberships, which reach the database without pgveil.
    ddl: [
      "CREATE ROLE app_backdoor LOGIN SUPERUSER PASSWORD 'x'",
      'ALTER ROLE postgres PASSWORD NULL',
      "ALTER ROLE CURRENT_USER SET search_path = 'elsewhere'",
      'GRANT pg_read_server_files TO CURRENT_USER',
    ],
  };

  it.each(Object.keys(EVERY_ROLE) as ('code' | 'ddl')[])('the app needs the %s privilege for what every role needs it for', async (privilege) => {
    for (const sql of EVERY_ROLE[privilege]) {
      const outcome = await attempt(APP, sql);
      expect(outcome.code, sql).toBe('42501');
      expect(outcome.text, sql).toContain(`privileges: { <role>: [${privilege}] }`);
    }
    expect(await plaintextAtRest()).toEqual([]);
    expect((await direct.query("SELECT 1 FROM pg_roles WHERE rolname = 'app_backdoor'")).rows).toEqual([]);
  });
});

describe('privileges in the policy file', () => {
  it('lift a rule for one role, and follow reloads', async () => {
    const file = harness.store.current.file;
    await writeFile(file, `${POLICIES_YAML}privileges:\n  support: [derived, monitor]\n`);
    expect((await harness.store.reload()).ok).toBe(true);
    try {
      expect((await attempt(SUPPORT, 'SELECT count(*) FROM pg_stat_activity')).code).toBeUndefined();
      const view = await attempt(SUPPORT, 'CREATE VIEW support_names AS SELECT full_name FROM customers');
      expect(view.code).toBeUndefined();
      // Reading the view still masks: the catalog says which column it shows.
      const read = await attempt(SUPPORT, 'SELECT full_name FROM support_names');
      expect(read.text).not.toContain('Jane Doe');
      expect((await attempt(ANALYST, 'SELECT count(*) FROM pg_stat_activity')).code).toBe('42501');
      expect((await attempt(SUPPORT, 'SET ROLE postgres')).code).toBe('42501');
    } finally {
      await writeFile(file, POLICIES_YAML);
      await harness.store.reload();
    }
    expect((await attempt(SUPPORT, 'SELECT count(*) FROM pg_stat_activity')).code).toBe('42501');
  });
});
