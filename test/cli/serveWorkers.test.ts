/**
 * `pgveil serve` with proxy.workers: 2 as a real process tree (a primary and two workers) in front
 * of a real PostgreSQL: connections spread over both workers, cancels reach the session whichever
 * worker (or peer instance) they land on, forged keys cancel nothing, SIGHUP reaches both workers,
 * SIGTERM ends every session with 57P01.
 */
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyWorkerCount } from '../../src/cli/serve.js';
import { parseConfig } from '../../src/config/index.js';
import { generateMasterKey } from '../../src/keys/masterKey.js';
import { decodeProcessId, encodeProcessId } from '../../src/proxy/session/backendKeyLayout.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { freePort } from './support/cliHarness.js';
import { serveConfig, startServe, stopServe, waitUntil, type LogLine, type RunningServe } from './support/serveProcesses.js';

let database: TestPostgres;
beforeAll(async () => { database = await startTestPostgres(); });
afterAll(async () => database?.stop());

function sessionsByWorker(serve: RunningServe): Map<number, number> {
  const counts = new Map<number, number>();
  for (const line of serve.lines()) {
    if (line.msg === 'proxy: session started' && line.worker !== undefined) counts.set(line.worker, (counts.get(line.worker) ?? 0) + 1);
  }
  return counts;
}

function countLines(serve: RunningServe, msg: string): number {
  return serve.lines().filter((line) => line.msg === msg).length;
}

/** A CancelRequest on a new connection, as libpq and pg send it; resolves when pgveil closed it. */
function sendCancel(port: number, processId: number, secretKey: number): Promise<void> {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(processId, 8);
  packet.writeInt32BE(secretKey, 12);
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(packet));
    socket.on('data', () => undefined);
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
  });
}

interface KeyedClient extends pg.Client { processID: number; secretKey: number }

async function connect(port: number, password: string): Promise<KeyedClient> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'ops@example.com', password, database: database.database }) as KeyedClient;
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('pgveil serve with proxy.workers: 2', () => {
  it('spreads sessions over both workers, cancels wherever the cancel lands, and drops forged keys', async () => {
    const proxyPort = await freePort();
    const { file, password } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 });
    const serve = await startServe(database, file, generateMasterKey());
    const clients: KeyedClient[] = [];
    try {
      for (let i = 0; i < 6; i++) clients.push(await connect(proxyPort, password));
      // The log lines of the last sessions may still be on their way through the pipe.
      await waitUntil(() => countLines(serve, 'proxy: session started') === 6, 5000, serve.stdout);
      const spread = sessionsByWorker(serve);
      expect([...spread.keys()].sort()).toEqual([0, 1]);
      // Each worker says which native parts run in it: here (npm ci built both addons) all of them.
      const listening = serve.lines().filter((line) => line.msg === 'Postgres proxy listening' && line.worker !== undefined);
      expect(listening.map((line) => line.native)).toEqual([0, 1].map(() => ({ ff1: 'loaded', digests: 'loaded', sockets: 'loaded' })));
      // The key names the worker: slots 0 and 1 both appear among the clients' keys.
      expect(new Set(clients.map((client) => decodeProcessId(client.processID).workerSlot))).toEqual(new Set([0, 1]));

      // Cancel one client's query again and again: the cancel connections alternate between the
      // workers, so one lands on the session's worker and one on the other (relayed over IPC).
      const client = clients[0] as KeyedClient;
      for (let attempt = 0; attempt < 8; attempt++) {
        const sleeping = client.query('SELECT pg_sleep(30)').then(() => 'finished', (error: { code?: string }) => error.code);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const started = Date.now();
        await sendCancel(proxyPort, client.processID, client.secretKey);
        expect(await sleeping).toBe('57014');
        expect(Date.now() - started).toBeLessThan(10_000);
        if (countLines(serve, 'proxy: cancel relayed to the worker holding the session') > 0 && attempt >= 1) break;
      }
      const relayed = countLines(serve, 'proxy: cancel relayed to the worker holding the session');
      expect(relayed).toBeGreaterThan(0);
      await waitUntil(() => countLines(serve, 'proxy: relayed cancel delivered to its session') === relayed, 5000, serve.stdout);
      expect(countLines(serve, 'proxy: cancel delivered to its session')).toBeGreaterThan(0);

      // Forged keys: a wrong secret (sent twice, so both workers see one), a worker that does not
      // exist, another instance without peering. The query runs to its end.
      const dropped = () => serve.lines().filter((line) => line.msg?.endsWith('cancel dropped') === true).length;
      const droppedBefore = dropped();
      const finishing = client.query('SELECT pg_sleep(1.5) AS slept').then(() => 'finished', (error: { code?: string }) => error.code);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const owner = decodeProcessId(client.processID);
      await sendCancel(proxyPort, client.processID, client.secretKey ^ 1);
      await sendCancel(proxyPort, client.processID, client.secretKey ^ 0x10000);
      await sendCancel(proxyPort, encodeProcessId({ peerId: 0, workerSlot: 5 }, owner.sessionNumber), client.secretKey);
      await sendCancel(proxyPort, encodeProcessId({ peerId: 3, workerSlot: owner.workerSlot }, owner.sessionNumber), client.secretKey);
      expect(await finishing).toBe('finished');
      await waitUntil(() => dropped() === droppedBefore + 4, 5000, serve.stdout);
      // The session still works.
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      for (const client of clients) await client.end().catch(() => undefined);
      await stopServe(serve);
    }
    expect(serve.stdout()).not.toContain(password);
    expect(serve.stdout()).not.toContain(database.password);
  });
});

