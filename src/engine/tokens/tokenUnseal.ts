import { nativePart, type NativeStatus } from '../crypto/nativeAddon.js';
import { FF1 } from '../crypto/ff1.js';
import { type NativeFf1Context } from '../crypto/nativeFf1.js';
import { type NativeMacKey } from '../crypto/nativeSha256.js';
import { nativeMacKeyOf } from '../crypto/sha256.js';
import { numeralsFor, nativeTokenOpenStatus, nativeTokenSealStatus, openInTypeScript, sealInTypeScript, tokenBytesFor } from './tokenSeal.js';
import { unpackValueIn } from './packing.js';
import { MIN_BODY_BYTES, PREFIX_BYTES, SCOPE_ID_BYTES, TAG_BYTES, encodeHeader, scopeMatches, splitToken, whiten } from './tokenFormat.js';

/**
 * Unsealing one token's bytes, sealing's inverse for a token of one key version and scope, in
 * one native call (native/crypto/token_seal.c's unsealToken): unwhitening, the tag, the scope and
 * the body's FF1. Where the addon has no such call, tokens are opened in two steps (the open, then
 * the body's FF1 batched across the request), which unsealInTypeScript restates: the native call
 * is chosen once when this module loads, only where it gives that function's outcomes and bytes
 * for the samples below.
 */

/** The token bytes are no token under this key (layout or tag). */
export const UNSEALED_NOT_A_TOKEN = -1;
/** A token of this kind and key of another scope. */
export const UNSEALED_OTHER_SCOPE = -2;
/** Not unsealed here: another key version's token, or a body longer than the addon takes; the caller opens it as before. */
export const UNSEALED_NOT_TAKEN = -3;

export interface NativeTokenUnseal {
  unsealToken(context: NativeFf1Context, macKey: NativeMacKey, token: Uint8Array, version: number, scopeId: number): number;
  unsealTokens(
    context: NativeFf1Context, macKey: NativeMacKey, tokens: Uint8Array, ends: Uint32Array, version: number, scopeId: number, outcomes: Int32Array,
  ): void;
}

/**
 * A token's plaintext from its bytes (a codec's array, left as it is), or one of the codes above
 * (NOT_A_TOKEN too for a body that is no packing). The packed plaintext stays in memory off V8's
 * heap, wiped once it is read.
 */
export type TokenUnsealer = (token: Uint8Array) => string | number;

/** TokenUnsealer over many tokens at once, their bodies decrypted together (NOT_A_TOKEN for a null). */
export type TokensUnsealer = (tokens: readonly (Uint8Array | null)[]) => (string | number)[];

/** The longest body the addon decrypts (its maxBytes), and the token bytes that hold one with the longest nonce. */
export const MAX_NATIVE_BODY = 128;
const MAX_NATIVE_TOKEN = PREFIX_BYTES + 16 + MAX_NATIVE_BODY + TAG_BYTES;
const MIN_NATIVE_TOKEN = PREFIX_BYTES + MIN_BODY_BYTES + TAG_BYTES;
/** Tokens per unsealTokens call (the addon's limit), and their bytes: enough for 1024 of 64 bytes. */
const TOKENS_PER_CALL = 1024;
const BYTES_PER_CALL = 64 * 1024;
/** One call's tokens end to end, their ends, outcomes, and the index of each in the caller's list: calls are synchronous, one set serves all. */
const callBytes = new Uint8Array(BYTES_PER_CALL);
const callEnds = new Uint32Array(TOKENS_PER_CALL);
const callOutcomes = new Int32Array(TOKENS_PER_CALL);
const callIndexes = new Int32Array(TOKENS_PER_CALL);

/** The plaintext packed at bytes[start, end), or NOT_A_TOKEN for bytes that are no packing; the bytes are wiped. */
function unpackAndWipe(bytes: Uint8Array, start: number, end: number): string | number {
  const value = unpackValueIn(bytes, start, end);
  bytes.fill(0, start, end);
  return value ?? UNSEALED_NOT_A_TOKEN;
}
const endsOf: Uint32Array[] = [];
const outcomesOf: Int32Array[] = [];

/** A scope id's 4 bytes as the big-endian integer the addon takes. */
function scopeNumber(id: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < SCOPE_ID_BYTES; i++) n = n * 256 + (id[i] as number);
  return n;
}

/**
 * unsealToken's reference, over the TypeScript open and FF1: H‖S unwhitened in place, then the
 * version, the layout, the tag and the scope checked, and the body decrypted in place.
 */
