/**
 * The demo table and its rows. The table is created straight on PostgreSQL (DDL needs no
 * protection); the rows go in through the proxy as the app account, so the database only ever
 * holds what the policies store.
 */
import pg from 'pg';
import { generateDemoRows, type DemoCustomer } from './demoRows.js';
import { DEMO_DB_NAME, DEMO_DB_USER, DEMO_HOST } from './demoSettings.js';

/** The table config/demo-policies.yaml is written for. */
export const CUSTOMERS_TABLE_SQL = `
CREATE TABLE IF NOT EXISTS public.customers (
  id bigserial PRIMARY KEY,
  full_name text,
  email text,
  ssn text,
  phone text,
  card_number text,
  birth_date date,
  city text,
  ip_address inet,
  external_id uuid
)`;

const COLUMNS: readonly (keyof DemoCustomer)[] = [
  'full_name', 'email', 'ssn', 'phone', 'card_number', 'birth_date', 'city', 'ip_address', 'external_id',
];
/** Rows per INSERT: one round trip each, well under the 65535 parameters of a statement. */
const BATCH = 50;

async function connected(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client({ host: DEMO_HOST, database: DEMO_DB_NAME, connectionTimeoutMillis: 15_000, ...config });
  client.on('error', () => undefined); // a dropped connection surfaces as the failing query's error
  await client.connect();
  return client;
}

/**
 * The upstream roles the demo's pgveil roles log in as, least privilege each: the app reads and
 * writes the table; support and analyst only read it. None is a superuser, none reaches the
 * server's files or programs, none owns the table or may create objects beside it.
 */
export const DEMO_UPSTREAM_ROLES: Readonly<Record<string, string>> = { app: 'pgveil_app', support: 'pgveil_support', analyst: 'pgveil_analyst' };

/** SQL creating (or updating) the demo's upstream roles with `password`, and granting each its least privilege. */
export function demoUpstreamRolesSql(password: string): string {
  const quoted = `'${password.replace(/'/g, "''")}'`;
  const roles = Object.values(DEMO_UPSTREAM_ROLES);
  return [
    ...roles.map((role) => `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role}; END IF; END $$`),
    ...roles.map((role) => `ALTER ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD ${quoted}`),
    'REVOKE CREATE ON SCHEMA public FROM PUBLIC',
    `GRANT USAGE ON SCHEMA public TO ${roles.join(', ')}`,
    'GRANT SELECT, INSERT, UPDATE, DELETE ON public.customers TO pgveil_app',
    'GRANT USAGE ON SEQUENCE public.customers_id_seq TO pgveil_app',
    'GRANT SELECT ON public.customers TO pgveil_support, pgveil_analyst',
  ].join(';\n');
}

/** Creates public.customers and the demo's upstream roles on the embedded database if they are not there yet. */
export async function ensureDemoTable(database: { port: number; password: string }): Promise<void> {
  const client = await connected({ port: database.port, user: DEMO_DB_USER, password: database.password });
  try {
    await client.query(CUSTOMERS_TABLE_SQL);
    await client.query(demoUpstreamRolesSql(database.password));
  } finally {
    await client.end();
  }
}

function insertStatement(rows: number): string {
  const tuples = Array.from({ length: rows }, (_, r) =>
    `(${COLUMNS.map((_, c) => `$${r * COLUMNS.length + c + 1}`).join(', ')})`);
  return `INSERT INTO public.customers (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`;
}

/**
 * Writes the demo rows through the proxy when the table is empty, in one transaction (a failed
 * start leaves it empty, and the next start tries again). Returns the rows the table holds.
 */
export async function seedThroughProxy(proxy: { port: number; user: string; password: string }): Promise<{ rows: number; inserted: number }> {
  const client = await connected({ port: proxy.port, user: proxy.user, password: proxy.password });
  try {
    const { rows: [existing] } = await client.query<{ n: string }>('SELECT count(*) AS n FROM public.customers');
    const count = Number(existing?.n ?? 0);
    if (count > 0) return { rows: count, inserted: 0 };
    const customers = generateDemoRows();
    await client.query('BEGIN');
    for (let start = 0; start < customers.length; start += BATCH) {
      const batch = customers.slice(start, start + BATCH);
      await client.query(insertStatement(batch.length), batch.flatMap((row) => COLUMNS.map((column) => row[column])));
    }
    await client.query('COMMIT');
    return { rows: customers.length, inserted: customers.length };
  } finally {
    await client.end();
  }
}
