import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { nativeDigests } from '../../../src/engine/crypto/nativeSha256.js';
import { nativeMacKeyOf } from '../../../src/engine/crypto/sha256.js';
import {
  nativeSealerFor, nativeTokenOpen, nativeTokenOpenStatus, nativeTokenSeal, nativeTokenSealStatus, openInTypeScript, sealInTypeScript, tokenOpenerFor,
  type NativeTokenOpen, type NativeTokenSeal,
} from '../../../src/engine/tokens/tokenSeal.js';
import { TAG_BYTES, whiten } from '../../../src/engine/tokens/tokenFormat.js';
import { loadedNativeFf1, nativeSwitchedOff, thrownBy } from '../crypto/nativeAddon.js';

/** The addon's seal, or a loud failure: CI builds it, so a missing seal is a broken build. */
function loadedSeal(): NativeTokenSeal {
  if (!nativeTokenSeal) throw new Error(`the native token seal is ${nativeTokenSealStatus}: \`npm run build:native\` builds it`);
  return nativeTokenSeal;
}

/** A token's bytes before sealing: tweak, packed value, room for the tag. */
const unsealed = fc.record({
  bodyKey: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  tagKey: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  tweakLength: fc.constantFrom(5, 9, 11, 13, 15, 17, 19, 21),
  bodyLength: fc.integer({ min: 3, max: 128 }),
  seed: fc.integer({ min: 0, max: 255 }),
}).chain((shape) => fc.uint8Array({ minLength: shape.tweakLength + shape.bodyLength, maxLength: shape.tweakLength + shape.bodyLength })
  .map((bytes) => ({ ...shape, token: Uint8Array.from([...bytes, 0, 0, 0]) })));

describe('sealing a token', () => {
  it('is native where the addon is loaded', () => {
    if (nativeSwitchedOff) expect(nativeTokenSealStatus).toBe('disabled');
    else expect(loadedSeal()).toBeDefined();
  });

  it.skipIf(nativeSwitchedOff)('gives the TypeScript bytes natively, for every tweak and body length the addon takes', () => {
    loadedSeal();
    fc.assert(fc.property(unsealed, ({ bodyKey, tagKey, tweakLength, bodyLength, token }) => {
      const tag = Buffer.from(tagKey);
      const expected = token.slice();
      sealInTypeScript(new FF1(bodyKey, 256, null), tag, expected, tweakLength, bodyLength);
      const sealer = nativeSealerFor(new FF1(bodyKey, 256), tag);
      const sealed = token.slice();
      expect(sealer?.(sealed, tweakLength, bodyLength)).toBe(true);
      expect(Buffer.from(sealed).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
      // The packed value is gone from the token (a shorter body could come out the same by chance).
      if (bodyLength >= 8) expect(Buffer.from(sealed.subarray(tweakLength, tweakLength + bodyLength))).not.toEqual(Buffer.from(token.subarray(tweakLength, tweakLength + bodyLength)));
    }), { numRuns: 300 });
  });

  it.skipIf(nativeSwitchedOff)('leaves bodies the addon does not take to TypeScript', () => {
    const sealer = nativeSealerFor(new FF1(new Uint8Array(32), 256), Buffer.alloc(32, 1));
    const token = new Uint8Array(5 + 129 + TAG_BYTES).fill(7);
    expect(sealer?.(token, 5, 129)).toBe(false);
    expect([...token]).toEqual(new Array(token.length).fill(7));
  });
});

describe.skipIf(nativeSwitchedOff)('the native seal, given bad arguments', () => {

  it('throws a TypeError or RangeError for a wrong handle, length or array, and never names a byte', () => {
    const seal = loadedSeal();
    const ff1 = loadedNativeFf1().createContext(new Uint8Array(32));
    const mac = (nativeDigests as NonNullable<typeof nativeDigests>).createMacKey(new Uint8Array(32));
    const secret = Buffer.from('0123456789s3cretvalue', 'latin1');
    const token = (): Uint8Array => Uint8Array.from([...secret, 0, 0, 0]);
    const refusals = [
      thrownBy(() => seal.sealToken(mac as never, mac, token(), 5, 16)),
      thrownBy(() => seal.sealToken(ff1, ff1 as never, token(), 5, 16)),
      thrownBy(() => seal.sealToken(ff1, {} as never, token(), 5, 16)),
      thrownBy(() => seal.sealToken(ff1, mac, new Uint16Array(24) as unknown as Uint8Array, 5, 16)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 4, 16)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 65, 16)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 5, 2)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 5, 129)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 5.5, 16)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 5, 17)),
      thrownBy(() => seal.sealToken(ff1, mac, token(), 8, 16)),
      // One byte too many: the whitening would hash another range than TypeScript's.
      thrownBy(() => seal.sealToken(ff1, mac, Uint8Array.from([...token(), 0]), 5, 16)),
    ];
    for (const error of refusals) {
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
      expect(String(error)).not.toMatch(/s3cret|73 33|0123/);
    }
  });

  it('checks every argument before it encrypts anything', () => {
    const seal = loadedSeal();
    const ff1 = loadedNativeFf1().createContext(new Uint8Array(32));
    const token = Uint8Array.from({ length: 5 + 16 + TAG_BYTES }, (_, i) => i + 1);
    const before = token.slice();
    expect(thrownBy(() => seal.sealToken(ff1, ff1 as never, token, 5, 16))).toBeInstanceOf(TypeError);
    expect([...token]).toEqual([...before]);
  });

  it('seals under the keys it is given: another tag key gives another token', () => {
    const seal = loadedSeal();
    const ff1 = new FF1(new Uint8Array(32).fill(3), 256);
    const context = ff1.nativeHandleFor(8);
    const tagKeys = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const tokens = tagKeys.map((key) => {
      const token = Uint8Array.from({ length: 5 + 8 + TAG_BYTES }, (_, i) => i);
      seal.sealToken(context as never, (nativeMacKeyOf as NonNullable<typeof nativeMacKeyOf>)(key), token, 5, 8);
      return Buffer.from(token).toString('hex');
    });
    expect(tokens[0]).not.toBe(tokens[1]);
  });
});

