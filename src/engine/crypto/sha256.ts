import { isRange, nativeDigestFunctions, nativeDigests } from './nativeSha256.js';

/**
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104) for the tokenise tag, scope id and whitening
 * hash: over the native addon where it is loaded (nativeSha256.ts), else in the plain TypeScript
 * below (the `portable` functions), with identical outputs. Their messages are a few dozen
 * bytes: node:crypto's per-call object setup costs several times the two compressions they need,
 * and here HMAC keeps the key's inner and outer midstates, so a tag of a message under 56 bytes
 * is two compressions.
 *
 * Constant time: only 32-bit additions, xors, ands and fixed rotations on the data; no table is
 * indexed by secret bytes (K is indexed by the round number) and no branch depends on them, so
 * JavaScript runs the same operations whatever the key or message.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

export const SHA256_BLOCK_BYTES = 64;
export const SHA256_BYTES = 32;

/** Message schedule, reused: the functions below are synchronous and never re-entered. */
const W = new Int32Array(64);
/** The padded tail of a message: at most two blocks. */
const TAIL = new Uint8Array(2 * SHA256_BLOCK_BYTES);

/**
 * One compression of the block in W[0..16) into state[at..at+8). Every sum is cut to 32 bits
 * pairwise, `(x + y) | 0`, which V8 compiles to plain 32-bit adds with no overflow check.
 */
function compress(state: Int32Array, at: number): void {
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15] as number;
    const w2 = W[i - 2] as number;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (((s1 + (W[i - 7] as number)) | 0) + ((s0 + (W[i - 16] as number)) | 0)) | 0;
  }
  let a = state[at] as number, b = state[at + 1] as number, c = state[at + 2] as number, d = state[at + 3] as number;
  let e = state[at + 4] as number, f = state[at + 5] as number, g = state[at + 6] as number, h = state[at + 7] as number;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = g ^ (e & (f ^ g));
    const t1 = (((h + S1) | 0) + ((ch + (((K[i] as number) + (W[i] as number)) | 0)) | 0)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) | (c & (a | b));
    h = g; g = f; f = e; e = (d + t1) | 0;
    d = c; c = b; b = a; a = (t1 + ((S0 + maj) | 0)) | 0;
  }
  state[at] = (state[at] as number) + a;
  state[at + 1] = (state[at + 1] as number) + b;
  state[at + 2] = (state[at + 2] as number) + c;
  state[at + 3] = (state[at + 3] as number) + d;
  state[at + 4] = (state[at + 4] as number) + e;
  state[at + 5] = (state[at + 5] as number) + f;
  state[at + 6] = (state[at + 6] as number) + g;
  state[at + 7] = (state[at + 7] as number) + h;
}

function loadBlock(bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++, offset += 4) {
    W[i] = ((bytes[offset] as number) << 24) | ((bytes[offset + 1] as number) << 16)
      | ((bytes[offset + 2] as number) << 8) | (bytes[offset + 3] as number);
  }
}

/**
 * Hashes message[start..end) into state[at..at+8), which holds the midstate after
 * `prefixBytes` bytes (a multiple of 64) already compressed: 0 with the IV for plain SHA-256,
 * 64 for HMAC. Ranges rather than subarrays: a view costs an allocation per call.
 */
