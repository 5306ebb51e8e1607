/**
 * A pump that reads in place (the native sockets' readInPlace) is handed each chunk in the
 * source's reading buffer, which the next read overwrites: whatever the pump or a hook keeps past
 * the call must be a copy. The source here overwrites its one buffer with garbage as soon as each
 * call returns; bytes out and the messages hooks were handed must still be exactly what came in.
 */
import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frontendMessageLimits, typeSet } from '../../src/proxy/protocol/messageLimits.js';
import { MessagePump } from '../../src/proxy/session/messagePump.js';
import { DROP_MESSAGE, FORWARD, INJECT_AFTER, type PumpHandler } from '../../src/proxy/session/pumpHandler.js';
import type { RelaySocket } from '../../src/proxy/session/relaySocket.js';
import { InPlaceSource, later, message } from './support/inPlaceSource.js';

/** A target that sends at once: it copies what it is given. */
class RecordingTarget extends EventEmitter {
  destroyed = false;
  writable = true;
  readonly writesAtOnce = true;
  readonly received: Buffer[] = [];
  private corked: Buffer[] | undefined;

  write(bytes: Buffer): boolean {
    if (this.corked !== undefined) this.corked.push(Buffer.from(bytes));
    else this.received.push(Buffer.from(bytes));
    return true;
  }

  cork(): void { this.corked = []; }
  uncork(): void {
    this.received.push(...(this.corked ?? []));
    this.corked = undefined;
  }
  end(): void {}
  destroy(): void {}
  pause(): void {}
  resume(): void {}
}


interface Case {
  messages: Buffer[];
  cuts: number[];
  /** Per intercepted message: answer now or later, and the same bytes or a replacement. */
  answers: Array<{ later: boolean; replace: boolean }>;
}

const caseArbitrary: fc.Arbitrary<Case> = fc.record({
  messages: fc.array(fc.record({
    type: fc.constantFrom('Q', 'P', 'B', 'D', 'S'),
    size: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 31, max: 3000 })),
    seed: fc.integer({ min: 0, max: 250 }),
  }).map(({ type, size, seed }) => message(type, Buffer.alloc(size, seed))), { minLength: 1, maxLength: 12 }),
  cuts: fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 1, maxLength: 8 }),
  answers: fc.array(fc.record({ later: fc.boolean(), replace: fc.boolean() }), { minLength: 12, maxLength: 12 }),
});

/**
 * Runs the messages through a pump that reads in place. Q and P are intercepted one by one, each
 * answered as `answers` says; DataRows in runs (as many as one read holds whole), answered
 * now or later with the same bytes, as the read path holds rows for a batch.
 */
async function run({ messages, cuts, answers }: Case): Promise<{ output: Buffer; expected: Buffer; kept: Buffer[]; keptCopies: Buffer[] }> {
  const source = new InPlaceSource();
  const target = new RecordingTarget();
  // The frames as the hook was given them, kept as given (no copy): they must not change later.
  const kept: Buffer[] = [];
  const keptCopies: Buffer[] = [];
  let calls = 0;
  let pending = 0;
  const handler: PumpHandler = {
    // Sync gets a message of the proxy's own after it; Bind is dropped: both queue pieces of the read.
    observe: (type) => (type === 0x53 ? INJECT_AFTER : type === 0x42 ? DROP_MESSAGE : FORWARD),
    intercept: (frame) => {
      kept.push(frame);
      keptCopies.push(Buffer.from(frame));
      const answer = frame[0] === 0x44 ? { later: frame.length % 2 === 0, replace: false } : answers[calls++ % answers.length] as Case['answers'][number];
      const verdict = answer.replace ? replacement(frame) : undefined;
      if (!answer.later) return verdict;
      pending++;
      return later().then(() => {
        pending--;
        return verdict;
      });
    },
    takeAfter: () => [INJECTED],
    onFailure: (reason) => { throw new Error(`pump failed: ${JSON.stringify(reason)}`); },
  };
  const pump = new MessagePump(source as unknown as RelaySocket, target as unknown as RelaySocket, frontendMessageLimits(1 << 20), typeSet('QPD'), handler, typeSet('D'));
  pump.start();
  const input = Buffer.concat(messages);
  await source.feed(input, cuts);
  // Hooks that answer later resume the walk a turn or more after: wait until none is pending.
  for (let i = 0; i < 400 && (pending > 0 || Buffer.concat(target.received).length === 0); i++) await later();
  for (let i = 0; i < 5; i++) await later();
  let expectedCalls = 0;
  const expected = messages.map((frame) => {
    if (frame[0] === 0x53) return Buffer.concat([frame, INJECTED]);
    if (frame[0] === 0x42) return Buffer.alloc(0);
    if (frame[0] !== 0x51 && frame[0] !== 0x50) return frame;
    const answer = answers[expectedCalls++ % answers.length] as Case['answers'][number];
    return answer.replace ? replacement(frame) : frame;
  });
  pump.stop();
  return { output: Buffer.concat(target.received), expected: Buffer.concat(expected), kept, keptCopies };
}

