/** Starts Debian's PgBouncer in session mode in front of a PostgreSQL, for the benchmark. */
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';

export interface PgBouncer {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export interface PgBouncerTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  listenPort: number;
  /** The login pgbench uses against PgBouncer. */
  clientUser: string;
  clientPassword: string;
  clientDatabase: string;
}

export async function startPgBouncer(target: PgBouncerTarget): Promise<PgBouncer> {
  const folder = mkdtempSync(path.join(tmpdir(), 'pgveil-bench-pgbouncer-'));
  const ini = path.join(folder, 'pgbouncer.ini');
  const users = path.join(folder, 'userlist.txt');
  writeFileSync(users, `"${target.clientUser}" "${target.clientPassword}"\n`);
  writeFileSync(ini, [
    '[databases]',
    `${target.clientDatabase} = host=${target.host} port=${target.port} dbname=${target.database} user=${target.user} password=${target.password}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${target.listenPort}`,
    `unix_socket_dir = ${folder}`,
    'auth_type = plain',
    `auth_file = ${users}`,
    'pool_mode = session',
    'max_client_conn = 200',
    'default_pool_size = 50',
    'server_tls_sslmode = disable',
    'client_tls_sslmode = disable',
    'ignore_startup_parameters = extra_float_digits',
    `logfile = ${path.join(folder, 'pgbouncer.log')}`,
    '',
  ].join('\n'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // PgBouncer refuses to run as root: it drops to the postgres user, which must read its files.
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const file of [folder, ini, users]) chownSync(file, uid, gid);
    chmodSync(folder, 0o755);
  }
  const child: ChildProcess = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitForPort(target.listenPort, () => child.exitCode !== null, () => stderr);
  return {
    port: target.listenPort,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, failed: () => boolean, log: () => string): Promise<void> {
  const { connect } = await import('node:net');
  for (let attempt = 0; attempt < 100; attempt++) {
    if (failed()) throw new Error(`pgbouncer exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
}
