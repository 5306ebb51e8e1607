import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { nativeDigests } from '../../../src/engine/crypto/nativeSha256.js';
import { nativeMacKeyOf } from '../../../src/engine/crypto/sha256.js';
import { Tokeniser } from '../../../src/engine/tokens/tokeniser.js';
import { sealInTypeScript } from '../../../src/engine/tokens/tokenSeal.js';
import { TOKEN_CODECS } from '../../../src/engine/tokens/tokenCodecs.js';
import { TAG_BYTES, encodeHeader, scopeId, splitToken, whiten } from '../../../src/engine/tokens/tokenFormat.js';
import {
  MAX_NATIVE_BODY, UNSEALED_NOT_A_TOKEN, UNSEALED_NOT_TAKEN, UNSEALED_OTHER_SCOPE, nativeTokenUnseal, nativeTokenUnsealStatus, nativeTokensUnsealerFor, nativeUnsealerFor,
  unsealInTypeScript, type NativeTokenUnseal,
} from '../../../src/engine/tokens/tokenUnseal.js';
import { Keyring } from '../../../src/keys/index.js';
import { loadedNativeFf1, nativeSwitchedOff, thrownBy } from '../crypto/nativeAddon.js';

/** The addon's unseal, or a loud failure: CI builds it. */
function loadedUnseal(): NativeTokenUnseal {
  if (!nativeTokenUnseal) throw new Error(`the native token unseal is ${nativeTokenUnsealStatus}: \`npm run build:native\` builds it`);
  return nativeTokenUnseal;
}

const VERSION = 5;
const scopeBytes = (n: number) => Uint8Array.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

/**
 * Token bytes as the tokeniser would read them: sealed under one of two versions and scope ids,
 * sometimes with a bit changed before or after whitening (no longer a token), sometimes any bytes.
 */
const tokenBytes = fc.record({
  nonceCode: fc.integer({ min: 0, max: 7 }),
  bodyLength: fc.integer({ min: 3, max: 128 }),
  version: fc.constantFrom(VERSION, VERSION, VERSION, VERSION + 1),
  scope: fc.constantFrom(0x01020304, 0x01020304, 0xfffffffe),
  flip: fc.option(fc.tuple(fc.boolean(), fc.nat()), { nil: undefined, freq: 3 }),
  junk: fc.option(fc.uint8Array({ minLength: 0, maxLength: 60 }), { nil: undefined, freq: 8 }),
  seed: fc.integer({ min: 0, max: 255 }),
});

function sealedSample(cipher: FF1, tagKey: Buffer, sample: typeof tokenBytes extends fc.Arbitrary<infer T> ? T : never): Uint8Array {
  if (sample.junk) return sample.junk;
  const tweakLength = 5 + (sample.nonceCode === 0 ? 0 : 2 + 2 * sample.nonceCode);
  const token = Uint8Array.from({ length: tweakLength + sample.bodyLength + TAG_BYTES }, (_, i) => (i * 29 + sample.seed) & 255);
  token[0] = encodeHeader(sample.nonceCode, sample.version);
  token.set(scopeBytes(sample.scope), 1);
  sealInTypeScript(cipher, tagKey, token, tweakLength, sample.bodyLength);
  if (sample.flip) {
    const [beforeWhitening, at] = sample.flip;
    if (beforeWhitening) whiten(token);
    token[at % token.length] = (token[at % token.length] as number) ^ (1 << (at % 8));
    if (beforeWhitening) whiten(token);
  }
  return token;
}

/**
 * The outcome the addon owes for `token` where TypeScript gives `typescript`: the same, except that
 * bytes whose header, once unwhitened, gives a body longer than the addon takes are left to the
 * caller (NOT_TAKEN) before their tag is read; the caller's open then finds what TypeScript found.
 * A bit changed after whitening changes the whole header, nonce length included, so such bodies occur.
 */
function nativeOutcomeFor(token: Uint8Array, typescript: number): number {
  if (typescript !== UNSEALED_NOT_A_TOKEN) return typescript;
  const unwhitened = token.slice();
  whiten(unwhitened);
  const layout = splitToken(unwhitened);
  return layout !== null && layout.bodyEnd - layout.bodyStart > MAX_NATIVE_BODY ? UNSEALED_NOT_TAKEN : typescript;
}