/** What the proxy sends after each Sync here. */
const INJECTED = message('I', Buffer.from('injected'));

/** What a hook sends instead of a message: one that quotes four of its bytes. */
function replacement(frame: Buffer): Buffer {
  return message('X', Buffer.from(frame.subarray(5, 9)));
}

describe('a pump reading in place', () => {
  it('forwards the same bytes, and hands hooks messages that stay what they were, however the reads are cut', async () => {
    await fc.assert(fc.asyncProperty(caseArbitrary, async (testCase) => {
      const { output, expected, kept, keptCopies } = await run(testCase);
      expect(output.equals(expected)).toBe(true);
      // What hooks were handed, kept as handed, still holds what came in (no later read wrote over it).
      expect(Buffer.concat(kept).equals(Buffer.concat(keptCopies))).toBe(true);
      const intercepted = testCase.messages.filter((frame) => frame[0] === 0x51 || frame[0] === 0x50 || frame[0] === 0x44);
      expect(Buffer.concat(keptCopies).equals(Buffer.concat(intercepted))).toBe(true);
    }), { numRuns: 150 });
  });

  it('reads in place only toward a target that keeps nothing past write()', () => {
    const source = new InPlaceSource();
    const keeping = Object.assign(new RecordingTarget(), { writesAtOnce: false });
    const handler: PumpHandler = { observe: () => FORWARD, intercept: () => undefined, takeAfter: () => [], onFailure: () => undefined };
    const pump = new MessagePump(source as unknown as RelaySocket, keeping as unknown as RelaySocket, frontendMessageLimits(1 << 20), typeSet(''), handler);
    pump.start();
    expect(source.reader).toBeUndefined();
    expect(source.listenerCount('data')).toBe(1);
    pump.stop();
    expect(source.listenerCount('data')).toBe(0);
  });

  it('keeps the pieces still queued when a hook goes asynchronous, though the reading buffer is overwritten', async () => {
    const source = new InPlaceSource();
    const target = new RecordingTarget();
    let release: (() => void) | undefined;
    const handler: PumpHandler = {
      observe: () => FORWARD,
      intercept: () => new Promise((resolve) => { release = () => resolve(undefined); }),
      takeAfter: () => [],
      onFailure: () => undefined,
    };
    const pump = new MessagePump(source as unknown as RelaySocket, target as unknown as RelaySocket, frontendMessageLimits(1 << 20), typeSet('Q'), handler);
    pump.start();
    const before = message('P', Buffer.alloc(100, 0x41));
    const query = message('Q', Buffer.from('SELECT 1\0'));
    const after = message('S', Buffer.alloc(0));
    source.read(Buffer.concat([before, query, after]));
    // The buffer was scribbled over; more reads arrive (held: the pump paused its source).
    source.read(message('S', Buffer.alloc(0)));
    release?.();
    for (let i = 0; i < 20 && Buffer.concat(target.received).length < before.length + query.length + 2 * after.length; i++) await later();
    expect(Buffer.concat(target.received).equals(Buffer.concat([before, query, after, after]))).toBe(true);
    pump.stop();
  });
});