describe('pgveil serve with proxy.workers: 2, reloads and stop', () => {
  it('passes SIGHUP to both workers (one tagged audit line each), puts the new policies in force in both, and ends every session with 57P01 on SIGTERM', async () => {
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    await direct.query('DROP TABLE IF EXISTS hup_people; CREATE TABLE hup_people (id int, ssn text)');
    const proxyPort = await freePort();
    const column = (table: string) => `columns:\n  public.${table}.ssn: { kind: ssn, method: tokenise, scope: people, reveal: { admin: plaintext } }\n`;
    const { file, password } = await serveConfig(database, 
      { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 },
      { policies: 'policies.yaml', audit: { destination: 'file', file: 'audit.log' } },
    );
    const folder = join(file, '..');
    await writeFile(join(folder, 'policies.yaml'), column('elsewhere'));
    const serve = await startServe(database, file, generateMasterKey());
    const reloads = async () => (await readFile(join(folder, 'audit.log'), 'utf8').catch(() => ''))
      .split('\n').filter((line) => line.includes('"policy.reload"')).map((line) => JSON.parse(line) as { worker?: number; outcome: string });
    const clients: KeyedClient[] = [];
    try {
      // A SIGHUP to the primary reaches both workers: one line each, saying which worker.
      serve.child.kill('SIGHUP');
      await waitUntil(() => serve.lines().filter((line) => line.msg === 'policies reloaded').length >= 2, 10_000, serve.stdout);
      // Each worker logs its reload before its audit line reaches the file: read until both are there.
      let tagged: Awaited<ReturnType<typeof reloads>> = [];
      for (let i = 0; i < 200 && tagged.length < 2; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25));
        tagged = (await reloads()).filter((line) => line.worker !== undefined);
      }
      expect(tagged.map((line) => line.worker).sort()).toEqual([0, 1]);
      expect(tagged.every((line) => line.outcome === 'ok')).toBe(true);

      // New policies: the column becomes protected in both workers.
      await writeFile(join(folder, 'policies.yaml'), column('hup_people'));
      serve.child.kill('SIGHUP');
      await waitUntil(() => serve.lines().filter((line) => line.msg === 'policies reloaded').length >= 4, 10_000, serve.stdout);
      for (let i = 0; i < 4; i++) {
        const client = await connect(proxyPort, password);
        clients.push(client);
        await client.query('INSERT INTO hup_people VALUES ($1, $2)', [i, '123-45-6789']);
        expect((await client.query<{ ssn: string }>('SELECT ssn FROM hup_people WHERE id = $1', [i])).rows).toEqual([{ ssn: '123-45-6789' }]);
      }
      await waitUntil(() => countLines(serve, 'proxy: session started') === 4, 5000, serve.stdout);
      expect([...sessionsByWorker(serve).keys()].sort()).toEqual([0, 1]);
      const stored = await direct.query<{ ssn: string }>('SELECT ssn FROM hup_people');
      expect(stored.rows).toHaveLength(4);
      // A token: digits only (it may contain 6789 by chance: it is random under a fresh key).
      for (const row of stored.rows) expect(row.ssn).toMatch(/^[0-9]{20,}$/);

      // SIGTERM: every session, in both workers, ends with 57P01; the process tree exits 0.
      const errors = clients.map((client) => new Promise<{ code?: string }>((resolve) => {
        client.removeAllListeners('error');
        client.on('error', (error) => resolve(error as { code?: string }));
      }));
      serve.child.kill('SIGTERM');
      for (const error of await Promise.all(errors)) expect(error).toMatchObject({ code: '57P01' });
      expect(await serve.exited).toBe(0);
      const lines = serve.lines();
      expect(lines.filter((line) => line.msg === 'stopped' && line.worker !== undefined).map((line) => line.worker).sort()).toEqual([0, 1]);
      expect(lines.filter((line) => line.msg?.startsWith('Postgres proxy listening'))).toHaveLength(3);
    } finally {
      for (const client of clients) await client.end().catch(() => undefined);
      await stopServe(serve);
      await direct.end();
    }
    expect(serve.stdout()).not.toContain(password);
  });

  it('reloads every worker from the primary\'s watch of the files: no worker moves on alone, and an edit reaches both', async () => {
    const proxyPort = await freePort();
    const column = (table: string) => `columns:\n  public.${table}.ssn: { kind: ssn, method: tokenise, scope: people, reveal: { admin: plaintext } }\n`;
    const { file } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 }, { policies: 'policies.yaml' });
    const policies = join(file, '..', 'policies.yaml');
    await writeFile(policies, column('first'));
    const serve = await startServe(database, file, generateMasterKey());
    const workerReloads = () => serve.lines().filter((line) => line.msg === 'policies reloaded' && line.worker !== undefined).map((line) => line.worker);
    try {
      await waitUntil(() => serve.lines().filter((line) => line.msg === 'proxy worker ready').length === 2, 5000, serve.stdout);
      // The primary stopped: an edit now reaches no worker (each would have reloaded on its own
      // watch, and a watch one of them missed would have left it on the old policies).
      serve.child.kill('SIGSTOP');
      try {
        await writeFile(policies, column('second'));
        await new Promise((resolve) => setTimeout(resolve, 800));
        expect(workerReloads()).toEqual([]);
      } finally {
        serve.child.kill('SIGCONT');
      }
      // The primary saw the edit: both workers reload, once each.
      await waitUntil(() => workerReloads().length === 2, 10_000, serve.stdout);
      expect(workerReloads().sort()).toEqual([0, 1]);
      expect(serve.lines().some((line) => line.msg === 'file changed: telling every proxy worker to reload')).toBe(true);
      // An edit of the configuration file reaches both too (their accounts reload).
      const accountReloads = () => serve.lines().filter((line) => line.msg === 'configuration reloaded: accounts applied' && line.worker !== undefined);
      await writeFile(file, `${await readFile(file, 'utf8')}\n`);
      await waitUntil(() => accountReloads().length === 2, 10_000, serve.stdout);
      expect(accountReloads().map((line) => line.worker).sort()).toEqual([0, 1]);
      // And the primary's own accounts (the API's), from the same one watch of the file.
      const primaryReloads = () => serve.lines().filter((line) => line.msg === 'configuration reloaded: accounts applied' && line.worker === undefined);
      await waitUntil(() => primaryReloads().length === 1, 10_000, serve.stdout);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(primaryReloads()).toHaveLength(1);
    } finally {
      await stopServe(serve);
    }
  });

  it('restarts a worker that dies, logging its exit without values', async () => {
    const proxyPort = await freePort();
    const { file, password } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 });
    const serve = await startServe(database, file, generateMasterKey());
    try {
      const ready = () => serve.lines().filter((line) => line.msg === 'proxy worker ready');
      await waitUntil(() => ready().length === 2, 5000, serve.stdout);
      const victim = ready()[0] as LogLine & { pid: number };
      process.kill(victim.pid, 'SIGKILL');
      await waitUntil(() => ready().length === 3, 15_000, serve.stdout);
      const death = serve.lines().find((line) => line.msg === 'proxy worker stopped unexpectedly; restarting it');
      expect(death).toMatchObject({ worker: victim.worker, signal: 'SIGKILL' });
      // Both workers serve again.
      const clients: KeyedClient[] = [];
      for (let i = 0; i < 4; i++) clients.push(await connect(proxyPort, password));
      expect(new Set(clients.map((client) => decodeProcessId(client.processID).workerSlot))).toEqual(new Set([0, 1]));
      for (const client of clients) await client.end();
    } finally {
      await stopServe(serve);
    }
  });
});

