/**
 * The largest batches the limits let through must not stall the event loop: values of 4 KiB of
 * the kinds whose checks and masks cost the most per value (text, address, name; emails as long
 * as the kind allows), as many as a 10 MiB body holds. An account with no rights at all may mask,
 * redact and pass them through; one with rights may tokenise, fpe and unprotect them. Checking,
 * masking and writing the response run in slices, so the loop turns every few milliseconds and
 * /healthz keeps answering; the longest pause must stay under the flood tests' limit.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/configTypes.js';
import { authHeaders, login, makeAccount, protect, startHarness, type Harness, type Session } from './support/apiHarness.js';
import { longestPauseDuring } from './support/eventLoopPauses.js';

const PAUSE_LIMIT_MS = Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250);
const VALUE_BYTES = DEFAULTS.maxElementBytes;
/** Room for the request's other fields. */
const ENVELOPE_BYTES = 256;

let harness: Harness;
/** No grants: mask, redact and passthrough only. */
let nobody: Session;
/** Granted everything by the harness's configuration. */
let admin: Session;

beforeAll(async () => {
  const accounts = { nobody: await makeAccount('nobody@example.com', ['nobody']), admin: await makeAccount('admin@example.com', ['admin']) };
  harness = await startHarness({ accounts: Object.values(accounts) });
  nobody = await login(harness.url, accounts.nobody);
  admin = await login(harness.url, accounts.admin);
  // One-time engine tables (the character classes) are built by the first call, not by the batches measured below.
  await protect(harness.url, admin, 'name', { id: 1, operation: 'protect', data: ['Warm Up'], options: { method: 'fpe' } });
});

afterAll(() => harness?.close());

/** Words of ASCII letters: the most characters per byte, each looked at by the checks and masks. */
function longText(i: number, bytes: number = VALUE_BYTES): string {
  const tail = ` ${i}`;
  return 'Grace Brewster Murray Hopper, '.repeat(Math.ceil(bytes / 30)).slice(0, bytes - tail.length) + tail;
}

