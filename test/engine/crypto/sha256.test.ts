import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADDON_PATH } from '../../../src/engine/crypto/nativeAddon.js';
import { nativeDigestFunctions, nativeDigests, nativeDigestsStatus, type HmacSha256Into, type Sha256Into } from '../../../src/engine/crypto/nativeSha256.js';
import * as selected from '../../../src/engine/crypto/sha256.js';
import { portableHmacSha256Into, portableSha256Into } from '../../../src/engine/crypto/sha256.js';
import { loadedNativeFf1, nativeSwitchedOff, thrownBy } from './nativeAddon.js';

interface Implementation {
  sha256Into: Sha256Into;
  hmacSha256Into: HmacSha256Into;
}

/** The addon's digests, or a loud failure: CI builds it, so a missing addon is a broken build. */
function loadedNative(): Implementation {
  if (!nativeDigests) throw new Error(`native SHA-256 is ${nativeDigestsStatus}: \`npm run build:native\` builds it`);
  return nativeDigestFunctions(nativeDigests);
}

const IMPLEMENTATIONS: readonly (readonly [string, () => Implementation])[] = [
  ['TypeScript', () => ({ sha256Into: portableSha256Into, hmacSha256Into: portableHmacSha256Into })],
  ...(nativeSwitchedOff ? [] : [['native', loadedNative] as const]),
];

/** Lengths around the padding boundaries (55 is the last with a one-block tail, 56 the first with two) and the native scratch size (1024). */
const BOUNDARIES = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 183, 184, 300, 1024, 1025];

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

