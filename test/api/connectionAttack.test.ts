/**
 * Attacks below the routes, on the HTTP connection itself: bodies trickled in to hold a
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
  });

  it('a request sent at a normal pace is not cut off', async () => {
    const res = await fetch(`${h.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