/** The longest email the kind accepts: a 64-character local part, a 253-character domain. */
function longEmail(i: number): string {
  const local = `${'a'.repeat(58)}${String(i).padStart(6, '0')}`;
  const labels = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(57)}`;
  return `${local}@${labels}.com`;
}

/** As many values as fit in a body at the limit, at most the element limit. */
function fullBody(make: (i: number) => string, sample: string): string[] {
  const count = Math.min(DEFAULTS.maxElements, Math.floor((DEFAULTS.maxBodyBytes - ENVELOPE_BYTES) / (Buffer.byteLength(sample) + 3)));
  return Array.from({ length: count }, (_, i) => make(i));
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** POST `payload` with node:http: Buffers in and out, none of fetch's web streams on the shared loop. */
function post(path: string, headers: Record<string, string>, payload: Buffer): Promise<{ status: number; chunks: Buffer[] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${harness.url}${path}`, { method: 'POST', headers: { ...headers, 'content-length': String(payload.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, chunks }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * POST /api/<kind>, the pause measured while it runs. The body is encoded before and the answer
 * parsed after the measurement: the client shares the server's loop, and only the server's work
 * is under test.
 */
async function measured(session: Session, kind: string, request: Record<string, unknown>): Promise<{ answer: Answer; pauseMs: number }> {
  const payload = Buffer.from(JSON.stringify({ id: 1, ...request }));
  const { result, pauseMs, polls } = await longestPauseDuring(harness.url, () => post(`/api/${kind}`, authHeaders(session), payload));
  expect(polls).toBeGreaterThan(0);
  const answer = { status: result.status, body: JSON.parse(Buffer.concat(result.chunks).toString('utf8')) as Record<string, unknown> };
  if (process.env.PGVEIL_PRINT_PAUSES) console.log(`${kind} ${JSON.stringify(request['options'])} ${String(request['operation'])}: longest pause ${pauseMs.toFixed(1)} ms over ${polls} polls`);
  return { answer, pauseMs };
}

/** A few elements of a batch's result are the ones a request of that element alone gets. */
async function expectSameAsAlone(session: Session, kind: string, data: readonly string[], result: readonly string[], options: Record<string, unknown>): Promise<void> {
  expect(result.length).toBe(data.length);
  for (const i of [0, Math.floor(data.length / 2), data.length - 1]) {
    const alone = await protect(harness.url, session, kind, { id: 1, operation: 'protect', data: [data[i]], options });
    expect(alone.body['result']).toEqual([result[i]]);
  }
}

describe('the largest batches do not stall the event loop', () => {
  const texts = fullBody(longText, longText(0));
  const emails = fullBody(longEmail, longEmail(0));

  for (const kind of ['text', 'address', 'name']) {
    for (const method of ['mask', 'redact', 'passthrough']) {
      it(`an account with no rights: ${method} of ${texts.length} ${kind} values of 4 KiB`, async () => {
        const options = { method };
        const { answer, pauseMs } = await measured(nobody, kind, { operation: 'protect', data: texts, options });
        expect(answer.status).toBe(200);
        await expectSameAsAlone(nobody, kind, texts, answer.body['result'] as string[], options);
        expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
      }, 60_000);
    }
  }

  it(`an account with no rights: values that are not of the kind (${texts.length} of 4 KiB, checked before any refusal)`, async () => {
    const data = texts.map((v, i) => (i % 2 === 0 ? v : `${v.slice(0, -1)}\u007f`));
    const { answer, pauseMs } = await measured(nobody, 'name', { operation: 'protect', data, options: { method: 'mask' } });
    expect(answer.status).toBe(422);
    expect((answer.body['indexes'] as number[]).length).toBe(Math.floor(data.length / 2));
    expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
  }, 60_000);

  for (const method of ['mask', 'redact']) {
    it(`an account with no rights: ${method} of ${emails.length} emails of the longest kind`, async () => {
      const { answer, pauseMs } = await measured(nobody, 'email', { operation: 'protect', data: emails, options: { method } });
      expect(answer.status).toBe(200);
      await expectSameAsAlone(nobody, 'email', emails, answer.body['result'] as string[], { method });
      expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
    }, 60_000);
  }

  // Tokens and fpe cost milliseconds per 4 KiB value: an eighth of the body keeps the test short,
  // and the parts that grow with the body alone (reading it, writing the answer) are measured
  // above. A token is some 1.7 times as long as its text: tokens of 2 KiB values stay within the
  // element limit, so they can be sent back.
  for (const [kind, method, bytes] of [['text', 'tokenise', 2048], ['address', 'fpe', VALUE_BYTES]] as const) {
    it(`an account with rights: ${method} of ${kind} values of ${bytes} bytes, then unprotect`, async () => {
      const data = Array.from({ length: Math.floor(texts.length / 8) }, (_, i) => longText(i, bytes));
      const options = { method, scope: 'pauses' };
      const protectedAnswer = await measured(admin, kind, { operation: 'protect', data, options });
      expect(protectedAnswer.answer.status).toBe(200);
      expect(protectedAnswer.pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
      const tokens = protectedAnswer.answer.body['result'] as string[];
      const back = await measured(admin, kind, { operation: 'unprotect', data: tokens, options });
      expect(back.answer.status).toBe(200);
      expect(back.answer.body['result']).toEqual(data);
      expect(back.pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
    }, 120_000);
  }

  it(`an account with rights: tokenise of ${emails.length} emails of the longest kind`, async () => {
    const options = { method: 'tokenise', scope: 'pauses' };
    const { answer, pauseMs } = await measured(admin, 'email', { operation: 'protect', data: emails, options });
    expect(answer.status).toBe(200);
    await expectSameAsAlone(admin, 'email', emails, answer.body['result'] as string[], options);
    expect(pauseMs).toBeLessThan(PAUSE_LIMIT_MS);
  }, 60_000);
});
