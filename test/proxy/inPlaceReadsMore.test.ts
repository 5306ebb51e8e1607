/**
 * A pump reading in place, beyond inPlaceReads.test.ts: a target with
 * NativeSocket's semantics (keeps the very buffers it is given while corked, copies on uncork;
 * write() may return false and 'drain' later), on-demand types (wantsWhole reading the chunk in
 * place), hooks that send through the same pump (replyInOrder's sendNow) while it walks, and
 * injected bytes. The source scribbles over its one buffer after each call.
 */
import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { typeSet } from '../../src/proxy/protocol/messageLimits.js';
import { MessagePump } from '../../src/proxy/session/messagePump.js';
import { FORWARD, INJECT_AFTER, type PumpHandler } from '../../src/proxy/session/pumpHandler.js';
import type { RelaySocket } from '../../src/proxy/session/relaySocket.js';
import { InPlaceSource, later, message } from './support/inPlaceSource.js';

/** As NativeSocket: corked buffers kept as given until uncork; write() false now and then, 'drain' on a later turn. */
class NativeLikeTarget extends EventEmitter {
  destroyed = false;
  writable = true;
  readonly writesAtOnce = true;
  readonly received: Buffer[] = [];
  corks = 0;
  corked: Buffer[] = [];
  private needDrain = false;
  constructor(private readonly refuse: () => boolean) { super(); }
  write(bytes: Buffer): boolean {
    if (this.corks > 0) {
      this.corked.push(bytes);
      return true;
    }
    this.received.push(Buffer.from(bytes));
    if (this.refuse()) {
      if (!this.needDrain) setTimeout(() => { this.needDrain = false; this.emit('drain'); }, 1);
      this.needDrain = true;
    }
    return !this.needDrain;
  }
  cork(): void { this.corks++; }
  uncork(): void {
    if (--this.corks > 0) return;
    const pieces = this.corked;
    this.corked = [];
    if (pieces.length > 0) this.write(Buffer.concat(pieces));
  }
  end(): void {}
  destroy(): void {}
  pause(): void {}
  resume(): void {}
}

const REPLY = message('R', Buffer.from('reply-in-order'));
const INJECTED = message('I', Buffer.from('injected'));

const caseArbitrary = fc.record({
  messages: fc.array(fc.record({
    type: fc.constantFrom('Q', 'P', 'B', 'D', 'S', 'E', 'H'),
    size: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 31, max: 20000 })),
    seed: fc.integer({ min: 0, max: 250 }),
  }).map(({ type, size, seed }) => message(type, Buffer.alloc(type === 'E' || type === 'H' ? size % 9 : size, seed))), { minLength: 1, maxLength: 16 }),
  cuts: fc.array(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 40000 })), { minLength: 1, maxLength: 8 }),
  flags: fc.array(fc.boolean(), { minLength: 16, maxLength: 64 }),
});

describe('a pump reading in place, toward a target with NativeSocket semantics', () => {
  it('forwards the same bytes in order; nothing left corked or kept past a read', async () => {
    await fc.assert(fc.asyncProperty(caseArbitrary, async ({ messages, cuts, flags }) => {
      let f = 0;
      const flag = (): boolean => flags[f++ % flags.length] as boolean;
      const source = new InPlaceSource();
      const target = new NativeLikeTarget(flag);
      let corkedPast = 0;
      source.afterCall = () => { if (target.corks !== 0 || target.corked.length > 0) corkedPast++; };
      const kept: Buffer[] = [];
      const keptCopies: Buffer[] = [];
      let pending = 0;
      let pump: MessagePump;
      const expectedParts: Buffer[] = [];
      // The hook's decisions are a function of the message, so the expectation can replay them.
      const wantsWholeOf = (frame: Buffer): boolean => (frame.length + (frame[5] ?? 0)) % 3 !== 0;
      const laterOf = (frame: Buffer): boolean => frame.length % 2 === 0;
      const sendsNowOf = (frame: Buffer): boolean => frame.length % 5 === 1;
      const handler: PumpHandler = {
        observe: (type) => (type === 0x53 ? INJECT_AFTER : FORWARD),
        wantsWhole: (_type, chunk, start, end) => {
          if (end < 0) return true;
          return wantsWholeOf(chunk.subarray(start, end));
        },
        intercept: (frame) => {
          kept.push(frame);
          keptCopies.push(Buffer.from(frame));
          // Replies in order sent through the same pump while it walks (SessionContext.replyInOrder).
          if (sendsNowOf(frame)) pump.sendNow(REPLY);
          if (!laterOf(frame)) return undefined;
          pending++;
          return later().then(() => { pending--; return undefined; });
        },
        takeAfter: () => [INJECTED],
        onFailure: (reason) => { throw new Error(`pump failed: ${JSON.stringify(reason)}`); },
      };
      // Q, P intercepted; E, H on demand (2); D in runs.
      const intercepted = typeSet('QPD');
      intercepted[0x45] = 2;
      intercepted[0x48] = 2;
      pump = new MessagePump(source as unknown as RelaySocket, target as unknown as RelaySocket, new Uint32Array(256).fill(1 << 20), intercepted, handler, typeSet('D'));
      pump.start();
      const input = Buffer.concat(messages);
      // At most about 2 000 reads: each write the target refuses waits for a timer before the next.
      const fewest = Math.ceil(input.length / 2000);
      await source.feed(input, cuts.map((cut) => Math.max(cut, fewest)));
      for (let i = 0; i < 2000 && (pending > 0 || source['held'].length > 0); i++) await later();
      for (let i = 0; i < 5; i++) await later();
      pump.stop();
      const output = Buffer.concat(target.received);
      // Strip the replies sent now (their place depends on how runs were cut) and compare the rest.
      const all = Buffer.concat(messages.map((frame) => (frame[0] === 0x53 ? Buffer.concat([frame, INJECTED]) : frame)));
      const frames: Buffer[] = [];
      for (let pos = 0; pos < output.length;) {
        const total = 1 + output.readInt32BE(pos + 1);
        const frame = output.subarray(pos, pos + total);
        if (!frame.equals(REPLY)) frames.push(frame);
        pos += total;
      }
      expect(Buffer.concat(frames).equals(all)).toBe(true);
      expect(corkedPast).toBe(0);
      expect(Buffer.concat(kept).equals(Buffer.concat(keptCopies))).toBe(true);
      expectedParts.length = 0;
    }), { numRuns: 120 });
  }, 120_000);
});