describe('proxy.workers and the connection limits', () => {
  it('auto is the available parallelism; without a proxy there is one process', () => {
    const proxy = (workers: string) => parseConfig(`proxy:\n  upstream: { user: u }\n  workers: ${workers}\n`, 'x.yaml', { env: {} }).proxy;
    expect(proxyWorkerCount(proxy('auto'))).toBe(Math.min(availableParallelism(), 128));
    expect(proxyWorkerCount(proxy('3'))).toBe(3);
    expect(proxyWorkerCount(undefined)).toBe(1);
  });

  it('two workers together admit maxClientConnections, not twice as many', async () => {
    const proxyPort = await freePort();
    const { file, password } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2, maxClientConnections: 2 });
    const serve = await startServe(database, file, generateMasterKey());
    const clients: KeyedClient[] = [];
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 4; i++) {
        try {
          clients.push(await connect(proxyPort, password));
          outcomes.push('in');
        } catch (error) {
          outcomes.push((error as { code?: string }).code ?? 'error');
        }
      }
      expect(outcomes.filter((outcome) => outcome === 'in')).toHaveLength(2);
      expect(outcomes.filter((outcome) => outcome === '53300')).toHaveLength(2);
    } finally {
      for (const client of clients) await client.end().catch(() => undefined);
      await stopServe(serve);
    }
  });

  it('the API and both workers count failed logins together: one budget of maxFailuresPerAccount for the instance', async () => {
    const proxyPort = await freePort();
    const { file, password } = await serveConfig(database, { listen: { host: '127.0.0.1', port: proxyPort }, workers: 2 });
    const doc = parseDocument(await readFile(file, 'utf8'));
    doc.setIn(['api', 'loginRateLimit', 'maxFailuresPerAccount'], 4);
    await writeFile(file, doc.toString());
    const serve = await startServe(database, file, generateMasterKey());
    const apiLogin = (secret: string): Promise<Response> => fetch(`http://127.0.0.1:${serve.apiPort}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@example.com', password: secret }),
    });
    try {
      // Two wrong passwords at the API (the primary), one at each worker: four in all, the limit.
      for (let i = 0; i < 2; i++) expect((await apiLogin(`${password}-wrong`)).status).toBe(401);
      for (let i = 0; i < 2; i++) {
        await expect(connect(proxyPort, `${password}-wrong`)).rejects.toMatchObject({ code: '28P01' });
      }
      // Locked everywhere, even for the right password: both workers (dealt out in turn) and the API.
      for (let i = 0; i < 2; i++) {
        await expect(connect(proxyPort, password)).rejects.toMatchObject({ code: '28000', message: expect.stringContaining('too many failed logins') });
      }
      expect((await apiLogin(password)).status).toBe(429);
      expect(serve.stdout()).not.toContain(password);
    } finally {
      await stopServe(serve);
    }
    // Eight scrypt checks in three processes: slow on a loaded machine.
  }, 90_000);
});

describe('two pgveil instances as peers', () => {
  it('cancel each other\'s sessions, and never forward a forwarded cancel', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const peers = [{ id: 1, host: '127.0.0.1', port: portA }, { id: 2, host: '127.0.0.1', port: portB }];
    const a = await serveConfig(database, { listen: { host: '127.0.0.1', port: portA }, workers: 2, peerId: 1, peers });
    const b = await serveConfig(database, { listen: { host: '127.0.0.1', port: portB }, peerId: 2, peers });
    const masterKey = generateMasterKey();
    const [serveA, serveB] = await Promise.all([startServe(database, a.file, masterKey), startServe(database, b.file, masterKey)]);
    const clients: KeyedClient[] = [];
    try {
      const onA = await connect(portA, a.password);
      const onB = await connect(portB, b.password);
      clients.push(onA, onB);
      expect(decodeProcessId(onA.processID).peerId).toBe(1);
      expect(decodeProcessId(onB.processID).peerId).toBe(2);
      for (const [client, otherPort] of [[onA, portB], [onB, portA]] as const) {
        const sleeping = client.query('SELECT pg_sleep(30)').then(() => 'finished', (error: { code?: string }) => error.code);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sendCancel(otherPort, client.processID, client.secretKey);
        expect(await sleeping).toBe('57014');
      }
      expect(countLines(serveB, 'proxy: cancel forwarded to its peer')).toBe(1);
      expect(countLines(serveA, 'proxy: cancel forwarded to its peer')).toBe(1);

      // A cancel marked as forwarded that names another instance is dropped, not sent on.
      const finishing = onB.query('SELECT pg_sleep(1) AS slept').then(() => 'finished', (error: { code?: string }) => error.code);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sendCancel(portA, onB.processID | 0x80000000, onB.secretKey);
      expect(await finishing).toBe('finished');
      expect(countLines(serveA, 'proxy: cancel forwarded to its peer')).toBe(1);
    } finally {
      for (const client of clients) await client.end().catch(() => undefined);
      await Promise.all([stopServe(serveA), stopServe(serveB)]);
    }
  });
});
