/**
 * What bench:instructions and bench:profile share: a PostgreSQL with pgbench's tables and a
 * `customers` table pgbench never touches, a policy file protecting two of its columns, and the
 * configurations of a proxy without and with that file (proxyProcess.ts), one account.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestPostgres } from '../../test/support/postgres.js';

const run = promisify(execFile);
const ACCOUNT = { email: 'bench@example.com', password: 'bench-password' };
/** Column policies on a table pgbench never touches: what a policy file costs queries that touch no protected column. */
const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: people, reveal: { bench: plaintext } }
  public.customers.email: { kind: email, method: tokenise, scope: people, reveal: { bench: plaintext } }
`;

export interface PolicyBench {
  /** PGVEIL_BENCH_PROXY for a proxy without the policy file, and for one with it. */
  plain: string;
  withPolicy: string;
  /** pgbench's environment for the proxies' database `bench` (PGPORT: the proxy's, to add). */
  pgbenchEnv: Record<string, string>;
  stop(): Promise<void>;
}

export async function startPolicyBench(scale: number): Promise<PolicyBench> {
  const database = await startTestPostgres();
  const policyDir = await mkdtemp(path.join(tmpdir(), 'pgveil-bench-'));
  const stop = async (): Promise<void> => {
    await rm(policyDir, { recursive: true, force: true });
    await database.stop();
  };
  try {
    const directEnv = { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', PGHOST: database.host, PGPORT: String(database.port), PGUSER: database.user, PGPASSWORD: database.password, PGDATABASE: database.database };
    await run('pgbench', ['-i', '-q', '-s', String(scale)], { env: directEnv });
    await run('psql', ['-q', '-c', 'CREATE TABLE IF NOT EXISTS customers (id bigserial PRIMARY KEY, ssn text, email text)'], { env: directEnv });
    const policiesFile = path.join(policyDir, 'policies.yaml');
    await writeFile(policiesFile, POLICIES);
    const upstream = { host: database.host, port: database.port, user: database.user, password: database.password, sslmode: 'disable' as const };
    return {
      plain: JSON.stringify({ upstream, databases: { bench: database.database }, account: ACCOUNT }),
      withPolicy: JSON.stringify({ upstream, databases: { bench: database.database }, account: ACCOUNT, policiesFile, masterKeyHex: randomBytes(32).toString('hex') }),
      pgbenchEnv: { PATH: process.env.PATH ?? '', PGSSLMODE: 'disable', PGHOST: '127.0.0.1', PGUSER: ACCOUNT.email, PGPASSWORD: ACCOUNT.password, PGDATABASE: 'bench' },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
