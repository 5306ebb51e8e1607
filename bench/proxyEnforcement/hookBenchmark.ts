/**
 * What a policy file costs per message, without sockets: pgbench-like transactions are fed
 * through a real SessionRelay — its two message pumps, its ProtocolState and the column-policy
 * hooks — whose client and server are in-memory streams that only count bytes. The same relay
 * with no hooks is the baseline. Workloads (PGVEIL_BENCH_MODES):
 * - prepared: pgbench -S -M prepared (Bind, Describe, Execute, Sync; BindComplete, RowDescription,
 *   DataRow, CommandComplete, ReadyForQuery) on a table no policy names: bookkeeping only;
 * - simple: the same as a Query with its own number each time;
 * - insert-plain / insert-protected: insertBenchmark's prepared INSERT of three bound values into a
 *   plain table, and into one whose columns are protected (ssn fpe, ccn fpe, numeric tokenise):
 *   their difference is what protecting three values costs;
 * - reveal: revealBenchmark's SELECT of three fpe columns (ssn, ccn, date), 1 000 rows per reply in
 *   one chunk (about what one socket read brings), revealed; without the policy file the stored
 *   values pass as they are. Figures per row.
 * With PGVEIL_BENCH_COLD_MB (e.g. 4) a buffer that large is written before each transaction, which is
 * then timed alone: the caches are cold, as under pgbench, where the kernel, PostgreSQL and pgbench run
 * between two messages of a session — a better forecast of the proxy's cost than the warm figure.
 * Steadier than pgbench on a shared machine, and a clean profile of the hooks alone:
 * PGVEIL_BENCH_NODE_OPTIONS does not apply, run it under `node --cpu-prof --import tsx` instead.
 *
 * Run: npx tsx bench/proxyEnforcement/hookBenchmark.ts   Environment: PGVEIL_BENCH_TRANSACTIONS
 * (default 200 000 per round; reveal: as many rows), PGVEIL_BENCH_ROUNDS (5), PGVEIL_BENCH_MODES
 * ("prepared,simple,insert-plain,insert-protected,reveal"), PGVEIL_BENCH_COLD_MB (0),
 * PGVEIL_BENCH_BASELINE_DIST (the dist/ folder of another build, e.g. a worktree of the last commit:
 * its relay and hooks run in this same process, alternated with this build's, and each mode prints
 * this build / baseline — steadier than two runs on a machine whose speed drifts).
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pino from 'pino';
import { relationOf, snapshotOf } from '../../test/proxy/enforcement/support/catalogFixtures.js';
import { median } from '../proxy/benchProcesses.js';
import { compiled } from '../compiled.js';

/** What a run takes from a build: the relay, the policy hooks and what they are made of. */
async function loadBuild(dist?: URL) {
  return {
    createEngine: (await compiled<typeof import('../../src/engine/index.js')>('engine/index.js', dist)).createEngine,
    parsePolicies: (await compiled<typeof import('../../src/policy/index.js')>('policy/index.js', dist)).parsePolicies,
    createPolicyHooks: (await compiled<typeof import('../../src/proxy/enforcement/index.js')>('proxy/enforcement/index.js', dist)).createPolicyHooks,
    SessionRelay: (await compiled<typeof import('../../src/proxy/session/sessionRelay.js')>('proxy/session/sessionRelay.js', dist)).SessionRelay,
    limits: await compiled<typeof import('../../src/proxy/protocol/messageLimits.js')>('proxy/protocol/messageLimits.js', dist),
  };
}
const messages = await compiled<typeof import('../../src/proxy/protocol/messages.js')>('proxy/protocol/messages.js');

