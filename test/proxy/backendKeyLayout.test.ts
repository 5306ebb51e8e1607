import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  decodeProcessId, encodeProcessId, markForwarded, MAX_PEER_ID, MAX_SESSION_NUMBER, MAX_WORKERS, withoutForwardMark,
} from '../../src/proxy/session/backendKeyLayout.js';
import { CancelRegistry } from '../../src/proxy/session/cancelRegistry.js';
import { CancelRouter } from '../../src/proxy/session/cancelRouter.js';

const peerId = fc.integer({ min: 0, max: MAX_PEER_ID });
const workerSlot = fc.integer({ min: 0, max: MAX_WORKERS - 1 });
const sessionNumber = fc.integer({ min: 0, max: MAX_SESSION_NUMBER });
const silent = pino({ level: 'silent' });

function secretOf(secretKey: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(secretKey);
  return buffer;
}

describe('backend key layout', () => {
  it('decodes what it encodes, and every issued process id is a positive int32', () => {
    fc.assert(fc.property(peerId, workerSlot, sessionNumber, (peer, worker, session) => {
      const processId = encodeProcessId({ peerId: peer, workerSlot: worker }, session);
      expect(processId).toBeGreaterThanOrEqual(0);
      expect(processId).toBeLessThanOrEqual(0x7fffffff);
      expect(decodeProcessId(processId)).toEqual({ peerId: peer, workerSlot: worker, sessionNumber: session, forwarded: false });
    }));
  });

  it('marks a forwarded cancel in the sign bit only, and the mark comes off', () => {
    fc.assert(fc.property(peerId, workerSlot, sessionNumber, (peer, worker, session) => {
      const processId = encodeProcessId({ peerId: peer, workerSlot: worker }, session);
      const forwarded = markForwarded(processId);
      expect(forwarded).toBeLessThan(0);
      // As read back from the wire (signed int32).
      const wire = Buffer.alloc(4);
      wire.writeInt32BE(forwarded);
      expect(decodeProcessId(wire.readInt32BE(0))).toEqual({ peerId: peer, workerSlot: worker, sessionNumber: session, forwarded: true });
      expect(withoutForwardMark(wire.readInt32BE(0))).toBe(processId);
    }));
  });

  it('decodes any 32-bit value into ids in range (a forged key cannot name an impossible worker)', () => {
    fc.assert(fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), (processId) => {
      const key = decodeProcessId(processId);
      expect(key.peerId).toBeGreaterThanOrEqual(0);
      expect(key.peerId).toBeLessThanOrEqual(MAX_PEER_ID);
      expect(key.workerSlot).toBeGreaterThanOrEqual(0);
      expect(key.workerSlot).toBeLessThan(MAX_WORKERS);
    }));
  });

  it('refuses ids out of range', () => {
    expect(() => encodeProcessId({ peerId: MAX_PEER_ID + 1, workerSlot: 0 }, 1)).toThrow(RangeError);
    expect(() => encodeProcessId({ peerId: 0, workerSlot: MAX_WORKERS }, 1)).toThrow(RangeError);
    expect(() => encodeProcessId({ peerId: 0, workerSlot: 0 }, MAX_SESSION_NUMBER + 1)).toThrow(RangeError);
    expect(() => encodeProcessId({ peerId: -1, workerSlot: 0 }, 1)).toThrow(RangeError);
  });

  it('issues keys that name the registry\'s instance and worker', () => {
    const registry = new CancelRegistry({ peerId: 5, workerSlot: 3 });
    for (let i = 0; i < 50; i++) {
      const key = decodeProcessId(registry.issue(() => undefined).processId);
      expect([key.peerId, key.workerSlot, key.forwarded]).toEqual([5, 3, false]);
    }
  });
});

describe('cancel routing', () => {
  function routerOf(toWorker: (slot: number) => void) {
    const registry = new CancelRegistry({ peerId: 2, workerSlot: 1 });
    const router = new CancelRouter(registry, {
      peerId: 2, workerSlot: 1, workers: 5, peers: [{ id: 2, host: '127.0.0.1', port: 1 }, { id: 7, host: '127.0.0.1', port: 1 }], toWorker,
      maxConcurrentForwards: 2,
    }, silent);
    return { registry, router };
  }

  it('cancels here only with the right secret, and relays other workers\' keys untouched', () => {
    const relayed: number[] = [];
    const { registry, router } = routerOf((slot) => relayed.push(slot));
    let cancelled = 0;
    const issued = registry.issue(() => { cancelled++; });
    expect(router.route(issued.processId, secretOf(issued.secretKey ^ 1))).toBe('dropped');
    expect(router.route(issued.processId, Buffer.alloc(8))).toBe('dropped');
    expect(cancelled).toBe(0);
    expect(router.route(issued.processId, secretOf(issued.secretKey))).toBe('here');
    expect(cancelled).toBe(1);
    // A forwarded mark on this instance's own key is accepted (the peer that forwarded it set it).
    expect(router.route(markForwarded(issued.processId), secretOf(issued.secretKey))).toBe('here');
    expect(cancelled).toBe(2);
    expect(router.route(encodeProcessId({ peerId: 2, workerSlot: 4 }, 9), secretOf(1))).toBe('worker');
    expect(relayed).toEqual([4]);
    expect(router.route(encodeProcessId({ peerId: 2, workerSlot: 5 }, 9), secretOf(1))).toBe('dropped');
    expect(relayed).toEqual([4]);
  });

  it('never forwards a forwarded cancel, to an unknown peer, or past the bound on forwards', () => {
    const { router } = routerOf(() => undefined);
    const forPeer7 = encodeProcessId({ peerId: 7, workerSlot: 0 }, 1);
    expect(router.route(markForwarded(forPeer7), secretOf(1))).toBe('dropped');
    expect(router.route(encodeProcessId({ peerId: 9, workerSlot: 0 }, 1), secretOf(1))).toBe('dropped');
    // Port 1 refuses or hangs: the forwards stay in flight within this tick.
    expect(router.route(forPeer7, secretOf(1))).toBe('peer');
    expect(router.route(forPeer7, secretOf(1))).toBe('peer');
    expect(router.route(forPeer7, secretOf(1))).toBe('dropped');
  });
});
