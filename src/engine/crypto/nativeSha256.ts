import { nativePart, type NativeStatus } from './nativeAddon.js';

/**
 * Native SHA-256 and HMAC-SHA-256 (native/crypto/digests.c, over OpenSSL's digests), chosen once
 * when the module loads, after known-answer checks; otherwise undefined and sha256.ts hashes in
 * TypeScript with identical outputs. A token's tag and whitening are three compressions: in C they
 * cost a fraction of the TypeScript ones, and the call allocates nothing on V8's heap.
 */

/** An HMAC key's inner and outer midstates, held by the addon; wiped when the handle is collected. */
export interface NativeMacKey {
  readonly brand: 'NativeMacKey';
}

export interface NativeDigests {
  /**
   * How the addon hashes in this process: OpenSSL's low-level SHA-256 (state copied on the stack),
   * or EVP (where those functions are missing, or PGVEIL_NATIVE_SHA256=evp). Same digests either way.
   */
  readonly sha256Path?: 'low-level' | 'evp';
  /** SHA-256 of message[0..length) into digest[0..32). */
  sha256(message: Uint8Array, length: number, digest: Uint8Array): void;
  /** The key is read, not kept: only its midstates are. */
  createMacKey(key: Uint8Array): NativeMacKey;
  /** HMAC-SHA-256 of message[0..length) into digest[0..32). */
  hmac(key: NativeMacKey, message: Uint8Array, length: number, digest: Uint8Array): void;
}

/** FIPS 180-4's "abc", and RFC 4231 test cases 2 (a short key) and 6 (a key hashed first). */
function passesKnownAnswer(digests: NativeDigests): boolean {
  try {
    const digest = new Uint8Array(32);
    const hex = (): string => Buffer.from(digest).toString('hex');
    digests.sha256(Buffer.from('abc'), 3, digest);
    if (hex() !== 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad') return false;
    const short = Buffer.from('what do ya want for nothing?');
    digests.hmac(digests.createMacKey(Buffer.from('Jefe')), short, short.length, digest);
    if (hex() !== '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843') return false;
    const long = Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First');
    digests.hmac(digests.createMacKey(new Uint8Array(131).fill(0xaa)), long, long.length, digest);
    return hex() === '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54';
  } catch {
    return false;
  }
}

const selected = nativePart<NativeDigests>('SHA-256', ['sha256', 'createMacKey', 'hmac'], passesKnownAnswer);

export const nativeDigests: NativeDigests | undefined = selected.part;
export const nativeDigestsStatus: NativeStatus = selected.status;

/** Whether [start, end) is a range of whole indexes within `message`: both implementations refuse anything else alike. */
export function isRange(message: Uint8Array, start: number, end: number): boolean {
  return Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= message.length;
}

/** The signatures of sha256.ts's functions, which these match byte for byte. */
export type Sha256Into = (message: Uint8Array, start: number, end: number, out: Uint8Array, offset: number, length: number) => void;
export type HmacSha256Into = (key: Uint8Array, ...rest: Parameters<Sha256Into>) => void;

/**
 * sha256Into and hmacSha256Into over `digests`. Messages go through one long-lived scratch array:
 * the callers' are small fresh arrays on V8's heap, which N-API would move to the C heap on every
 * call. They hold token bytes (encrypted bodies, tags) and scope names, never a plaintext value.
 */
export function nativeDigestFunctions(digests: NativeDigests): { sha256Into: Sha256Into; hmacSha256Into: HmacSha256Into; macKeyOf: (key: Uint8Array) => NativeMacKey } {
  const scratch = new Uint8Array(1024);
  const digest = new Uint8Array(32);
  const macKeys = new WeakMap<Uint8Array, NativeMacKey>();

  /** message[start..end) in scratch (or a view of it when it does not fit); returns the array to pass. */
  const staged = (message: Uint8Array, start: number, end: number): Uint8Array => {
    if (!isRange(message, start, end)) throw new RangeError('message range out of bounds');
    if (end - start > scratch.length) return message.subarray(start, end);
    for (let i = start; i < end; i++) scratch[i - start] = message[i] as number;
    return scratch;
  };
  /** The digest's first `length` bytes to out[offset..), as the TypeScript version writes them. */
  const emit = (out: Uint8Array, offset: number, length: number): void => {
    for (let i = 0; i < length; i++) out[offset + i] = i < 32 ? (digest[i] as number) : 0;
  };

  /** The addon's midstates of `key`, made on first use. Keys must not change after it: the midstates are kept by the key object. */
  const macKeyOf = (key: Uint8Array): NativeMacKey => {
    let macKey = macKeys.get(key);
    if (macKey === undefined) {
      macKey = digests.createMacKey(key);
      macKeys.set(key, macKey);
    }
    return macKey;
  };

  return {
    macKeyOf,
    sha256Into(message, start, end, out, offset, length) {
      digests.sha256(staged(message, start, end), end - start, digest);
      emit(out, offset, length);
    },
    hmacSha256Into(key, message, start, end, out, offset, length) {
      digests.hmac(macKeyOf(key), staged(message, start, end), end - start, digest);
      emit(out, offset, length);
    },
  };
}
