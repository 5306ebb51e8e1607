/**
 * Attacks below the routes, on the HTTP connection itself: requests the HTTP parser refuses
 * (their bytes must reach no log line, at any level), and bodies trickled in to hold a
 * connection open for ever. Every test asserts the safe outcome, so a weakness shows as a failure.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiConfig, makeAccount, startHarness, type Harness, type TestAccount } from './support/apiHarness.js';

let h: Harness;
let alice: TestAccount;
const logLines: string[] = [];

beforeAll(async () => {
  alice = await makeAccount('alice@example.com');
  // A short request timeout, so that a trickled body is cut off within the test.
  h = await startHarness({ accounts: [alice], logLines, config: apiConfig({ requestTimeoutSeconds: 1 }) });
});

afterAll(async () => {
  await h.close();
});

function open(url: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes `text` and collects what comes back until the server closes or `waitMs` passes. */
async function exchange(text: string, waitMs = 500): Promise<string> {
  const socket = await open(h.url);
  return new Promise((resolve) => {
    let out = '';
    socket.on('data', (d: Buffer) => { out += d.toString('utf8'); });
    socket.on('error', () => undefined);
    const done = (): void => { socket.destroy(); resolve(out); };
    const timer = setTimeout(done, waitMs);
    socket.on('close', () => { clearTimeout(timer); resolve(out); });
    socket.write(text);
  });
}

/** How a secret would look in a log line: as text, or as the bytes of a serialised Buffer. */
function spellings(secret: string): string[] {
  return [secret, [...Buffer.from(secret, 'utf8')].join(',')];
}

function jsonBodyOf(response: string): Record<string, unknown> {
  const body = response.slice(response.indexOf('\r\n\r\n') + 4);
  return JSON.parse(body) as Record<string, unknown>;
}

describe('requests the HTTP parser refuses', () => {
  it('a malformed request logs none of its bytes (credentials, password), even at trace level', async () => {
    const body = JSON.stringify({ email: alice.email, password: alice.password });
    const request = `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`
      + `x-api-key: ${alice.apiKey}\r\nAuthorization: Bearer SECRET-JWT-value\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
      + `${body}NOT-A-METHOD \u0001\r\n\r\n`;
    const response = await exchange(request);
    expect(response).toContain('400 Bad Request');
    const log = logLines.join('');
    expect(log).toContain('client error');
    for (const secret of [alice.apiKey, alice.password, 'SECRET-JWT-value']) {
      for (const spelling of spellings(secret)) expect(log, `the log holds ${secret}`).not.toContain(spelling);
    }
    expect(log).not.toContain('rawPacket');
  });

  it('answers in the API\'s error shape, naming the rule', async () => {
    const malformed = await exchange('POST /auth/login HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonBodyOf(malformed)).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'malformed_request' });

    const huge = await exchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nx-filler: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(jsonBodyOf(huge)).toMatchObject({ statusCode: 431, code: 'headers_too_large' });
  });
});

describe('slow bodies', () => {
  it('a login body trickled in a byte at a time is cut off at api.limits.requestTimeoutSeconds', async () => {
    const socket = await open(h.url);
    let closedAt: number | undefined;
    let answer = '';
    socket.on('data', (d: Buffer) => { answer += d.toString('utf8'); });
    socket.on('error', () => undefined);
    socket.on('close', () => { closedAt = Date.now(); });
    const started = Date.now();
    socket.write('POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{');
    // A byte every 200 ms: never idle long enough for an idle timeout, never done.
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write(' '); }, 200);
    try {
      for (let waited = 0; waited < 6000 && closedAt === undefined; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    expect(closedAt, 'the server still holds the connection').toBeDefined();
    expect((closedAt ?? 0) - started).toBeLessThan(4000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(jsonBodyOf(answer)).toMatchObject({ statusCode: 408, code: 'request_timeout' });
  });

  it('a request sent at a normal pace is not cut off', async () => {
    const res = await fetch(`${h.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('many connections held open at once', () => {
  let capped: Harness;
  beforeAll(async () => {
    capped = await startHarness({ accounts: [alice], config: apiConfig({ maxConnections: 3 }) });
  });
  afterAll(async () => {
    await capped.close();
  });

  /** Whether the server closes `socket` within `waitMs`. */
  function closedWithin(socket: Socket, waitMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (socket.destroyed) { resolve(true); return; }
      const timer = setTimeout(() => resolve(false), waitMs);
      socket.once('close', () => { clearTimeout(timer); resolve(true); });
    });
  }

  it('connections past api.limits.maxConnections are closed as they arrive; once one ends, requests are served again', async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const socket = await open(capped.url);
        socket.on('error', () => undefined);
        // Headers begun, never finished: the connection is busy until the request timeout.
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        held.push(socket);
      }
      for (const socket of held) expect(await closedWithin(socket, 200)).toBe(false);
      const extra = await open(capped.url);
      extra.on('error', () => undefined);
      expect(await closedWithin(extra, 2000)).toBe(true);
      (held.shift() as Socket).destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const res = await fetch(`${capped.url}/healthz`, { headers: { connection: 'close' } });
      expect(res.status).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