const TRANSACTIONS = Number(process.env.PGVEIL_BENCH_TRANSACTIONS ?? 200_000);
const ROUNDS = Number(process.env.PGVEIL_BENCH_ROUNDS ?? 5);
/** MiB written between two transactions (PGVEIL_BENCH_COLD_MB; 0: none, the caches stay warm). */
const COLD_BYTES = Number(process.env.PGVEIL_BENCH_COLD_MB ?? 0) * 1024 * 1024;
const coldCaches = new Uint8Array(COLD_BYTES);
/** One write per cache line of a buffer larger than the caches: the next transaction finds its data, and much of its code, evicted. */
function evictCaches(): void {
  for (let at = 0; at < coldCaches.length; at += 64) coldCaches[at] = (coldCaches[at] as number) + 1;
}
type Mode = 'prepared' | 'simple' | 'insert-plain' | 'insert-protected' | 'reveal';
const MODES = (process.env.PGVEIL_BENCH_MODES ?? 'prepared,simple,insert-plain,insert-protected,reveal').split(',') as Mode[];
const INT4 = 23;
const TEXT = 25;
const DATE = 1082;
const ACCOUNTS_OID = 16390;
const BULK_OID = 16430;
const REVEAL_ROWS = 1000;

const POLICIES = `
columns:
  public.customers.ssn: { kind: ssn, method: fpe, scope: people, reveal: { bench: plaintext } }
  public.people_protected.ssn: { kind: ssn, method: fpe, scope: people, reveal: { bench: plaintext } }
  public.people_protected.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { bench: plaintext } }
  public.people_protected.phone: { kind: numeric, method: tokenise, scope: people, reveal: { bench: plaintext } }
  public.bulk.ssn: { kind: ssn, method: fpe, scope: customers, reveal: { bench: plaintext } }
  public.bulk.card_number: { kind: ccn, method: fpe, scope: payments, reveal: { bench: plaintext } }
  public.bulk.birth_date: { kind: date, method: fpe, scope: customers, reveal: { bench: plaintext } }
`;
const BULK_COLUMNS = [
  { attnum: 1, name: 'ssn', typeOid: TEXT, typmod: -1 },
  { attnum: 2, name: 'card_number', typeOid: TEXT, typmod: -1 },
  { attnum: 3, name: 'birth_date', typeOid: DATE, typmod: -1 },
];
const PEOPLE_COLUMNS = [
  { attnum: 1, name: 'id', typeOid: INT4, typmod: -1 },
  { attnum: 2, name: 'ssn', typeOid: TEXT, typmod: -1 },
  { attnum: 3, name: 'card_number', typeOid: TEXT, typmod: -1 },
  { attnum: 4, name: 'phone', typeOid: TEXT, typmod: -1 },
];

/** A socket stand-in: what is written is counted and dropped; 'data' is emitted by the bench. */
class ByteSink extends EventEmitter {
  written = 0;
  destroyed = false;
  write(chunk: Buffer): boolean {
    this.written += chunk.length;
    return true;
  }
  cork(): void {}
  uncork(): void {}
  pause(): this { return this; }
  resume(): this { return this; }
  end(): void {}
  destroy(): void { this.destroyed = true; }
}

const snapshot = snapshotOf([
  relationOf(ACCOUNTS_OID, 'public', 'pgbench_accounts', [
    { attnum: 1, name: 'aid', typeOid: INT4, typmod: -1 },
    { attnum: 2, name: 'bid', typeOid: INT4, typmod: -1 },
    { attnum: 3, name: 'abalance', typeOid: INT4, typmod: -1 },
  ]),
  relationOf(16400, 'public', 'customers', [
    { attnum: 1, name: 'id', typeOid: INT4, typmod: -1 },
    { attnum: 2, name: 'ssn', typeOid: TEXT, typmod: -1 },
  ]),
  relationOf(16410, 'public', 'people_protected', PEOPLE_COLUMNS),
  relationOf(16420, 'public', 'people_plain', PEOPLE_COLUMNS),
  relationOf(BULK_OID, 'public', 'bulk', BULK_COLUMNS),
], { currentUser: 'bench', defaultSearchPath: '"$user", public' });

const MASTER_KEY = randomBytes(32);

