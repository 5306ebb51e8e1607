import { hmacSha256Into, sha256Into } from '../crypto/sha256.js';

/**
 * The bytes of a tokenise token, before they are rendered in the kind's alphabet:
 *
 *   H (1)  nonce length code (3 bits) | key version (5 bits, 1–31)
 *   S (4)  scope id: HMAC(tag key, scope), the same for every token of a (kind, scope, version)
 *   N (0 or 4–16)  random nonce, present when noise > 0
 *   E (≥3) the packed value, FF1 over bytes under the (kind, scope, version) key, tweak H‖S‖N
 *   T (3)  tag: HMAC(tag key, H‖S‖N‖E), the tag key depending on kind and version, not on scope
 *
 * T says "this is a token of this kind" without knowing the scope; S then tells a token of
 * another scope exactly (it is not a per-token guess: S differs for every token of the other
 * scope, unless the two scopes' 32-bit ids collide). H‖S are whitened with a hash of the rest so
 * that tokens do not share a visible constant prefix.
 */
export const HEADER_BYTES = 1;
export const SCOPE_ID_BYTES = 4;
export const TAG_BYTES = 3;
export const MIN_BODY_BYTES = 3;
export const PREFIX_BYTES = HEADER_BYTES + SCOPE_ID_BYTES;

/** noise → nonce: 0 → none; 1 → 4 bytes (2^32 variants) ... ≥ 7 → 16 bytes. */
export function nonceCodeForNoise(noise: number): number {
  return Math.min(noise, 7);
}
export function nonceLength(code: number): number {
  return code === 0 ? 0 : 2 + 2 * code;
}

export function encodeHeader(nonceCode: number, version: number): number {
  return (nonceCode << 5) | version;
}

const SCOPE_LABEL = Buffer.from('scope\u0000', 'utf8');
/** Scope ids by tag key, then scope: one HMAC per (key, scope), not one per call. */
const scopeIds = new WeakMap<Buffer, Map<string, Uint8Array>>();
const SCOPE_IDS_PER_KEY = 1024;

/** HMAC(tag key, "scope\0" ‖ scope), cut to 4 bytes. Shared: callers must not modify it. */
export function scopeId(tagKey: Buffer, scope: string): Uint8Array {
  let byScope = scopeIds.get(tagKey);
  if (!byScope) {
    byScope = new Map();
    scopeIds.set(tagKey, byScope);
  }
  let id = byScope.get(scope);
  if (!id) {
    id = new Uint8Array(SCOPE_ID_BYTES);
    const message = Buffer.concat([SCOPE_LABEL, Buffer.from(scope, 'utf8')]);
    hmacSha256Into(tagKey, message, 0, message.length, id, 0, SCOPE_ID_BYTES);
    // Scopes come from requests: bound the map rather than grow it without end.
    if (byScope.size >= SCOPE_IDS_PER_KEY) byScope.clear();
    byScope.set(scope, id);
  }
  return id;
}

/** Writes the tag of token[0..taggedLength) right after it. */
export function writeTag(tagKey: Buffer, token: Uint8Array, taggedLength: number): void {
  hmacSha256Into(tagKey, token, 0, taggedLength, token, taggedLength, TAG_BYTES);
}

const expectedTag = new Uint8Array(TAG_BYTES);

/** Whether the tag after bytes[0..bodyEnd) is the one the key gives, compared in constant time. */
export function tagMatches(tagKey: Buffer, bytes: Uint8Array, bodyEnd: number): boolean {
  hmacSha256Into(tagKey, bytes, 0, bodyEnd, expectedTag, 0, TAG_BYTES);
  return equalAt(bytes, bodyEnd, expectedTag);
}

/** Whether the token's scope id is `id`, compared in constant time. */
export function scopeMatches(bytes: Uint8Array, id: Uint8Array): boolean {
  return equalAt(bytes, HEADER_BYTES, id);
}

/**
 * bytes[at..at+expected.length) = expected, without a data-dependent branch or early exit (a
 * JS loop is far cheaper than timingSafeEqual's native call for a few bytes).
 */
function equalAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (bytes.length < at + expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i++) difference |= (bytes[at + i] as number) ^ (expected[i] as number);
  return difference === 0;
}

const mask = new Uint8Array(PREFIX_BYTES);

/** XORs H‖S with a hash of everything after them; applying it twice restores the bytes. */
export function whiten(token: Uint8Array): void {
  // Text too short to be a token still parses to a few bytes; it fails later, whitened or not.
  sha256Into(token, Math.min(PREFIX_BYTES, token.length), token.length, mask, 0, PREFIX_BYTES);
  for (let i = 0; i < PREFIX_BYTES; i++) token[i] = (token[i] as number) ^ (mask[i] as number);
}

/** Where the parts of unwhitened token bytes are: H‖S‖N = [0, bodyStart), E, then T at bodyEnd. */
export interface TokenLayout {
  version: number;
  bodyStart: number;
  bodyEnd: number;
}

/** The layout of unwhitened token bytes; null when it cannot be a token's. */
export function splitToken(bytes: Uint8Array): TokenLayout | null {
  if (bytes.length < PREFIX_BYTES + MIN_BODY_BYTES + TAG_BYTES) return null;
  const header = bytes[0] as number;
  const version = header & 0x1f;
  const nonceBytes = nonceLength(header >> 5);
  const bodyStart = PREFIX_BYTES + nonceBytes;
  const bodyEnd = bytes.length - TAG_BYTES;
  if (version === 0 || bodyEnd - bodyStart < MIN_BODY_BYTES) return null;
  return { version, bodyStart, bodyEnd };
}
