/** The framer and relay of one direction, over arbitrary chunking: bytes out equal bytes in. */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SMALL_MESSAGE_LIMIT, backendMessageLimits, frontendMessageLimits } from '../../src/proxy/protocol/messageLimits.js';
import { MessagePump } from '../../src/proxy/session/messagePump.js';
import { FORWARD, type PumpFailure, type PumpHandler } from '../../src/proxy/session/pumpHandler.js';
import { typeSet } from '../../src/proxy/protocol/messageLimits.js';
import { forEachFrame, frameCount } from '../../src/proxy/protocol/messageReaders.js';

function message(type: string, body: Buffer): Buffer {
  const bytes = Buffer.alloc(5 + body.length);
  bytes.write(type, 0, 'latin1');
  bytes.writeInt32BE(4 + body.length, 1);
  body.copy(bytes, 5);
  return bytes;
}

const messageArbitrary = fc.record({
  type: fc.constantFrom('Q', 'P', 'B', 'E', 'S', 'H', 'd', 'D'),
  size: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 41, max: 3000 }), fc.constant(70_000)),
  seed: fc.integer({ min: 0, max: 255 }),
}).map(({ type, size, seed }) => message(type, Buffer.alloc(['E', 'S', 'H', 'D'].includes(type) ? Math.min(size, 40) : size, seed)));

interface Run {
  output: Buffer;
  observed: Array<[number, number]>;
  intercepted: number;
  /** What each intercept call was handed. */
  handed: Buffer[];
  failures: PumpFailure[];
}

interface RelayOptions {
  expectedBytes?: number;
  /** Also waits for this many intercepts, and this many bytes handed to them (rewrites to nothing leave no output to wait for). */
  expectedIntercepts?: number;
  expectedHandedBytes?: number;
  intercept?: string;
  /** Types whose consecutive whole messages are handed over together. */
  runs?: string;
  replace?: (message: Buffer) => Buffer | undefined | Promise<Buffer | undefined>;
}

async function relay(chunks: Buffer[], options: RelayOptions = {}): Promise<Run> {
  const source = new PassThrough();
  const target = new PassThrough({ highWaterMark: 1024 });
  const observed: Array<[number, number]> = [];
  const failures: PumpFailure[] = [];
  let intercepted = 0;
  const handed: Buffer[] = [];
  const handler: PumpHandler = {
    observe: (type, first) => {
      observed.push([type, first]);
      return FORWARD;
    },
    intercept: (bytes) => {
      intercepted++;
      handed.push(Buffer.from(bytes));
      return options.replace ? options.replace(Buffer.from(bytes)) : undefined;
    },
    takeAfter: () => [],
    onFailure: (reason) => failures.push(reason),
  };
  const pump = new MessagePump(source, target, frontendMessageLimits(1 << 20), typeSet(options.intercept ?? ''), handler, typeSet(options.runs ?? ''));
  pump.start();
  const received: Buffer[] = [];
  target.on('data', (chunk: Buffer) => received.push(chunk));
  for (const chunk of chunks) {
    if (!source.write(chunk)) await new Promise((resolve) => source.once('drain', resolve));
    if (Math.random() < 0.2) await new Promise((resolve) => setImmediate(resolve));
  }
  const receivedBytes = (): number => received.reduce((sum, chunk) => sum + chunk.length, 0);
  const handedBytes = (): number => handed.reduce((sum, bytes) => sum + bytes.length, 0);
  const waiting = (): boolean => receivedBytes() < (options.expectedBytes ?? 0) || intercepted < (options.expectedIntercepts ?? 0)
    || handedBytes() < (options.expectedHandedBytes ?? 0);
  for (let i = 0; i < 400 && waiting(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 2));
  return { output: Buffer.concat(received), observed, intercepted, handed, failures };
}

function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    if (point > start) chunks.push(bytes.subarray(start, point));
    start = Math.max(start, point);
  }
  return chunks;
}