export function unsealInTypeScript(cipher: FF1, tagKey: Buffer, token: Uint8Array, version: number, scopeId: Uint8Array): number {
  const tagged = openInTypeScript(tagKey, token);
  const header = token[0] as number;
  if ((header & 0x1f) !== version) return UNSEALED_NOT_TAKEN;
  const layout = splitToken(token);
  if (layout === null || !tagged) return UNSEALED_NOT_A_TOKEN;
  if (!scopeMatches(token, scopeId)) return UNSEALED_OTHER_SCOPE;
  const { bodyStart, bodyEnd } = layout;
  const bodyLength = bodyEnd - bodyStart;
  const [numerals, plain] = numeralsFor(bodyLength);
  for (let i = 0; i < bodyLength; i++) numerals[i] = token[bodyStart + i] as number;
  try {
    cipher.cryptInto(numerals, token.subarray(0, bodyStart), true, plain);
    for (let i = 0; i < bodyLength; i++) token[bodyStart + i] = plain[i] as number;
  } finally {
    plain.fill(0);
  }
  return bodyStart;
}

/** Tweak and body lengths of the samples: H‖S with no nonce, noise 1's and noise 7's; bodies across the addon's paths. */
const SAMPLE_NONCE_CODES = [0, 1, 7];
const SAMPLE_BODIES = [3, 12, 13, 40, 128];
const SAMPLE_VERSION = 3;

/**
 * unsealToken gives unsealInTypeScript's outcome and bytes for sealed samples, for each with a
 * byte of H‖S, of the body or of the tag changed, with the tag's last byte changed before
 * whitening, under another scope id and another version, and for bytes of the shortest length.
 */
function unsealsAsTypeScript(unseal: NativeTokenUnseal): boolean {
  if (nativeMacKeyOf === undefined) return false;
  try {
    const tagKey = Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => (i * 67 + 13) & 255));
    const bodyKey = Uint8Array.from({ length: 32 }, (_, i) => (i * 31 + 17) & 255);
    const native = new FF1(bodyKey, 256);
    const reference = new FF1(bodyKey, 256, null);
    const context = native.nativeHandleFor(MIN_BODY_BYTES);
    if (context === undefined) return false;
    const macKey = nativeMacKeyOf(tagKey);
    const scope = Uint8Array.from([0x9c, 0x01, 0xfe, 0x42]);
    const otherScope = Uint8Array.from([0x9c, 0x01, 0xfe, 0x43]);
    const samples: Uint8Array[] = [Uint8Array.from({ length: MIN_NATIVE_TOKEN }, (_, i) => i * 43)];
    for (const nonceCode of SAMPLE_NONCE_CODES) {
      const tweakLength = PREFIX_BYTES + (nonceCode === 0 ? 0 : 2 + 2 * nonceCode);
      for (const bodyLength of SAMPLE_BODIES) {
        for (const [version, id] of [[SAMPLE_VERSION, scope], [SAMPLE_VERSION, otherScope], [SAMPLE_VERSION + 1, scope]] as const) {
          const sealed = Uint8Array.from({ length: tweakLength + bodyLength + TAG_BYTES }, (_, i) => (i * 19 + bodyLength) & 255);
          sealed[0] = encodeHeader(nonceCode, version);
          sealed.set(id, 1);
          sealInTypeScript(reference, tagKey, sealed, tweakLength, bodyLength);
          samples.push(sealed);
          for (const changed of [1, tweakLength, sealed.length - 1]) {
            const bytes = sealed.slice();
            bytes[changed] = (bytes[changed] as number) ^ 1;
            samples.push(bytes);
          }
          const retagged = sealed.slice();
          whiten(retagged); // whitening undoes itself: these are the bytes before it
          retagged[retagged.length - 1] = (retagged[retagged.length - 1] as number) ^ 1;
          whiten(retagged);
          samples.push(retagged);
        }
      }
    }
      const expected = samples.map((bytes) => bytes.slice());
    const outcomes = expected.map((bytes) => unsealInTypeScript(reference, tagKey, bytes, SAMPLE_VERSION, scope));
    // Only an unsealed token's bytes are compared: a refused one's are not read.
    const oneByOne = samples.every((bytes, i) => {
      const unsealed = bytes.slice();
      const got = unseal.unsealToken(context, macKey, unsealed, SAMPLE_VERSION, scopeNumber(scope));
      return got === outcomes[i] && (got < 0 || Buffer.compare(unsealed, expected[i] as Uint8Array) === 0);
    });
    const together = Buffer.concat(samples);
    const ends = new Uint32Array(samples.length);
    samples.reduce((end, bytes, i) => (ends[i] = end + bytes.length), 0);
    const got = new Int32Array(samples.length);
    unseal.unsealTokens(context, macKey, together, ends, SAMPLE_VERSION, scopeNumber(scope), got);
    return oneByOne && samples.every((bytes, i) => {
      const at = i === 0 ? 0 : (ends[i - 1] as number);
      return got[i] === outcomes[i] && (got[i] as number < 0 || Buffer.compare(together.subarray(at, at + bytes.length), expected[i] as Uint8Array) === 0);
    });
  } catch {
    return false;
  }
}