/** A build's relay and policy hooks, over the same policies, catalog and key. */
async function buildUnderTest(dist?: URL) {
  const build = await loadBuild(dist);
  const engine = build.createEngine({ masterKey: MASTER_KEY });
  const hooks = await build.createPolicyHooks({
    policies: { current: build.parsePolicies(POLICIES, 'policies.yaml'), onChange: () => () => undefined },
    engine,
    upstream: { host: '127.0.0.1', port: 1, user: 'bench', password: 'unused', sslmode: 'disable' },
    logger: pino({ level: 'silent' }),
    catalogLoader: async () => snapshot,
  });
  return { ...build, engine, hooks };
}
type Build = Awaited<ReturnType<typeof buildUnderTest>>;

const BASELINE_DIST = process.env.PGVEIL_BENCH_BASELINE_DIST;
const current = await buildUnderTest();
const baseline = BASELINE_DIST === undefined ? undefined : await buildUnderTest(new URL(`${path.resolve(BASELINE_DIST)}/`, 'file:///'));
const engine = current.engine;

const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const EXECUTE = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]); // Execute '' 0
const description = messages.rowDescriptionMessage([{ name: 'abalance', tableOid: ACCOUNTS_OID, attnum: 3, typeOid: INT4, typmod: -1, format: 0 }]);
const selected = [description, messages.dataRowMessage([Buffer.from('-2718')]), messages.commandCompleteMessage('SELECT 1'), messages.readyForQuery('I')];
const bindComplete = messages.typedMessage('2', new Uint8Array(0));
const bound = (values: string[]): Buffer => Buffer.concat([
  messages.bindMessage({ portal: '', statement: 'P0_1', paramFormats: [], values: values.map((value) => Buffer.from(value)), resultFormats: [] }),
  messages.describeMessage('P', ''), EXECUTE, SYNC,
]);
const insertInto = (table: string): Workload => ({
  prepare: `INSERT INTO ${table} (ssn, card_number, phone) VALUES ($1, $2, $3)`,
  request: (n) => bound([String(100_000_000 + n), String(4_000_000_000_000_000 + n * 7919), String(2_000_000_000 + n)]),
  reply: Buffer.concat([bindComplete, messages.typedMessage('n', new Uint8Array(0)), messages.commandCompleteMessage('INSERT 0 1'), messages.readyForQuery('I')]),
  distinct: 1024,
});

/** The stored values of revealBenchmark's table: what protect gives for plausible plaintexts. */
async function revealReply(): Promise<Buffer> {
  const index = Array.from({ length: REVEAL_ROWS }, (_, i) => i);
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  const stored = await Promise.all([
    engine.protect('ssn', index.map((i) => `${pad(100 + (i % 800), 3)}-${pad(10 + (i % 89), 2)}-${pad(1000 + i, 4)}`), { method: 'fpe', scope: 'customers' }),
    engine.protect('ccn', index.map((i) => `4111 1111 ${pad(1000 + (i % 9000), 4)} ${pad(i, 4)}`), { method: 'fpe', scope: 'payments' }),
    engine.protect('date', index.map((i) => `19${pad(30 + (i % 70), 2)}-${pad(1 + (i % 12), 2)}-${pad(1 + (i % 28), 2)}`), { method: 'fpe', scope: 'customers' }),
  ]);
  const fields = BULK_COLUMNS.map((column) => ({ name: column.name, tableOid: BULK_OID, attnum: column.attnum, typeOid: column.typeOid, typmod: -1, format: 0 }));
  return Buffer.concat([
    messages.rowDescriptionMessage(fields),
    ...index.map((i) => messages.dataRowMessage(stored.map((column) => Buffer.from(column.result[i] as string)))),
    messages.commandCompleteMessage(`SELECT ${REVEAL_ROWS}`),
    messages.readyForQuery('I'),
  ]);
}

interface Workload {
  /** The statement the session prepares first as P0_1, if any. */
  readonly prepare?: string;
  readonly request: (n: number) => Buffer;
  readonly reply: Buffer;
  /** How many different requests are built before the clock starts, and sent in turn. */
  readonly distinct: number;
  /** Rows per reply: a workload of more than one is timed and reported per row. */
  readonly rows?: number;
}