describe('MessagePump', () => {
  it('forwards the same bytes and sees every header, however the stream is cut', async () => {
    await fc.assert(fc.asyncProperty(fc.array(messageArbitrary, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 40 }), async (messages, cuts) => {
      const input = Buffer.concat(messages);
      const run = await relay(split(input, cuts), { expectedBytes: input.length });
      expect(run.failures).toEqual([]);
      expect(run.output.equals(input)).toBe(true);
      expect(run.observed).toEqual(messages.map((m) => [m[0], m.length > 5 ? m[5] : 0]));
    }), { numRuns: 150 });
  });

  it('hands intercepted types over whole, and forwards what the hook returns (sync or async)', async () => {
    await fc.assert(fc.asyncProperty(fc.array(messageArbitrary, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), async (messages, cuts, asynchronous) => {
      const input = Buffer.concat(messages);
      const rewrite = (bytes: Buffer): Buffer => (bytes.length % 2 === 0 ? message('Q', Buffer.from('rewritten\0')) : Buffer.alloc(0));
      const expected = Buffer.concat(messages.map((m) => (m[0] === 0x50 || m[0] === 0x42 ? rewrite(m) : m)));
      const intercepts = messages.filter((m) => m[0] === 0x50 || m[0] === 0x42).length;
      const run = await relay(split(input, cuts), {
        expectedBytes: expected.length,
        expectedIntercepts: intercepts,
        intercept: 'PB',
        replace: (bytes) => (asynchronous ? new Promise((resolve) => setTimeout(() => resolve(rewrite(bytes)), 1)) : rewrite(bytes)),
      });
      expect(run.failures).toEqual([]);
      expect(run.output.equals(expected)).toBe(true);
      expect(run.intercepted).toBe(intercepts);
    }), { numRuns: 60 });
  });

  it('forwards what the hook leaves alone (undefined or the same frame) in place, among rewritten ones', async () => {
    await fc.assert(fc.asyncProperty(fc.array(messageArbitrary, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), async (messages, cuts) => {
      const input = Buffer.concat(messages);
      const choice = (bytes: Buffer): number => bytes.length % 4;
      const rewrite = (bytes: Buffer): Buffer => message('Q', Buffer.from(`rewritten ${bytes.length}\0`));
      const expected = Buffer.concat(messages.map((m) => (m[0] === 0x50 || m[0] === 0x42) && choice(m) >= 2 ? rewrite(m) : m));
      const source = new PassThrough();
      const target = new PassThrough();
      const handler: PumpHandler = {
        observe: () => FORWARD,
        intercept: (frame) => {
          switch (choice(frame)) {
            case 0: return undefined;
            case 1: return frame;
            case 2: return rewrite(frame);
            default: return new Promise((resolve) => setImmediate(() => resolve(rewrite(frame))));
          }
        },
        takeAfter: () => [],
        onFailure: (reason) => { throw new Error(reason.kind); },
      };
      new MessagePump(source, target, frontendMessageLimits(1 << 20), typeSet('PB'), handler).start();
      const received: Buffer[] = [];
      target.on('data', (chunk: Buffer) => received.push(chunk));
      for (const chunk of split(input, cuts)) source.write(chunk);
      for (let i = 0; i < 400 && Buffer.concat(received).length < expected.length; i++) await new Promise((resolve) => setTimeout(resolve, 2));
      expect(Buffer.concat(received).equals(expected)).toBe(true);
    }), { numRuns: 60 });
  });

  it('looks at nothing more of a chunk once its handler stopped it while observing a header', () => {
    const source = new PassThrough();
    const target = new PassThrough();
    const seen: string[] = [];
    let pump: MessagePump | undefined;
    const handler: PumpHandler = {
      observe: (type) => {
        seen.push(`observe ${String.fromCharCode(type)}`);
        if (type === 0x5a) pump?.stop(); // as the relay does when a header hook throws
        return FORWARD;
      },
      intercept: (bytes) => {
        seen.push(`whole ${String.fromCharCode(bytes[0] as number)}`);
        return undefined;
      },
      takeAfter: () => [],
      onFailure: () => undefined,
    };
    pump = new MessagePump(source, target, backendMessageLimits(), typeSet('D'), handler);
    pump.start(Buffer.concat([message('D', Buffer.alloc(6)), message('Z', Buffer.from('I')), message('D', Buffer.alloc(6)), message('C', Buffer.from('x\0'))]));
    expect(seen).toEqual(['whole D', 'observe Z']);
    expect(target.read()).toBeNull();
  });

  it('hands consecutive whole messages of a run type over together, and only whole ones of that type', async () => {
    await fc.assert(fc.asyncProperty(fc.array(messageArbitrary, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), async (messages, cuts, dropping) => {
      const input = Buffer.concat(messages);
      const rows = messages.filter((m) => m[0] === 0x44);
      // The hook drops every DataRow it is handed, or leaves them all: the output tells which bytes it took.
      const expected = dropping ? Buffer.concat(messages.filter((m) => m[0] !== 0x44)) : input;
      const run = await relay(split(input, cuts), {
        expectedBytes: expected.length, expectedHandedBytes: Buffer.concat(rows).length, intercept: 'D', runs: 'D', replace: () => (dropping ? Buffer.alloc(0) : undefined),
      });
      expect(run.failures).toEqual([]);
      expect(run.output.equals(expected)).toBe(true);
      for (const handed of run.handed) forEachFrame(handed, (type) => expect(type).toBe(0x44));
      expect(run.handed.reduce((sum, handed) => sum + frameCount(handed), 0)).toBe(rows.length);
      expect(Buffer.concat(run.handed).equals(Buffer.concat(rows))).toBe(true);
      if (cuts.length === 0) {
        // One chunk: each group of DataRows between other messages is handed over once.
        const groups = messages.filter((m, i) => m[0] === 0x44 && (i === 0 || messages[i - 1]?.[0] !== 0x44)).length;
        expect(run.handed.length).toBe(groups);
      }
    }), { numRuns: 100 });
  });

  it('ends a run before a message of a bad length, which it then refuses', async () => {
    const row = message('D', Buffer.alloc(6, 1));
    // Too short, and (whole in the chunk) past the type's limit: neither joins the run.
    const tooLong = message('D', Buffer.alloc(SMALL_MESSAGE_LIMIT + 1));
    for (const [bad, length] of [[Buffer.from([0x44, 0, 0, 0, 2]), 2], [tooLong, tooLong.length - 1]] as const) {
      const run = await relay([Buffer.concat([row, row, bad, row])], { intercept: 'D', runs: 'D' });
      expect(run.handed).toEqual([Buffer.concat([row, row])]);
      expect(run.output.equals(Buffer.concat([row, row]))).toBe(true);
      expect(run.failures).toEqual([{ kind: 'invalid-length', type: 0x44, length }]);
    }
  });

  it('stops at a malformed header after relaying what came before', async () => {
    const good = message('Q', Buffer.from('SELECT 1\0'));
    const run = await relay([Buffer.concat([good, message('y', Buffer.alloc(0)), good])]);
    expect(run.output.equals(good)).toBe(true);
    expect(run.failures).toEqual([{ kind: 'invalid-type', type: 0x79 }]);
  });
});

