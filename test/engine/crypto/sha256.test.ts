import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacSha256, hmacSha256Into, sha256, sha256Into } from '../../../src/engine/crypto/sha256.js';

/** Lengths around the padding boundaries: 55 is the last with a one-block tail, 56 the first with two. */
const BOUNDARIES = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 183, 184, 300];

const nodeSha = (m: Uint8Array): Buffer => createHash('sha256').update(m).digest();
const nodeHmac = (k: Uint8Array, m: Uint8Array): Buffer => createHmac('sha256', k).update(m).digest();

const message = fc.oneof(
  fc.uint8Array({ minLength: 0, maxLength: 300 }),
  fc.constantFrom(...BOUNDARIES).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
);
const key = fc.oneof(
  fc.uint8Array({ minLength: 32, maxLength: 32 }),
  fc.uint8Array({ minLength: 0, maxLength: 200 }), // keys over 64 bytes are hashed first
);

describe('sha256', () => {
  it('matches node:crypto for messages of 0 to 300 bytes', () => {
    fc.assert(fc.property(message, (m) => {
      expect(Buffer.from(sha256(m))).toEqual(nodeSha(m));
    }), { numRuns: 1000 });
    for (const n of BOUNDARIES) {
      const m = Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) & 0xff);
      expect(Buffer.from(sha256(m))).toEqual(nodeSha(m));
    }
  });

  it('refuses a range outside the message', () => {
    const m = new Uint8Array(8);
    const out = new Uint8Array(32);
    expect(() => sha256Into(m, 5, 4, out, 0, 32)).toThrow(RangeError);
    expect(() => sha256Into(m, -1, 4, out, 0, 32)).toThrow(RangeError);
    expect(() => sha256Into(m, 0, 9, out, 0, 32)).toThrow(RangeError);
  });

  it('matches the FIPS 180-4 examples and a long message', () => {
    expect(Buffer.from(sha256(Buffer.from('abc'))).toString('hex'))
      .toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const long = new Uint8Array(100_000).fill(0x61);
    expect(Buffer.from(sha256(long))).toEqual(nodeSha(long));
  });

  it('hashes a range of the message, and writes a prefix of the digest where asked, nothing else', () => {
    fc.assert(fc.property(message, fc.nat(), fc.nat(), (m, a, b) => {
      const start = a % (m.length + 1);
      const end = start + (b % (m.length - start + 1));
      const out = new Uint8Array(10).fill(0xee);
      sha256Into(m, start, end, out, 3, 5);
      expect(Buffer.from(out)).toEqual(Buffer.concat([Buffer.alloc(3, 0xee), nodeSha(m.subarray(start, end)).subarray(0, 5), Buffer.alloc(2, 0xee)]));
    }), { numRuns: 300 });
  });
});

describe('hmacSha256', () => {
  it('matches node:crypto for random keys and messages of 0 to 300 bytes', () => {
    fc.assert(fc.property(key, message, (k, m) => {
      expect(Buffer.from(hmacSha256(k, m))).toEqual(nodeHmac(k, m));
    }), { numRuns: 1000 });
  });

  it('keeps one key\'s midstates right across many messages and boundary lengths', () => {
    const k = Buffer.alloc(32, 0x5a);
    for (const n of BOUNDARIES) {
      for (let variant = 0; variant < 3; variant++) {
        const m = Uint8Array.from({ length: n }, (_, i) => (i + variant * 31) & 0xff);
        expect(Buffer.from(hmacSha256(k, m))).toEqual(nodeHmac(k, m));
      }
    }
  });

  it('matches RFC 4231 test case 2, for a range of a buffer, writing a prefix in place', () => {
    const k = Buffer.from('Jefe');
    const m = Buffer.from('what do ya want for nothing?');
    expect(Buffer.from(hmacSha256(k, m)).toString('hex'))
      .toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    const framed = Buffer.concat([Buffer.from('xy'), m, Buffer.from('z')]);
    const out = new Uint8Array(6);
    hmacSha256Into(k, framed, 2, 2 + m.length, out, 2, 3);
    expect([...out]).toEqual([0, 0, 0x5b, 0xdc, 0xc1, 0]);
  });
});