/** The addon's open, or a loud failure: CI builds it. */
function loadedOpen(): NativeTokenOpen {
  if (!nativeTokenOpen) throw new Error(`the native token open is ${nativeTokenOpenStatus}: \`npm run build:native\` builds it`);
  return nativeTokenOpen;
}

describe('opening a token as far as its tag', () => {
  it('is native where the addon is loaded', () => {
    if (nativeSwitchedOff) expect(nativeTokenOpenStatus).toBe('disabled');
    else expect(loadedOpen()).toBeDefined();
  });

  it.skipIf(nativeSwitchedOff)('gives the TypeScript verdict and bytes natively: sealed tokens, tokens with a byte changed, and any bytes (property)', () => {
    loadedOpen();
    const changedAt = fc.option(fc.nat(), { nil: undefined });
    fc.assert(fc.property(unsealed, changedAt, fc.uint8Array({ minLength: 0, maxLength: 80 }), ({ bodyKey, tagKey, tweakLength, bodyLength, token }, changed, noise) => {
      const key = Buffer.from(tagKey);
      sealInTypeScript(new FF1(bodyKey, 256, null), key, token, tweakLength, bodyLength);
      // A bit changed before the whitening (whitening undoes itself): only the tag check can tell.
      whiten(token);
      if (changed !== undefined) token[changed % token.length] = (token[changed % token.length] as number) ^ (1 << (changed % 8));
      whiten(token);
      const opener = tokenOpenerFor(key);
      for (const sample of [token, noise]) {
        const expected = sample.slice();
        const verdict = openInTypeScript(key, expected);
        const opened = sample.slice();
        expect(opener(opened)).toBe(verdict);
        expect(Buffer.from(opened).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
      }
      // A sealed token opens, one with a bit changed anywhere does not.
      expect(openInTypeScript(key, token.slice())).toBe(changed === undefined);
    }), { numRuns: 300 });
  });

  it.skipIf(nativeSwitchedOff)('refuses a wrong handle, array or length, and never names a byte', () => {
    const open = loadedOpen();
    const ff1 = loadedNativeFf1().createContext(new Uint8Array(32));
    const mac = (nativeDigests as NonNullable<typeof nativeDigests>).createMacKey(new Uint8Array(32));
    const secret = Uint8Array.from(Buffer.from('0123456789s3cretvalue', 'latin1'));
    const refusals = [
      thrownBy(() => open.openToken(ff1 as never, secret.slice())),
      thrownBy(() => open.openToken({} as never, secret.slice())),
      thrownBy(() => open.openToken(mac, new Uint16Array(24) as unknown as Uint8Array)),
      thrownBy(() => open.openToken(mac, secret.slice(0, 10))),
      thrownBy(() => (open.openToken as (...args: unknown[]) => boolean)(mac)),
    ];
    for (const error of refusals) {
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
      expect(String(error)).not.toMatch(/s3cret|73 33|0123/);
    }
  });
});
