/**
 * API benchmark: values/s for POST /api/ccn fpe with 1 000 values a request over keep-alive, and
 * p50/p99 latency of one-value requests, each beside an empty fastify route in the same run.
 * The servers run in a child process (one core), the load generator here (the other core).
 * Run: npx tsx bench/api.ts (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS to tune).
 */
import { fork } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import fastify from 'fastify';
import { buildApiServer } from '../src/api/server.js';
import { generateApiKey, hashApiKey } from '../src/auth/apiKey.js';
import { AuthService } from '../src/auth/authService.js';
import { hashPassword } from '../src/auth/passwordHash.js';
import { DEFAULTS, type ApiConfig } from '../src/config/configTypes.js';
import { createEngine } from '../src/engine/engine.js';
import { Keyring } from '../src/keys/keyring.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 4000);
const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password';

interface ServerInfo {
  apiPort: number;
  emptyPort: number;
  apiKey: string;
}

/** Child: the pgveil API (real engine, real auth, no logging) and a bare fastify empty route. */
async function runServers(): Promise<void> {
  const masterKey = randomBytes(32);
  const apiKey = generateApiKey();
  const account = { email: EMAIL, passwordHash: await hashPassword(PASSWORD, 4), apiKeyHash: hashApiKey(apiKey), roles: ['bench'], enabled: true };
  const auth = new AuthService({ accounts: [account], keyring: new Keyring([{ version: 1, key: masterKey }]) });
  const config: ApiConfig = {
    enabled: true,
    listen: { host: '127.0.0.1', port: 0 },
    limits: { maxElements: DEFAULTS.maxElements, maxElementBytes: DEFAULTS.maxElementBytes, maxBodyBytes: DEFAULTS.maxBodyBytes, requestTimeoutSeconds: DEFAULTS.requestTimeoutSeconds, maxConnections: DEFAULTS.maxApiConnections },
    loginRateLimit: { maxFailuresPerAccount: 5, maxFailuresPerClient: 20, windowSeconds: 900 },
    grants: [{ roles: ['bench'], kinds: '*', scopes: '*', operations: ['protect', 'unprotect'] }],
  };
  const api = await buildApiServer({ config, engine: createEngine({ masterKey }), auth });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const empty = fastify({ logger: false, bodyLimit: DEFAULTS.maxBodyBytes });
  empty.post('/empty', async () => ({ ok: true }));
  await empty.listen({ host: '127.0.0.1', port: 0 });
  const port = (s: typeof empty.server) => {
    const a = s.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  };
  const info: ServerInfo = { apiPort: port(api.server), emptyPort: port(empty.server), apiKey };
  process.send?.(info);
  process.on('message', (m) => {
    if (m === 'stop') void Promise.all([api.close(), empty.close()]).then(() => process.exit(0));
  });
}

interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
}

function post(agent: Agent, t: Target, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port: t.port, path: t.path, method: 'POST', headers: { ...t.headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function ccnValues(n: number): string[] {
  return Array.from({ length: n }, () => Array.from({ length: 4 }, () => String(randomInt(0, 10_000)).padStart(4, '0')).join(' '));
}

/** Requests/s with `connections` parallel keep-alive loops for `seconds`. */
async function throughput(t: Target, body: string, connections: number, seconds: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  for (let i = 0; i < 20; i++) await post(agent, t, body); // warm-up
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const status = await post(agent, t, body);
      if (status !== 200) throw new Error(`status ${status} from ${t.path}`);
      done++;
    }
  }));
  const rate = done / ((performance.now() - start) / 1000);
  agent.destroy();
  return rate;
}

/** Latencies (ms) of sequential requests on one keep-alive connection. */
async function latencies(t: Target, body: string, n: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < 200; i++) await post(agent, t, body);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const status = await post(agent, t, body);
    out.push(performance.now() - start);
    if (status !== 200) throw new Error(`status ${status} from ${t.path}`);
  }
  agent.destroy();
  return out.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function runClient(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<ServerInfo>((resolve) => child.once('message', (m) => resolve(m as ServerInfo)));
  try {
    const loginRes = await fetch(`http://127.0.0.1:${info.apiPort}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const tokens = (await loginRes.json()) as { jwt_token: string; svc_token: string };
    const json = { 'content-type': 'application/json' };
    const api: Target = {
      port: info.apiPort, path: '/api/ccn',
      headers: { ...json, 'x-api-key': info.apiKey, authorization: `Bearer ${tokens.jwt_token}`, 'svc-token': tokens.svc_token },
    };
    const empty: Target = { port: info.emptyPort, path: '/empty', headers: json };
    const bulk = JSON.stringify({ id: 1, operation: 'protect', data: ccnValues(1000), options: { method: 'fpe' } });
    const single = JSON.stringify({ id: 1, operation: 'protect', data: ccnValues(1), options: { method: 'fpe' } });

    console.log(`pgveil API benchmark (node ${process.version}; servers in a child process, client in this one; ${ROUNDS} interleaved rounds, medians)`);
    const apiRates: number[] = [];
    const emptyRates: number[] = [];
    const apiP50: number[] = [];
    const apiP99: number[] = [];
    const emptyP50: number[] = [];
    const emptyP99: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      apiRates.push(await throughput(api, bulk, CONNECTIONS, SECONDS));
      emptyRates.push(await throughput(empty, bulk, CONNECTIONS, SECONDS));
      const a = await latencies(api, single, LATENCY_REQUESTS);
      const e = await latencies(empty, single, LATENCY_REQUESTS);
      apiP50.push(pct(a, 50)); apiP99.push(pct(a, 99));
      emptyP50.push(pct(e, 50)); emptyP99.push(pct(e, 99));
    }
    const valuesPerSec = median(apiRates) * 1000;
    const emptyValuesPerSec = median(emptyRates) * 1000;
    const [p50, p99, e50, e99] = [median(apiP50), median(apiP99), median(emptyP50), median(emptyP99)];
    console.log('');
    console.log(`POST /api/ccn fpe, 1 000 values a request, ${CONNECTIONS} keep-alive connections, ${SECONDS} s:`);
    console.log(`  pgveil       ${fmt(valuesPerSec).padStart(11)} values/s  (${fmt(median(apiRates))} requests/s)`);
    console.log(`  empty route  ${fmt(emptyValuesPerSec).padStart(11)} values/s  (${fmt(median(emptyRates))} requests/s, same body, JSON parsed, no work)`);
    console.log(`  pgveil / empty route: ${(valuesPerSec / emptyValuesPerSec).toFixed(2)}`);
    console.log('');
    console.log(`One-value requests (ccn fpe), one keep-alive connection, ${LATENCY_REQUESTS} sequential requests:`);
    console.log(`  pgveil       p50 ${p50.toFixed(3)} ms   p99 ${p99.toFixed(3)} ms`);
    console.log(`  empty route  p50 ${e50.toFixed(3)} ms   p99 ${e99.toFixed(3)} ms`);
    console.log(`  pgveil / empty route: p50 ${(p50 / e50).toFixed(2)}×, p99 ${(p99 / e99).toFixed(2)}×`);
    console.log('');
    console.log(`targets: ≥ 150 000 values/s ${valuesPerSec >= 150_000 ? 'met' : 'MISSED'}; p99 < 5 ms ${p99 < 5 ? 'met' : 'MISSED'}`);
  } finally {
    child.send('stop');
  }
}

if (process.argv.includes('--server')) await runServers();
else await runClient();