const WORKLOADS: Record<Mode, Workload> = {
  prepared: {
    prepare: 'SELECT abalance FROM pgbench_accounts WHERE aid = $1;',
    request: (aid) => bound([String(aid)]),
    reply: Buffer.concat([bindComplete, ...selected]),
    distinct: 1024,
  },
  simple: {
    request: (aid) => messages.queryMessage(`SELECT abalance FROM pgbench_accounts WHERE aid = ${aid};`),
    reply: Buffer.concat(selected),
    // Answered by shape every time: a text answered by shape is not kept as a text, so its exact
    // text is never found again however often it comes back.
    distinct: 4096,
  },
  'insert-plain': insertInto('people_plain'),
  'insert-protected': insertInto('people_protected'),
  reveal: {
    request: () => messages.queryMessage('SELECT ssn, card_number, birth_date FROM bulk'),
    reply: await revealReply(),
    distinct: 1,
    rows: REVEAL_ROWS,
  },
};

interface Bench {
  readonly client: ByteSink;
  readonly upstream: ByteSink;
}

function session(build: Build, withHooks: boolean): Bench {
  const client = new ByteSink();
  const upstream = new ByteSink();
  const relay = new build.SessionRelay({
    client: client as unknown as Duplex,
    upstream: upstream as unknown as Duplex,
    hooksFactory: withHooks ? build.hooks.factory : undefined,
    frontendLimits: build.limits.frontendMessageLimits(1 << 20),
    backendLimits: build.limits.backendMessageLimits(),
    idleTimeoutMs: 0,
    logger: pino({ level: 'silent' }),
    cancelUpstream: () => undefined,
    onClosed: () => undefined,
  }, {
    account: { email: 'bench@example.com', roles: ['bench'] },
    clientDatabase: 'bench', upstreamDatabase: 'bench', upstreamUser: 'bench',
    serverParameters: new Map([['DateStyle', 'ISO, MDY'], ['client_encoding', 'UTF8'], ['search_path', '"$user", public']]),
  });
  relay.start(Buffer.alloc(0), Buffer.alloc(0));
  return { client, upstream };
}