describe('unsealing tokens', () => {
  it('is native where the addon is loaded', () => {
    if (nativeSwitchedOff) expect(nativeTokenUnsealStatus).toBe('disabled');
    else expect(loadedUnseal()).toBeDefined();
  });

  it.skipIf(nativeSwitchedOff)('gives the TypeScript outcome and bytes natively, one by one and many at once (property)', () => {
    const unseal = loadedUnseal();
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.array(tokenBytes, { minLength: 1, maxLength: 40 }),
      (bodyKey, tagKeyBytes, samples) => {
        const tagKey = Buffer.from(tagKeyBytes);
        const macKey = (nativeMacKeyOf as NonNullable<typeof nativeMacKeyOf>)(tagKey);
        const reference = new FF1(bodyKey, 256, null);
        const context = new FF1(bodyKey, 256).nativeHandleFor(3);
        const tokens = samples.map((sample) => sealedSample(reference, tagKey, sample)).filter((token) => token.length >= 11);
        fc.pre(tokens.length > 0);
        const expectedBytes = tokens.map((token) => token.slice());
        const expected = expectedBytes.map((token, i) => nativeOutcomeFor(tokens[i] as Uint8Array, unsealInTypeScript(reference, tagKey, token, VERSION, scopeBytes(0x01020304))));
        const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
        tokens.forEach((token, i) => {
          const bytes = token.slice();
          const outcome = unseal.unsealToken(context as never, macKey, bytes, VERSION, 0x01020304);
          expect(outcome).toBe(expected[i]);
          // An unsealed token's bytes hold its plaintext body; a refused one's are not read.
          if (outcome > 0) expect(hex(bytes)).toBe(hex(expectedBytes[i] as Uint8Array));
        });
        const together = Buffer.concat(tokens);
        const ends = new Uint32Array(tokens.length);
        tokens.reduce((end, token, i) => (ends[i] = end + token.length), 0);
        const outcomes = new Int32Array(tokens.length);
        unseal.unsealTokens(context as never, macKey, together, ends, VERSION, 0x01020304, outcomes);
        expect([...outcomes]).toEqual(expected);
        tokens.forEach((token, i) => {
          const at = i === 0 ? 0 : (ends[i - 1] as number);
          if ((expected[i] as number) > 0) expect(hex(together.subarray(at, at + token.length))).toBe(hex(expectedBytes[i] as Uint8Array));
        });
      },
    ), { numRuns: 200 });
  });

  it.skipIf(nativeSwitchedOff)('gives the plaintext the open and batched FF1 give, for tokens, altered tokens and other text', () => {
    const keyring = new Keyring([{ version: 1, key: Buffer.alloc(32, 8) }, { version: 2, key: Buffer.alloc(32, 9) }], 2);
    const tokeniser = new Tokeniser(keyring);
    const values = ['Ann Smith', '0123', '+1 (555) 010-4477', 'x'.repeat(140), '\ufeffé', 'f47ac10b-58cc-4372-a567-0e02b2c3d479'];
    const tokens = [...tokeniser.protect('text', values, 's', 0, 'en'), ...tokeniser.protect('text', values, 's', 3, 'en')];
    const others = tokeniser.protect('text', values, 'other scope', 0, 'en');
    const altered = tokens.map((token) => token.slice(0, 2) + (token[2] === 'b' ? 'c' : 'b') + token.slice(3));
    const bytesOf = (texts: string[]) => texts.map((text) => TOKEN_CODECS.text.parse(text));
    const cipher = new FF1(keyring.subkey('tokenise', 'text', 's', 2), 256);
    const id = scopeId(keyring.subkey('tokenise-tag', 'text', '', 2), 's');
    const one = nativeUnsealerFor(cipher, keyring.subkey('tokenise-tag', 'text', '', 2), 2, id);
    const many = nativeTokensUnsealerFor(cipher, keyring.subkey('tokenise-tag', 'text', '', 2), 2, id);
    const parsed = bytesOf([...tokens, ...others, ...altered, 'no token here']);
    const before = parsed.map((bytes) => (bytes === null ? null : Buffer.from(bytes).toString('hex')));
    const got = many?.(parsed);
    expect(parsed.map((bytes) => (bytes === null ? null : Buffer.from(bytes).toString('hex')))).toEqual(before); // read, not written
    expect(got).toEqual(parsed.map((bytes) => (bytes === null ? UNSEALED_NOT_A_TOKEN : one?.(bytes))));
    // The long value's body is past the addon's: left to the open, as every other one-by-one answer shows.
    const plain = [...values.map((v, i) => (i === 3 ? UNSEALED_NOT_TAKEN : v)), ...values.map((v, i) => (i === 3 ? UNSEALED_NOT_TAKEN : v))];
    expect(got?.slice(0, tokens.length)).toEqual(plain);
    expect(got?.slice(tokens.length, tokens.length + others.length)).toEqual(others.map((_, i) => (i === 3 ? UNSEALED_NOT_TAKEN : UNSEALED_OTHER_SCOPE)));
    // An altered token unwhitens to another header: mostly another version's, left to the open, which refuses it.
    for (const outcome of got?.slice(tokens.length + others.length) ?? []) expect([UNSEALED_NOT_A_TOKEN, UNSEALED_NOT_TAKEN]).toContain(outcome);
    expect(tokeniser.unprotect('text', altered, 's').invalidToken).toEqual(altered.map((_, i) => i));
    expect(tokeniser.unprotect('text', [...tokens, ...others], 's')).toEqual({
      result: [...values, ...values, ...others], invalidToken: [], invalidScope: others.map((_, i) => tokens.length + i),
    });
  });

  it.skipIf(nativeSwitchedOff)('leaves a body longer than the addon takes, or another version, to the open; short bytes are no token', () => {
    const tagKey = Buffer.alloc(32, 4);
    const cipher = new FF1(new Uint8Array(32).fill(6), 256);
    const many = nativeTokensUnsealerFor(cipher, tagKey, VERSION, scopeBytes(7));
    const token = new Uint8Array(5 + 129 + TAG_BYTES);
    token[0] = encodeHeader(0, VERSION);
    token.set(scopeBytes(7), 1);
    sealInTypeScript(new FF1(new Uint8Array(32).fill(6), 256, null), tagKey, token, 5, 129);
    const short = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const before = [token.slice(), short.slice()];
    expect(nativeUnsealerFor(cipher, tagKey, VERSION, scopeBytes(7))?.(token)).toBe(UNSEALED_NOT_TAKEN);
    expect(many?.([token, short, null])).toEqual([UNSEALED_NOT_TAKEN, UNSEALED_NOT_A_TOKEN, UNSEALED_NOT_A_TOKEN]);
    expect([token, short]).toEqual(before);
  });

  it.skipIf(nativeSwitchedOff)('unseals more tokens than one native call takes, by count and by bytes', () => {
    const tokeniser = new Tokeniser(new Keyring([{ version: 1, key: Buffer.alloc(32, 3) }]));
    // Two values in three near the longest body the addon takes (1024 of them pass 64 KiB), one in 500 longer (opened, not unsealed).
    const values = Array.from({ length: 2500 }, (_, i) => (i % 500 === 1 ? 'x'.repeat(200) : i % 3 !== 1 ? `${'long text value '.repeat(6)}${i}` : `v${i}`));
    const tokens = tokeniser.protect('text', values, 'many', 0, 'en');
    expect(tokeniser.unprotect('text', tokens, 'many')).toEqual({ result: values, invalidToken: [], invalidScope: [] });
  });
});

