import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

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

export function scopeId(tagKey: Buffer, scope: string): Buffer {
  return createHmac('sha256', tagKey).update('scope\u0000').update(scope, 'utf8').digest().subarray(0, SCOPE_ID_BYTES);
}

export function computeTag(tagKey: Buffer, unwhitenedWithoutTag: Uint8Array): Buffer {
  return createHmac('sha256', tagKey).update(unwhitenedWithoutTag).digest().subarray(0, TAG_BYTES);
}

/** XORs H‖S with a hash of everything after them; applying it twice restores the bytes. */
export function whiten(token: Uint8Array): void {
  const mask = createHash('sha256').update(token.subarray(PREFIX_BYTES)).digest();
  for (let i = 0; i < PREFIX_BYTES; i++) token[i] = (token[i] as number) ^ (mask[i] as number);
}

export interface ParsedToken {
  version: number;
  scopeId: Uint8Array;
  /** H‖S‖N: the FF1 tweak of the body. */
  tweak: Uint8Array;
  body: Uint8Array;
  /** H‖S‖N‖E, what the tag covers. */
  tagged: Uint8Array;
  tag: Uint8Array;
}

/** Splits unwhitened token bytes; null when the layout cannot be a token's. */
export function splitToken(bytes: Uint8Array): ParsedToken | null {
  if (bytes.length < PREFIX_BYTES + MIN_BODY_BYTES + TAG_BYTES) return null;
  const header = bytes[0] as number;
  const version = header & 0x1f;
  const nonceBytes = nonceLength(header >> 5);
  const bodyStart = PREFIX_BYTES + nonceBytes;
  const bodyEnd = bytes.length - TAG_BYTES;
  if (version === 0 || bodyEnd - bodyStart < MIN_BODY_BYTES) return null;
  return {
    version,
    scopeId: bytes.subarray(HEADER_BYTES, PREFIX_BYTES),
    tweak: bytes.subarray(0, bodyStart),
    body: bytes.subarray(bodyStart, bodyEnd),
    tagged: bytes.subarray(0, bodyEnd),
    tag: bytes.subarray(bodyEnd),
  };
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
