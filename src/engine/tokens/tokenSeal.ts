import { nativePart, type NativeStatus } from '../crypto/nativeAddon.js';
import { FF1 } from '../crypto/ff1.js';
import { offHeapUint16Array, offHeapUint8Array } from '../crypto/offHeapSlab.js';
import { nativeFf1Status, type NativeFf1Context } from '../crypto/nativeFf1.js';
import { nativeDigestsStatus, type NativeMacKey } from '../crypto/nativeSha256.js';
import { nativeMacKeyOf } from '../crypto/sha256.js';
import { MIN_BODY_BYTES, PREFIX_BYTES, TAG_BYTES, tagMatches, whiten, writeTag } from './tokenFormat.js';

/**
 * Sealing one token's bytes (tokenFormat.ts's layout): token[0, tweakLength) holds the tweak
 * H‖S‖N and token[tweakLength, +bodyLength) the packed value; the value is encrypted in place
 * under the body cipher (FF1, radix 256), its tag is written after it, and H‖S are whitened with
 * a hash of everything after them. In TypeScript that is three calls (FF1, HMAC, SHA-256); the
 * native addon does it in one (native/crypto/token_seal.c), chosen once when this module loads,
 * only where it gives the TypeScript bytes for the samples below. Opening runs the first two
 * steps back (unwhitening, the tag check) in one call the same way, the body's FF1 then the
 * caller's, batched: the path of tokens the addon does not unseal (tokenUnseal.ts) in one go.
 */

export interface NativeTokenSeal {
  sealToken(context: NativeFf1Context, macKey: NativeMacKey, token: Uint8Array, tweakLength: number, bodyLength: number): void;
}

export interface NativeTokenOpen {
  openToken(macKey: NativeMacKey, token: Uint8Array): boolean;
}

/** Unwhitens token bytes in place and says whether their last TAG_BYTES are the tag under one tag key. */
export type TokenOpener = (token: Uint8Array) => boolean;

/** Seals a token natively; false, with nothing done, for lengths the addon does not take. */
export type NativeSealer = (token: Uint8Array, tweakLength: number, bodyLength: number) => boolean;

/**
 * Numerals in and out for one value, one pair per body length, kept for the process's life and
 * made off V8's heap (offHeapSlab.ts): an array on it would be moved out by the first native call,
 * leaving an unwiped copy of the plaintext it held then. Calls are synchronous, so one pair
 * serves every caller; callers wipe the plaintext numerals.
 */
const MAX_HELD_BODY = 256;
const oneValueNumerals: (readonly [Uint16Array, Uint16Array] | undefined)[] = [];

export function numeralsFor(length: number): readonly [Uint16Array, Uint16Array] {
  if (length > MAX_HELD_BODY) return [new Uint16Array(length), new Uint16Array(length)];
  return (oneValueNumerals[length] ??= [offHeapUint16Array(length), offHeapUint16Array(length)]);
}

/**
 * Token bytes for one native call (a seal or an open), one array per length, kept for the
 * process's life off V8's heap for the same reason; longer tokens get a fresh array. Calls are
 * synchronous, so one array per length serves sealing and opening alike.
 */
const MAX_HELD_TOKEN = 256;
const oneValueTokens: (Uint8Array | undefined)[] = [];

export function tokenBytesFor(length: number): Uint8Array {
  if (length > MAX_HELD_TOKEN) return new Uint8Array(length);
  return (oneValueTokens[length] ??= offHeapUint8Array(length));
}

/** Seals `token` (exactly tweakLength + bodyLength + TAG_BYTES long) in TypeScript, FF1 by `cipher`. */
export function sealInTypeScript(cipher: FF1, tagKey: Buffer, token: Uint8Array, tweakLength: number, bodyLength: number): void {
  const [numerals, body] = numeralsFor(bodyLength);
  for (let i = 0; i < bodyLength; i++) numerals[i] = token[tweakLength + i] as number;
  try {
    cipher.cryptInto(numerals, token.subarray(0, tweakLength), false, body);
  } finally {
    numerals.fill(0);
  }
  for (let i = 0; i < bodyLength; i++) token[tweakLength + i] = body[i] as number;
  writeTag(tagKey, token, tweakLength + bodyLength);
  whiten(token);
}

/** openToken's reference: H‖S unwhitened in place, then whether the tag is `tagKey`'s (any length: short bytes are no token). */
export function openInTypeScript(tagKey: Buffer, token: Uint8Array): boolean {
  whiten(token);
  return token.length >= TAG_BYTES && tagMatches(tagKey, token, token.length - TAG_BYTES);
}

/** Body lengths of the samples: the integer path's shortest and longest halves, the byte path's, and its longest. */
const SAMPLE_BODIES = [3, 7, 12, 13, 40, 64, 128];
/** Tweak lengths of the samples: H‖S without a nonce, and with noise 7's 16-byte nonce. */
const SAMPLE_TWEAKS = [5, 21];

