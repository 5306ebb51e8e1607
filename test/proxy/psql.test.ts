/** psql through the proxy prints exactly what it prints connected directly. */
import { execFile, execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProxy } from '../../src/proxy/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CLIENT_DATABASE, startTestProxy } from './support/proxyHarness.js';
import { ANALYST } from './support/testAccounts.js';

function psqlAvailable(): boolean {
  try {
    execFileSync('psql', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

let database: TestPostgres;
let proxy: RunningProxy;

beforeAll(async () => {
  if (!psqlAvailable()) return;
  database = await startTestPostgres();
  proxy = await startTestProxy(database);
});

afterAll(async () => {
  await proxy?.close();
  await database?.stop();
});

interface PsqlRun {
  stdout: string;
  stderr: string;
  code: number;
}

function psql(target: 'direct' | 'proxy', script: string, extraArgs: string[] = [], sslmode = 'prefer'): Promise<PsqlRun> {
  const env = target === 'direct'
    ? { PGHOST: database.host, PGPORT: String(database.port), PGUSER: database.user, PGPASSWORD: database.password, PGDATABASE: database.database }
    : { PGHOST: '127.0.0.1', PGPORT: String(proxy.port), PGUSER: ANALYST.email, PGPASSWORD: ANALYST.password, PGDATABASE: CLIENT_DATABASE };
  return new Promise((resolve) => {
    const child = execFile('psql', ['-X', '-A', '-t', '-v', 'VERBOSITY=default', ...extraArgs], {
      env: { PATH: process.env.PATH ?? '', PGSSLMODE: sslmode, PGCONNECT_TIMEOUT: '10', ...env },
      timeout: 30_000,
    }, (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? Number((error as { code?: number }).code ?? 1) : 0 }));
    child.stdin?.end(script);
  });
}

const SCRIPT = String.raw`
CREATE TEMP TABLE items (id int PRIMARY KEY, label text, price numeric(8,2), seen timestamptz DEFAULT '2024-01-02 03:04:05+00');
INSERT INTO items (id, label, price) SELECT i, 'item ' || i, i * 0.5 FROM generate_series(1, 200) i;
SELECT id, label, price, seen FROM items WHERE id % 40 = 0 ORDER BY id;
SELECT 1 AS a, 'two' AS b \; SELECT 3 AS c;
BEGIN;
INSERT INTO items (id, label) VALUES (1, 'duplicate');
SELECT 'after error';
ROLLBACK;
SELECT count(*) FROM items;
DO $$ BEGIN RAISE NOTICE 'notice from %', 'plpgsql'; END $$;
\copy (SELECT id, label FROM items WHERE id <= 3 ORDER BY id) TO STDOUT WITH (FORMAT csv)
CREATE TEMP TABLE pasted (n int, word text);
\copy pasted FROM STDIN WITH (FORMAT csv)
1,one
2,two
\.
SELECT * FROM pasted ORDER BY n;
SELECT 1/0;
PREPARE p(int) AS SELECT label FROM items WHERE id = $1;
EXECUTE p(7);
SELECT id, label FROM items ORDER BY id LIMIT 3 \gdesc
SET application_name = 'psql-compare';
SHOW application_name;
LISTEN jobs;
NOTIFY jobs, 'hello';
SELECT 'done';
`;

describe.runIf(psqlAvailable())('psql', () => {
  it('prints the same output and errors as a direct connection', async () => {
    const directRun = await psql('direct', SCRIPT);
    const proxiedRun = await psql('proxy', SCRIPT);
    expect(proxiedRun.stderr.replace(/PID \d+/g, 'PID n')).toBe(directRun.stderr.replace(/PID \d+/g, 'PID n'));
    expect(proxiedRun.stdout.replace(/PID \d+/g, 'PID n')).toBe(directRun.stdout.replace(/PID \d+/g, 'PID n'));
    expect(proxiedRun.code).toBe(directRun.code);
    expect(proxiedRun.stdout).toContain('item 40');
    expect(proxiedRun.stderr).toContain('ERROR:  division by zero');
    expect(proxiedRun.stderr).toContain('NOTICE:  notice from plpgsql');
    expect(proxiedRun.stdout).toContain('Asynchronous notification "jobs" with payload "hello" received');
  });

  it('connects over TLS with sslmode=require', async () => {
    const run = await psql('proxy', "SELECT 'over tls';", [], 'require');
    expect(run).toMatchObject({ code: 0, stdout: 'over tls\n' });
  });

  it('shows the refusal of a wrong password as psql shows PostgreSQL\'s', async () => {
    const run = await psql('proxy', 'SELECT 1;', ['-U', 'nobody@example.com']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('FATAL:  password authentication failed for user "nobody@example.com"');
  });
});