/** Feeds one exchange; the catalog and the first analyses are asynchronous, so the warm-up awaits a turn. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

async function run(build: Build, mode: Mode, withHooks: boolean): Promise<number> {
  const workload = WORKLOADS[mode];
  const bench = session(build, withHooks);
  const hooks = build.hooks;
  if (workload.prepare !== undefined) {
    bench.client.emit('data', Buffer.concat([messages.parseMessage({ name: 'P0_1', sql: workload.prepare, paramTypes: [] }), SYNC]));
    await settle();
    bench.upstream.emit('data', Buffer.concat([messages.typedMessage('1', new Uint8Array(0)), messages.readyForQuery('I')]));
    await settle();
  }
  // Built before the clock starts, so that only the relay is timed.
  const requests = Array.from({ length: workload.distinct }, (_, i) => workload.request(100_000 + i));
  const rows = workload.rows ?? 1;
  const transactions = Math.ceil(TRANSACTIONS / rows);
  // Warm-up: the catalog load and the first analyses wait a turn.
  for (let i = 0; i < Math.max(20, 2000 / rows); i++) {
    bench.client.emit('data', workload.request(i + 1));
    await settle();
    const due = bench.client.written + workload.reply.length;
    bench.upstream.emit('data', workload.reply);
    while (rows > 1 && bench.client.written < due) await settle();
  }
  const before = bench.upstream.written;
  const { refusals, valuesProtected, valuesRevealed } = hooks.metrics;
  let spent = 0n;
  let started = process.hrtime.bigint();
  for (let i = 0; i < transactions; i++) {
    if (COLD_BYTES > 0) {
      evictCaches();
      started = process.hrtime.bigint();
    }
    bench.client.emit('data', requests[i % requests.length] as Buffer);
    const due = bench.client.written + workload.reply.length;
    bench.upstream.emit('data', workload.reply);
    // Rows are revealed a few hundred values per loop turn: wait for the reply's last byte (fpe keeps lengths).
    while (rows > 1 && bench.client.written < due) await settle();
    if (COLD_BYTES > 0) spent += process.hrtime.bigint() - started;
  }
  if (COLD_BYTES === 0) spent = process.hrtime.bigint() - started;
  const nanos = Number(spent) / (transactions * rows);
  if (bench.upstream.written - before < transactions * 10) throw new Error(`${mode}: the relay stopped forwarding (a hook went asynchronous, or refused)`);
  if (hooks.metrics.refusals !== refusals) throw new Error(`${mode}: the hooks refused messages`);
  if (withHooks && mode === 'insert-protected' && hooks.metrics.valuesProtected - valuesProtected !== 3 * transactions) throw new Error(`${mode}: not every value was protected`);
  if (withHooks && mode === 'reveal' && hooks.metrics.valuesRevealed - valuesRevealed !== 3 * rows * transactions) throw new Error(`${mode}: not every value was revealed (${hooks.metrics.valuesRevealed - valuesRevealed} of ${3 * rows * transactions})`);
  return nanos;
}

const unitOf = (mode: Mode): string => (WORKLOADS[mode].rows === undefined ? 'transaction' : 'row');
const results = new Map<string, number[]>();
const builds: [string, Build][] = baseline === undefined ? [['', current]] : [['', current], [' (baseline)', baseline]];
for (let round = 1; round <= ROUNDS; round++) {
  for (const mode of MODES) {
    const variants = builds.flatMap(([label, build]) => [false, true].map((withHooks) => ({ label, build, withHooks })));
    for (const { label, build, withHooks } of round % 2 ? variants : variants.reverse()) {
      const key = `${mode}/${withHooks ? 'policy' : 'none'}${label}`;
      const nanos = await run(build, mode, withHooks);
      results.set(key, [...(results.get(key) ?? []), nanos]);
      process.stdout.write(`round ${round} ${key.padEnd(35)} ${(nanos / 1000).toFixed(2)} µs per ${unitOf(mode)}\n`);
    }
  }
}
const coldNote = COLD_BYTES > 0 ? `, each timed alone after ${COLD_BYTES / 1048576} MiB written (caches cold)` : '';
process.stdout.write(`\npgbench-like transactions (reveal: rows) through a SessionRelay in memory, ${ROUNDS} rounds of ${TRANSACTIONS}${coldNote}\n`);
// The fastest round too: on a busy machine it is the steadier estimate of what the code itself costs.
for (const mode of MODES) {
  for (const [label, pick] of [['median', median], ['fastest', (values: number[]) => Math.min(...values)]] as const) {
    const none = pick(results.get(`${mode}/none`) ?? []);
    const policy = pick(results.get(`${mode}/policy`) ?? []);
    process.stdout.write(`${mode.padEnd(17)} ${label.padEnd(8)} no policy ${(none / 1000).toFixed(2)} µs   policy file ${(policy / 1000).toFixed(2)} µs   the policy's own cost ${((policy - none) / 1000).toFixed(2)} µs per ${unitOf(mode)}\n`);
  }
}
if (baseline !== undefined) {
  process.stdout.write(`\nthis build / baseline, median of the per-round ratios (below 1: this build is faster)\n`);
  for (const mode of MODES) {
    const ratios = (kind: string): string => {
      const ours = results.get(`${mode}/${kind}`) ?? [];
      const theirs = results.get(`${mode}/${kind} (baseline)`) ?? [];
      const perRound = ours.map((nanos, i) => nanos / (theirs[i] as number)).sort((a, b) => a - b);
      // The rounds' own spread: a median inside it is no measured difference.
      const spread = perRound.length > 1 ? ` (rounds ${(perRound[0] as number).toFixed(2)}–${(perRound[perRound.length - 1] as number).toFixed(2)})` : '';
      return `${median(perRound).toFixed(2)}${spread}`;
    };
    process.stdout.write(`${mode.padEnd(17)} no policy ${ratios('none')}   policy file ${ratios('policy')}\n`);
  }
}
current.hooks.close();
baseline?.hooks.close();