/** The unseal runs over the native FF1 and digests, as the seal and open do: it is used only with them. */
const prerequisite = nativeTokenSealStatus !== 'loaded' ? nativeTokenSealStatus : nativeTokenOpenStatus;
const selected = prerequisite !== 'loaded' ? { part: undefined, status: prerequisite }
  : nativePart<NativeTokenUnseal>('token unseal', ['unsealToken', 'unsealTokens'], unsealsAsTypeScript);

export const nativeTokenUnseal: NativeTokenUnseal | undefined = selected.part;
export const nativeTokenUnsealStatus: NativeStatus = selected.status;

/** What an unsealer hands the addon: its unseal, the body cipher's and tag key's handles, the scope id as a number. */
function unsealKeys(cipher: FF1, tagKey: Buffer, scopeId: Uint8Array) {
  const unseal = selected.part;
  const context = cipher.nativeHandleFor(MIN_BODY_BYTES);
  if (unseal === undefined || nativeMacKeyOf === undefined || context === undefined) return undefined;
  return { unseal, context, macKey: nativeMacKeyOf(tagKey), scope: scopeNumber(scopeId) };
}

/**
 * The native unsealer of tokens of one key `version` and scope, whose bodies `cipher` decrypts
 * and whose tags are `tagKey`'s; undefined where the addon does not unseal (no build, PGVEIL_NATIVE=0).
 */
export function nativeUnsealerFor(cipher: FF1, tagKey: Buffer, version: number, scopeId: Uint8Array): TokenUnsealer | undefined {
  const keys = unsealKeys(cipher, tagKey, scopeId);
  if (keys === undefined) return undefined;
  const { unseal, context, macKey, scope } = keys;
  return (token) => {
    const length = token.length;
    if (length < MIN_NATIVE_TOKEN) return UNSEALED_NOT_A_TOKEN;
    if (length > MAX_NATIVE_TOKEN) return UNSEALED_NOT_TAKEN;
    // A codec's fresh array is small and on V8's heap: the native call would move each one out.
    const scratch = tokenBytesFor(length);
    for (let i = 0; i < length; i++) scratch[i] = token[i] as number;
    const outcome = unseal.unsealToken(context, macKey, scratch, version, scope);
    return outcome > 0 ? unpackAndWipe(scratch, outcome, length - TAG_BYTES) : outcome;
  };
}

/** The native unsealer of many tokens at once, as nativeUnsealerFor's; undefined where that one is. */
export function nativeTokensUnsealerFor(cipher: FF1, tagKey: Buffer, version: number, scopeId: Uint8Array): TokensUnsealer | undefined {
  const keys = unsealKeys(cipher, tagKey, scopeId);
  if (keys === undefined) return undefined;
  const { unseal, context, macKey, scope } = keys;
  return (tokens) => {
    const outcomes = new Array<string | number>(tokens.length);
    let count = 0;
    let used = 0;
    const call = (): void => {
      if (count === 0) return;
      const ends = (endsOf[count] ??= callEnds.subarray(0, count));
      const got = (outcomesOf[count] ??= callOutcomes.subarray(0, count));
      try {
        unseal.unsealTokens(context, macKey, callBytes.subarray(0, used), ends, version, scope, got);
        for (let j = 0, start = 0; j < count; start = ends[j] as number, j++) {
          const outcome = got[j] as number;
          outcomes[callIndexes[j] as number] = outcome > 0 ? unpackAndWipe(callBytes, start + outcome, (ends[j] as number) - TAG_BYTES) : outcome;
        }
      } finally {
        callBytes.fill(0, 0, used);
      }
      count = 0;
      used = 0;
    };
    for (let index = 0; index < tokens.length; index++) {
      const token = tokens[index];
      const length = token?.length ?? 0;
      if (token == null || length < MIN_NATIVE_TOKEN) outcomes[index] = UNSEALED_NOT_A_TOKEN;
      else if (length > MAX_NATIVE_TOKEN) outcomes[index] = UNSEALED_NOT_TAKEN;
      else {
        if (count === TOKENS_PER_CALL || used + length > BYTES_PER_CALL) call();
        for (let i = 0; i < length; i++) callBytes[used + i] = token[i] as number;
        used += length;
        callEnds[count] = used;
        callIndexes[count++] = index;
      }
    }
    call();
    return outcomes;
  };
}