function absorb(state: Int32Array, at: number, prefixBytes: number, message: Uint8Array, start: number, end: number): void {
  if (!isRange(message, start, end)) throw new RangeError('message range out of bounds');
  const length = end - start;
  const full = start + length - (length % SHA256_BLOCK_BYTES);
  for (let offset = start; offset < full; offset += SHA256_BLOCK_BYTES) {
    loadBlock(message, offset);
    compress(state, at);
  }
  const rest = end - full;
  const tailBytes = rest < 56 ? SHA256_BLOCK_BYTES : 2 * SHA256_BLOCK_BYTES;
  for (let i = 0; i < rest; i++) TAIL[i] = message[full + i] as number;
  TAIL[rest] = 0x80;
  TAIL.fill(0, rest + 1, tailBytes - 8);
  // The bit length, big-endian in the last 8 bytes; split since it can pass 2^32.
  const bits = (prefixBytes + length) * 8;
  const high = Math.floor(bits / 0x100000000);
  const low = bits >>> 0;
  for (let i = 0; i < 4; i++) {
    TAIL[tailBytes - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
    TAIL[tailBytes - 4 + i] = (low >>> (24 - 8 * i)) & 0xff;
  }
  for (let offset = 0; offset < tailBytes; offset += SHA256_BLOCK_BYTES) {
    loadBlock(TAIL, offset);
    compress(state, at);
  }
}

/** Writes the first `length` bytes of the digest in state[0..8) to out[offset..). */
function emit(state: Int32Array, out: Uint8Array, offset: number, length: number): void {
  for (let i = 0; i < length; i++) out[offset + i] = ((state[i >> 2] as number) >>> (24 - 8 * (i & 3))) & 0xff;
}

const STATE = new Int32Array(8);

/** SHA-256 of message[start..end); the digest's first `length` bytes go to out[offset..). */
export function portableSha256Into(
  message: Uint8Array, start: number, end: number, out: Uint8Array, offset: number, length: number,
): void {
  for (let i = 0; i < 8; i++) STATE[i] = IV[i] as number;
  absorb(STATE, 0, 0, message, start, end);
  emit(STATE, out, offset, length);
}

/** Per key: the inner midstate (after key ⊕ ipad) then the outer one (after key ⊕ opad). */
const midstates = new WeakMap<Uint8Array, Int32Array>();

function midstatesOf(key: Uint8Array): Int32Array {
  let mid = midstates.get(key);
  if (mid) return mid;
  const block = new Uint8Array(SHA256_BLOCK_BYTES);
  if (key.length > SHA256_BLOCK_BYTES) portableSha256Into(key, 0, key.length, block, 0, SHA256_BYTES);
  else block.set(key);
  mid = new Int32Array(16);
  mid.set(IV, 0);
  mid.set(IV, 8);
  for (const [at, pad] of [[0, 0x36], [8, 0x5c]] as const) {
    for (let i = 0; i < 16; i++) {
      const o = 4 * i;
      W[i] = (((block[o] as number) ^ pad) << 24) | (((block[o + 1] as number) ^ pad) << 16)
        | (((block[o + 2] as number) ^ pad) << 8) | ((block[o + 3] as number) ^ pad);
    }
    compress(mid, at);
  }
  block.fill(0);
  midstates.set(key, mid);
  return mid;
}

const INNER = new Int32Array(8);

/**
 * HMAC-SHA-256 of message[start..end) under `key`; the MAC's first `length` bytes go to
 * out[offset..). The key's midstates are cached by the key object, so keys must not be
 * modified after first use.
 */
export function portableHmacSha256Into(
  key: Uint8Array, message: Uint8Array, start: number, end: number, out: Uint8Array, offset: number, length: number,
): void {
  const mid = midstatesOf(key);
  for (let i = 0; i < 8; i++) INNER[i] = mid[i] as number;
  absorb(INNER, 0, SHA256_BLOCK_BYTES, message, start, end);
  // The outer message is the 32-byte inner digest: one padded block, built in W directly.
  for (let i = 0; i < 8; i++) {
    STATE[i] = mid[8 + i] as number;
    W[i] = INNER[i] as number;
    W[8 + i] = 0;
  }
  W[8] = 0x80000000 | 0;
  W[15] = (SHA256_BLOCK_BYTES + SHA256_BYTES) * 8;
  compress(STATE, 0);
  emit(STATE, out, offset, length);
}

const selected = nativeDigests ? nativeDigestFunctions(nativeDigests) : undefined;

/** SHA-256 of message[start..end); the digest's first `length` bytes go to out[offset..). */
export const sha256Into = selected?.sha256Into ?? portableSha256Into;

/**
 * HMAC-SHA-256 of message[start..end) under `key`; the MAC's first `length` bytes go to
 * out[offset..). Keys must not be modified after first use (their midstates are kept).
 */
export const hmacSha256Into = selected?.hmacSha256Into ?? portableHmacSha256Into;

/**
 * The native addon's handle for an HMAC key (its midstates), where HMAC runs natively: for another
 * native call that MACs under the key. The same rule holds: the key must not change after first use.
 */
export const nativeMacKeyOf = selected?.macKeyOf;

export function sha256(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(SHA256_BYTES);
  sha256Into(message, 0, message.length, out, 0, SHA256_BYTES);
  return out;
}

export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  const out = new Uint8Array(SHA256_BYTES);
  hmacSha256Into(key, message, 0, message.length, out, 0, SHA256_BYTES);
  return out;
}