describe.each(IMPLEMENTATIONS)('%s', (_name, implementation) => {
  const { sha256Into, hmacSha256Into } = implementation();
  const sha256 = (m: Uint8Array): Uint8Array => {
    const out = new Uint8Array(32);
    sha256Into(m, 0, m.length, out, 0, 32);
    return out;
  };
  const hmacSha256 = (k: Uint8Array, m: Uint8Array): Uint8Array => {
    const out = new Uint8Array(32);
    hmacSha256Into(k, m, 0, m.length, out, 0, 32);
    return out;
  };

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

    it('refuses a range outside the message or of fractional indexes', () => {
      const m = new Uint8Array(8);
      const out = new Uint8Array(32);
      expect(() => sha256Into(m, 5, 4, out, 0, 32)).toThrow(RangeError);
      expect(() => sha256Into(m, -1, 4, out, 0, 32)).toThrow(RangeError);
      expect(() => sha256Into(m, 0, 9, out, 0, 32)).toThrow(RangeError);
      expect(() => sha256Into(m, 0, 1.5, out, 0, 32)).toThrow(RangeError);
      expect(() => sha256Into(m, 0.5, 4, out, 0, 32)).toThrow(RangeError);
      expect(() => hmacSha256Into(m, m, 0, Number.NaN, out, 0, 32)).toThrow(RangeError);
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
});

describe('the digests in use', () => {
  it('are the native ones where the addon is loaded, the TypeScript ones otherwise', () => {
    if (nativeSwitchedOff) {
      expect(selected.sha256Into).toBe(portableSha256Into);
      expect(selected.hmacSha256Into).toBe(portableHmacSha256Into);
    } else {
      loadedNative();
      expect(selected.sha256Into).not.toBe(portableSha256Into);
      expect(selected.hmacSha256Into).not.toBe(portableHmacSha256Into);
    }
    const k = Buffer.alloc(32, 9);
    const m = Buffer.from('a token body');
    expect(Buffer.from(selected.hmacSha256(k, m))).toEqual(nodeHmac(k, m));
    expect(Buffer.from(selected.sha256(m))).toEqual(nodeSha(m));
  });
});

describe.skipIf(nativeSwitchedOff)('the native digests on each of their paths', () => {
  /** In a child process (the path is chosen when the addon loads): digests of random keys and messages against node:crypto's. */
  function digestsIn(env: NodeJS.ProcessEnv): { path: string; compared: number; mismatches: number } {
    const script = `
      const crypto = require('node:crypto');
      const addon = require(${JSON.stringify(ADDON_PATH)});
      let compared = 0, mismatches = 0;
      const digest = new Uint8Array(32);
      for (let length = 0; length <= 200; length++) {
        const key = crypto.randomBytes(length % 141);
        const message = crypto.randomBytes(length);
        addon.hmac(addon.createMacKey(key), message, length, digest);
        if (!Buffer.from(digest).equals(crypto.createHmac('sha256', key).update(message).digest())) mismatches++;
        addon.sha256(message, length, digest);
        if (!Buffer.from(digest).equals(crypto.createHash('sha256').update(message).digest())) mismatches++;
        compared += 2;
      }
      process.stdout.write(JSON.stringify({ path: addon.sha256Path, compared, mismatches }));`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' })) as { path: string; compared: number; mismatches: number };
  }

  it('give node:crypto\'s digests by default, on the path the loaded addon reports', () => {
    const { PGVEIL_NATIVE_SHA256: _ignored, ...env } = process.env;
    loadedNative();
    const found = digestsIn(env);
    expect(found).toEqual({ path: nativeDigests?.sha256Path, compared: 402, mismatches: 0 });
    expect(['low-level', 'evp']).toContain(found.path);
  });

  it('give node:crypto\'s digests over EVP when PGVEIL_NATIVE_SHA256=evp', () => {
    expect(digestsIn({ ...process.env, PGVEIL_NATIVE_SHA256: 'evp' })).toEqual({ path: 'evp', compared: 402, mismatches: 0 });
  });
});

describe.skipIf(nativeSwitchedOff)('the native digests, given bad arguments', () => {
  const digests = (): NonNullable<typeof nativeDigests> => {
    loadedNative();
    return nativeDigests as NonNullable<typeof nativeDigests>;
  };

  it('throw a TypeError or RangeError and write nothing', () => {
    const { sha256: hash, hmac, createMacKey } = digests();
    const digest = new Uint8Array(32);
    const message = new Uint8Array(8);
    const refusals = [
      thrownBy(() => hash(message, 9, digest)),
      thrownBy(() => hash(message, -1, digest)),
      thrownBy(() => hash(message, 1.5, digest)),
      thrownBy(() => hash(message, 8, new Uint8Array(31))),
      thrownBy(() => hash(new Uint16Array(8) as unknown as Uint8Array, 8, digest)),
      thrownBy(() => hmac({} as never, message, 8, digest)),
      thrownBy(() => hmac(createMacKey(new Uint8Array(32)), message, 9, digest)),
      thrownBy(() => createMacKey('secret' as unknown as Uint8Array)),
    ];
    for (const error of refusals) {
      expect(error).toBeInstanceOf(Error);
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
    }
    expect([...digest]).toEqual(new Array(32).fill(0));
  });

  it('refuse another handle in place of a MAC key, and FF1 refuses a MAC key', () => {
    const ff1 = loadedNativeFf1();
    const aes = ff1.createContext(new Uint8Array(32));
    expect(() => digests().hmac(aes as never, new Uint8Array(4), 4, new Uint8Array(32))).toThrow(TypeError);
    const mac = digests().createMacKey(new Uint8Array(32));
    const numerals = new Uint16Array(6);
    expect(() => ff1.crypt(mac as never, 10, 6, numerals, new Uint16Array(6), new Uint8Array(0), undefined, false)).toThrow(TypeError);
  });

  it('name no byte of the key or message in an error', () => {
    const { hmac, createMacKey } = digests();
    const key = createMacKey(Buffer.from('k3y-material'));
    try {
      hmac(key, Buffer.from('s3cret-message'), 99, new Uint8Array(32));
    } catch (error) {
      expect(String(error)).not.toMatch(/k3y|s3cret|73 33/);
      return;
    }
    throw new Error('expected a RangeError');
  });
});