describe('how a chunk is written to the target', () => {
  /** Counts the target's writes (each corked group is one). */
  function countingTarget(): { target: PassThrough; writes: Buffer[] } {
    const writes: Buffer[] = [];
    const target = new PassThrough();
    target._writev = (chunks, done) => {
      writes.push(Buffer.concat(chunks.map((c) => c.chunk as Buffer)));
      done();
    };
    target._write = (chunk: Buffer, _encoding, done) => {
      writes.push(chunk);
      done();
    };
    return { target, writes };
  }

  function pumpWith(intercept: PumpHandler['intercept']): { source: PassThrough; writes: Buffer[] } {
    const source = new PassThrough();
    const { target, writes } = countingTarget();
    const handler: PumpHandler = { observe: () => FORWARD, intercept, takeAfter: () => [], onFailure: () => undefined };
    new MessagePump(source, target, frontendMessageLimits(1 << 20), typeSet('B'), handler).start();
    return { source, writes };
  }

  const parse = message('P', Buffer.from('\0INSERT\0\0\0', 'latin1'));
  const bind = message('B', Buffer.alloc(12, 1));
  const rest = Buffer.concat([message('E', Buffer.alloc(5)), message('S', Buffer.alloc(0))]);
  const rewritten = message('B', Buffer.alloc(12, 2));

  it('sends a Parse, the rewritten Bind and the rest in one write when the hook answers in an immediate', async () => {
    // As the policy hooks do: a microtask first, then the engine's setImmediate, queued after the pump's.
    const { source, writes } = pumpWith(() => Promise.resolve().then(() => new Promise((resolve) => setImmediate(() => resolve(rewritten)))));
    source.write(Buffer.concat([parse, bind, rest]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).toEqual([Buffer.concat([parse, rewritten, rest])]);
  });

  it('sends a chunk whose intercepted messages the hook leaves alone as one buffer, not a gathered write', async () => {
    const source = new PassThrough();
    const buffers: Buffer[][] = [];
    const target = new PassThrough();
    target._writev = (chunks, done) => {
      buffers.push(chunks.map((c) => c.chunk as Buffer));
      done();
    };
    target._write = (chunk: Buffer, _encoding, done) => {
      buffers.push([chunk]);
      done();
    };
    const handler: PumpHandler = { observe: () => FORWARD, intercept: (frame) => (frame.length % 2 === 0 ? undefined : frame), takeAfter: () => [], onFailure: () => undefined };
    new MessagePump(source, target, frontendMessageLimits(1 << 20), typeSet('PBES'), handler).start();
    const chunk = Buffer.concat([parse, bind, rest, bind, rest]);
    source.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(buffers).toEqual([[chunk]]);
  });

  it('keeps the order when the hook sends bytes of its own while it looks at a message', async () => {
    const source = new PassThrough();
    const { target, writes } = countingTarget();
    const own = message('Z', Buffer.from('I'));
    let pump: MessagePump | undefined;
    const handler: PumpHandler = {
      observe: () => FORWARD,
      intercept: () => {
        pump?.sendNow(own);
        return undefined;
      },
      takeAfter: () => [],
      onFailure: () => undefined,
    };
    pump = new MessagePump(source, target, frontendMessageLimits(1 << 20), typeSet('B'), handler);
    pump.start();
    source.write(Buffer.concat([parse, bind, rest]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(Buffer.concat(writes)).toEqual(Buffer.concat([parse, own, bind, rest]));
  });

  it('sends what came before the message while a slow hook still waits', async () => {
    let answer: (bytes: Buffer) => void = () => undefined;
    const { source, writes } = pumpWith(() => new Promise((resolve) => { answer = resolve; }));
    source.write(Buffer.concat([parse, bind, rest]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).toEqual([parse]);
    answer(rewritten);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(Buffer.concat(writes)).toEqual(Buffer.concat([parse, rewritten, rest]));
  });
});