/** The seal gives sealInTypeScript's bytes, over the TypeScript FF1, for every sample. */
function sealsAsTypeScript(seal: NativeTokenSeal): boolean {
  if (nativeMacKeyOf === undefined) return false;
  try {
    const bodyKey = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 255);
    const tagKey = Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => (i * 91 + 5) & 255));
    const native = new FF1(bodyKey, 256);
    const reference = new FF1(bodyKey, 256, null);
    for (const tweakLength of SAMPLE_TWEAKS) {
      for (const bodyLength of SAMPLE_BODIES) {
        const context = native.nativeHandleFor(bodyLength);
        if (context === undefined) return false;
        const plain = Uint8Array.from({ length: tweakLength + bodyLength + TAG_BYTES }, (_, i) => (i * 29 + bodyLength) & 255);
        const expected = plain.slice();
        sealInTypeScript(reference, tagKey, expected, tweakLength, bodyLength);
        const sealed = plain.slice();
        seal.sealToken(context, nativeMacKeyOf(tagKey), sealed, tweakLength, bodyLength);
        if (Buffer.compare(sealed, expected) !== 0) return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * openToken gives openInTypeScript's verdicts and bytes for sealed samples, for each of them with
 * a byte of the tag, of the body or of H‖S changed (no longer tokens), for each with its last
 * tag byte changed before whitening (only the tag check can tell), and for bytes of the shortest
 * length that are none.
 */
function opensAsTypeScript(open: NativeTokenOpen): boolean {
  if (nativeMacKeyOf === undefined) return false;
  try {
    const tagKey = Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => (i * 53 + 7) & 255));
    const macKey = nativeMacKeyOf(tagKey);
    const cipher = new FF1(Uint8Array.from({ length: 32 }, (_, i) => (i * 19 + 3) & 255), 256, null);
    // Bytes, and whether they are a token under tagKey.
    const samples: { readonly bytes: Uint8Array; readonly token: boolean }[] = [
      { bytes: Uint8Array.from({ length: MIN_NATIVE_TOKEN }, (_, i) => i * 41), token: false },
    ];
    for (const tweakLength of SAMPLE_TWEAKS) {
      for (const bodyLength of [3, 12, 40]) {
        const sealed = Uint8Array.from({ length: tweakLength + bodyLength + TAG_BYTES }, (_, i) => (i * 23 + bodyLength) & 255);
        sealInTypeScript(cipher, tagKey, sealed, tweakLength, bodyLength);
        samples.push({ bytes: sealed, token: true });
        for (const changed of [0, tweakLength, sealed.length - 1]) {
          const bytes = sealed.slice();
          bytes[changed] = (bytes[changed] as number) ^ 1;
          samples.push({ bytes, token: false });
        }
        const retagged = sealed.slice();
        whiten(retagged); // whitening undoes itself: these are the bytes before it
        retagged[retagged.length - 1] = (retagged[retagged.length - 1] as number) ^ 1;
        whiten(retagged);
        samples.push({ bytes: retagged, token: false });
      }
    }
    return samples.every(({ bytes, token }) => {
      const expected = bytes.slice();
      const verdict = openInTypeScript(tagKey, expected);
      const opened = bytes.slice();
      return verdict === token && open.openToken(macKey, opened) === verdict && Buffer.compare(opened, expected) === 0;
    });
  } catch {
    return false;
  }
}

/** The shortest token bytes openToken takes: H‖S, the shortest body and the tag. */
const MIN_NATIVE_TOKEN = PREFIX_BYTES + MIN_BODY_BYTES + TAG_BYTES;

/** The longest tweak token_seal.c takes (a token's is at most 21 bytes), and its shortest body (a packed value's). */
const MAX_NATIVE_TWEAK = 64;
const MIN_NATIVE_BODY = 3;

/** The seal runs over the native FF1 and digests: without either, it is not used, for their reason. */
const prerequisite = nativeFf1Status !== 'loaded' ? nativeFf1Status : nativeDigestsStatus;
const selected = prerequisite !== 'loaded' ? { part: undefined, status: prerequisite }
  : nativePart<NativeTokenSeal>('token seal', ['sealToken'], sealsAsTypeScript);

export const nativeTokenSeal: NativeTokenSeal | undefined = selected.part;
export const nativeTokenSealStatus: NativeStatus = selected.status;

/** Opening needs only the digests. */
const selectedOpen = nativeDigestsStatus !== 'loaded' ? { part: undefined, status: nativeDigestsStatus }
  : nativePart<NativeTokenOpen>('token open', ['openToken'], opensAsTypeScript);

export const nativeTokenOpen: NativeTokenOpen | undefined = selectedOpen.part;
export const nativeTokenOpenStatus: NativeStatus = selectedOpen.status;

/** The opener of tokens tagged under `tagKey`: native where the addon opens, else openInTypeScript. */
export function tokenOpenerFor(tagKey: Buffer): TokenOpener {
  const open = selectedOpen.part;
  if (open === undefined || nativeMacKeyOf === undefined) return (token) => openInTypeScript(tagKey, token);
  const macKey = nativeMacKeyOf(tagKey);
  return (token) => {
    const length = token.length;
    if (length < MIN_NATIVE_TOKEN) return openInTypeScript(tagKey, token);
    if (length > MAX_HELD_TOKEN) return open.openToken(macKey, token);
    // A codec's fresh array is small and on V8's heap: the native call would move each one out.
    const scratch = tokenBytesFor(length);
    for (let i = 0; i < length; i++) scratch[i] = token[i] as number;
    const tagged = open.openToken(macKey, scratch);
    // Only H‖S change: they are unwhitened.
    for (let i = 0; i < PREFIX_BYTES; i++) token[i] = scratch[i] as number;
    return tagged;
  };
}

/** The native sealer of tokens under `cipher` and `tagKey`; undefined where the addon does not seal (no build, PGVEIL_NATIVE=0). */
export function nativeSealerFor(cipher: FF1, tagKey: Buffer): NativeSealer | undefined {
  const seal = selected.part;
  if (seal === undefined || nativeMacKeyOf === undefined) return undefined;
  const macKey = nativeMacKeyOf(tagKey);
  return (token, tweakLength, bodyLength) => {
    const context = cipher.nativeHandleFor(bodyLength);
    if (context === undefined || bodyLength < MIN_NATIVE_BODY || tweakLength > MAX_NATIVE_TWEAK) return false;
    seal.sealToken(context, macKey, token, tweakLength, bodyLength);
    return true;
  };
}
