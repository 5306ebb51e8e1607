/**
 * Parses long SQL texts on a worker thread, so that a statement of megabytes (a large literal)
 * does not hold the event loop for the hundreds of milliseconds its parse takes. Short texts —
 * nearly all — are parsed in place: a round trip to the worker costs more than their parse.
 *
 * The worker runs the same libpg-query build as the main thread; its tree is handed to
 * `parseSql` through a memo the caller clears when the text has been handled. If the worker
 * cannot run, texts are parsed in place as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ParseResult } from 'libpg-query';

/**
 * Control characters libpg-query's scanner emits unescaped inside token text, which breaks its
 * JSON. Blanking them keeps every offset (one byte each) and every token boundary: after a
 * successful parse they can only sit inside strings, identifiers or comments — or be \v/\f
 * whitespace, which a space replaces exactly.
 */
export const CONTROL_CHARACTERS = /[\u0001-\u0008\u000b\u000c\u000e-\u001f]/g;

/** Texts at least this long (UTF-16 code units) are parsed off the event loop. */
export const OFF_THREAD_PARSE_LENGTH = 64 * 1024;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const parser = require(workerData.parserModule);
const ready = parser.loadModule();
const message = (error) => (error instanceof Error ? error.message : String(error));
parentPort.on('message', ({ id, text }) => {
  ready.then(() => {
    const reply = { id };
    try {
      reply.tree = parser.parseSync(text);
    } catch (error) {
      reply.error = message(error);
    }
    try {
      const tokens = parser.scanSync(text.replace(new RegExp(${JSON.stringify(CONTROL_CHARACTERS.source)}, 'g'), ' ')).tokens;
      reply.starts = Int32Array.from(tokens, (token) => token.start);
      reply.ends = Int32Array.from(tokens, (token) => token.end);
    } catch (error) {
      reply.scanError = message(error);
    }
    parentPort.postMessage(reply, reply.starts ? [reply.starts.buffer, reply.ends.buffer] : []);
  }, (error) => parentPort.postMessage({ id, failed: message(error) }));
});
`;

/** A parse kept for `parseSql`, and a scan kept for SqlText: each an outcome or its error. */
export interface ParsedAhead {
  readonly tree?: ParseResult;
  readonly error?: string;
  readonly starts?: Int32Array;
  readonly ends?: Int32Array;
  readonly scanError?: string;
}
type Outcome = ParsedAhead;
interface Reply extends ParsedAhead { readonly id: number; readonly failed?: string }

let worker: Worker | undefined;
let broken = false;
let nextId = 1;
const waiting = new Map<number, (outcome: Outcome | undefined) => void>();
const parsed = new Map<string, Outcome>();

function releaseAll(): void {
  for (const resolve of waiting.values()) resolve(undefined);
  waiting.clear();
}

function parserWorker(): Worker | undefined {
  if (broken) return undefined;
  if (worker !== undefined) return worker;
  try {
    const parserModule = createRequire(import.meta.url).resolve('libpg-query');
    const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { parserModule } });
    started.unref();
    started.on('message', (reply: Reply) => {
      const resolve = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) started.unref();
      if (reply.failed !== undefined) broken = true;
      const { id: _id, failed, ...outcome } = reply;
      resolve?.(failed === undefined ? outcome : undefined);
    });
    started.on('error', () => {
      broken = true;
      releaseAll();
    });
    started.on('exit', () => {
      worker = undefined;
      releaseAll();
    });
    worker = started;
    return started;
  } catch {
    broken = true;
    return undefined;
  }
}

/**
 * For a long text, parses it on the worker and keeps the outcome for `parseSql`; call
 * `forgetParsed(text)` once the text is handled. Resolves either way; a short text is left alone.
 */
export async function parseAhead(text: string): Promise<void> {
  if (text.length < OFF_THREAD_PARSE_LENGTH || parsed.has(text)) return;
  const thread = parserWorker();
  if (thread === undefined) return;
  const id = nextId++;
  const outcome = await new Promise<Outcome | undefined>((resolve) => {
    waiting.set(id, resolve);
    thread.ref();
    thread.postMessage({ id, text });
  });
  if (outcome !== undefined) parsed.set(text, outcome);
}

/** The parse `parseAhead` kept for this text, if any. */
export function parsedAhead(text: string): { tree: ParseResult } | { error: string } | undefined {
  const kept = text.length < OFF_THREAD_PARSE_LENGTH ? undefined : parsed.get(text);
  if (kept?.tree !== undefined) return { tree: kept.tree };
  if (kept?.error !== undefined) return { error: kept.error };
  return undefined;
}

/** The token offsets `parseAhead` kept for this text, if any. */
export function scannedAhead(text: string): { starts: Int32Array; ends: Int32Array } | { scanError: string } | undefined {
  const kept = text.length < OFF_THREAD_PARSE_LENGTH ? undefined : parsed.get(text);
  if (kept?.starts !== undefined && kept.ends !== undefined) return { starts: kept.starts, ends: kept.ends };
  if (kept?.scanError !== undefined) return { scanError: kept.scanError };
  return undefined;
}

/** Drops what `parseAhead` kept: the tree holds the text's values. */
export function forgetParsed(text: string): void {
  if (text.length >= OFF_THREAD_PARSE_LENGTH) parsed.delete(text);
}