describe.skipIf(nativeSwitchedOff)('the native unseal, given bad arguments', () => {
  it('throws a TypeError or RangeError for a wrong handle, array, length, version or scope, and never names a byte', () => {
    const unseal = loadedUnseal();
    const ff1 = loadedNativeFf1().createContext(new Uint8Array(32));
    const mac = (nativeDigests as NonNullable<typeof nativeDigests>).createMacKey(new Uint8Array(32));
    const secret = Uint8Array.from(Buffer.from('0123456789s3cretvalue', 'latin1'));
    const ends = Uint32Array.from([secret.length]);
    const outcomes = new Int32Array(1);
    const refusals = [
      thrownBy(() => unseal.unsealToken(mac as never, mac, secret.slice(), 1, 0)),
      thrownBy(() => unseal.unsealToken(ff1, ff1 as never, secret.slice(), 1, 0)),
      thrownBy(() => unseal.unsealToken(ff1, mac, new Uint16Array(24) as unknown as Uint8Array, 1, 0)),
      thrownBy(() => unseal.unsealToken(ff1, mac, secret.slice(0, 10), 1, 0)),
      thrownBy(() => unseal.unsealToken(ff1, mac, secret.slice(), 0, 0)),
      thrownBy(() => unseal.unsealToken(ff1, mac, secret.slice(), 32, 0)),
      thrownBy(() => unseal.unsealToken(ff1, mac, secret.slice(), 1, 2 ** 32)),
      thrownBy(() => unseal.unsealToken(ff1, mac, secret.slice(), 1, -1)),
      thrownBy(() => (unseal.unsealToken as (...args: unknown[]) => number)(ff1, mac, secret.slice(), 1)),
      thrownBy(() => unseal.unsealTokens(ff1, {} as never, secret.slice(), ends, 1, 0, outcomes)),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), new Uint32Array(0), 1, 0, new Int32Array(0))),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), new Uint32Array(1025).fill(secret.length), 1, 0, new Int32Array(1025))),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), ends, 1, 0, new Int32Array(2))),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), Uint32Array.from([12, 11, secret.length]), 1, 0, new Int32Array(3))),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), Uint32Array.from([secret.length - 1]), 1, 0, outcomes)),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), Uint32Array.from([secret.length + 1]), 1, 0, outcomes)),
      thrownBy(() => unseal.unsealTokens(ff1, mac, secret.slice(), ends, 1, 0, new Uint32Array(1) as unknown as Int32Array)),
    ];
    for (const error of refusals) {
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
      expect(String(error)).not.toMatch(/s3cret|73 33|0123/);
    }
  });

  it('reads ends once and writes outcomes once: arrays that share memory do not lead it astray', () => {
    const unseal = loadedUnseal();
    const tagKey = Buffer.alloc(32, 2);
    const bodyKey = new Uint8Array(32).fill(4);
    const context = new FF1(bodyKey, 256).nativeHandleFor(3);
    const mac = (nativeMacKeyOf as NonNullable<typeof nativeMacKeyOf>)(tagKey);
    // 20 bytes: the next token's H‖S is where an Int32Array may start.
    const sealed = Uint8Array.from({ length: 5 + 12 + TAG_BYTES }, (_, i) => i * 7);
    sealed[0] = encodeHeader(0, VERSION);
    sealed.set(scopeBytes(0x01020304), 1);
    sealInTypeScript(new FF1(bodyKey, 256, null), tagKey, sealed, 5, 12);
    // outcomes over ends: the outcome is written where the end was, after the end was used.
    const ends = Uint32Array.from([sealed.length]);
    unseal.unsealTokens(context as never, mac, sealed.slice(), ends, VERSION, 0x01020304, new Int32Array(ends.buffer));
    expect(ends[0]).toBe(5);
    // outcomes inside the next token's H‖S, which unwhitening rewrites before the bodies are decrypted.
    const shared = new ArrayBuffer(2 * sealed.length);
    const tokens = new Uint8Array(shared);
    tokens.set(sealed, 0);
    tokens.set(sealed, sealed.length);
    unseal.unsealTokens(context as never, mac, tokens, Uint32Array.from([sealed.length, 2 * sealed.length]), VERSION, 0x01020304, new Int32Array(shared, sealed.length, 2));
    const alone = sealed.slice();
    expect(unseal.unsealToken(context as never, mac, alone, VERSION, 0x01020304)).toBe(5);
    expect(Buffer.from(tokens.subarray(0, sealed.length))).toEqual(Buffer.from(alone));
  });

  it('checks every argument before it unwhitens anything', () => {
    const unseal = loadedUnseal();
    const ff1 = loadedNativeFf1().createContext(new Uint8Array(32));
    const mac = (nativeMacKeyOf as NonNullable<typeof nativeMacKeyOf>)(Buffer.alloc(32, 1));
    const token = Uint8Array.from({ length: 24 }, (_, i) => i + 1);
    const before = token.slice();
    expect(thrownBy(() => unseal.unsealToken(ff1, mac, token, 0, 0))).toBeInstanceOf(RangeError);
    expect(thrownBy(() => unseal.unsealTokens(ff1, mac, token, Uint32Array.from([24]), 1, 0, new Int32Array(2)))).toBeInstanceOf(RangeError);
    expect([...token]).toEqual([...before]);
  });
});
