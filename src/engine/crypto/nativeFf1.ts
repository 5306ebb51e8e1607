import { nativePart, type NativeStatus } from './nativeAddon.js';

/**
 * Native FF1 (native/crypto: the Feistel rounds in C over OpenSSL's AES), chosen once, here, when
 * the module loads. `nativeFf1` is the addon, or undefined when it is not built (no compiler at
 * install time, `npm ci --ignore-scripts`), when PGVEIL_NATIVE=0, or when it fails its
 * known-answer check: then FF1 runs in TypeScript, with identical outputs. The only trace is one
 * line under NODE_DEBUG=pgveil (nativeAddon.ts).
 */

/** An AES key schedule held by the addon; wiped when the handle is garbage-collected. */
export interface NativeFf1Context {
  readonly brand: 'NativeFf1Context';
}

export interface NativeFf1 {
  /**
   * The longest radix-256 string `crypt` takes as bytes (halves past 64-bit integers); absent in
   * builds without that path, which then leave such strings to TypeScript.
   */
  readonly maxBytes?: number;
  /** The key (16, 24 or 32 bytes) is read, not kept: only OpenSSL's key schedule is. */
  createContext(key: Uint8Array): NativeFf1Context;
  /**
   * FF1 over count = input.length / n values of n numerals, results into `output`. Every value's
   * tweak is all of `tweakBytes` when `tweakEnds` is undefined, else value j's is
   * tweakBytes[tweakEnds[j-1] .. tweakEnds[j]). Needs radix^(n - n/2) < 2^53 (NATIVE_FF1_MAX_MODULUS),
   * or radix 256 and n <= maxBytes (bytes: halves of any length, no integers).
   */
  crypt(
    context: NativeFf1Context, radix: number, n: number, input: Uint16Array, output: Uint16Array,
    tweakBytes: Uint8Array, tweakEnds: Uint32Array | undefined, decrypt: boolean,
  ): void;
  /**
   * `crypt` in radix 2 of input.length values of n bits (20 <= n <= 32), each held in an integer
   * below 2^n, most significant bit first, all under the tweak `tweakBytes`. Absent in older builds.
   */
  readonly cryptBits?: (
    context: NativeFf1Context, n: number, input: Uint32Array, output: Uint32Array, tweakBytes: Uint8Array, decrypt: boolean,
  ) => void;
  /**
   * FF1 radix 10 under `tweakBytes` over the digits of the fields bytes[starts[i], starts[i] +
   * lengths[i]) with handled[i] = 0 that spell `template` (0 a digit place), written back in
   * place (with `luhn` the last digit is a Luhn check digit, kept in its state); handled[i] = 1
   * for each; returns how many. Absent in older builds.
   */
  readonly cryptDigitsInPlace?: (
    context: NativeFf1Context, template: Uint8Array, luhn: boolean, tweakBytes: Uint8Array, decrypt: boolean,
    bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, handled: Uint8Array,
  ) => number;
}

/** radix^v must stay below this for the addon (its halves are 64-bit integers), but see maxBytes. */
export const NATIVE_FF1_MAX_MODULUS = 2 ** 53;

/** Why the addon is or is not in use, for tests and diagnostics. */
export type NativeFf1Status = NativeStatus;

/**
 * The check an addon passes before it is used: NIST SP 800-38G FF1 sample 8 (AES-256, radix 10,
 * tweak "9876543210"), both ways, and a radix-2 answer under the same key and tweak (the
 * TypeScript FF1's and @noble/ciphers'); where the build has cryptBits or cryptDigitsInPlace, that
 * they agree with crypt; where it has the byte path, BYTES_SAMPLES too (within its limit, which
 * is at least the first).
 */
export function ff1AddonPassesKnownAnswer(addon: NativeFf1): boolean {
  try {
    const key = Buffer.from('2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94', 'hex');
    const context = addon.createContext(key);
    key.fill(0);
    const tweak = Buffer.from('39383736353433323130', 'hex');
    /** The ciphertext's numerals, comma-separated, when decrypting it gives `plain` back. */
    const roundTrip = (radix: number, plain: Uint16Array): string | undefined => {
      const cipher = new Uint16Array(plain.length);
      addon.crypt(context, radix, plain.length, plain, cipher, tweak, undefined, false);
      const back = new Uint16Array(plain.length);
      addon.crypt(context, radix, plain.length, cipher, back, tweak, undefined, true);
      return back.join() === plain.join() ? cipher.join() : undefined;
    };
    if (roundTrip(10, Uint16Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])) !== '1,0,0,1,6,2,3,4,6,3') return false;
    // Radix 2 (power-of-two moduli, reduced without a divide), 22 bits as a date's day number: the TypeScript FF1's answer.
    if (roundTrip(2, Uint16Array.from('0100100100100100100100', Number)) !== Array.from('0110000010100010001100').join()) return false;
    if (addon.cryptBits !== undefined && !bitsAgreeWithNumerals(addon, context, tweak)) return false;
    if (addon.cryptDigitsInPlace !== undefined && !digitsAgreeWithNumerals(addon, context, tweak)) return false;
    const maxBytes = byteLimitOf(addon);
    return maxBytes === undefined || BYTES_SAMPLES.every((sample) => sample.length > maxBytes
      || roundTrip(256, Uint16Array.from({ length: sample.length }, (_, i) => i)) === Array.from(Buffer.from(sample.hex, 'hex')).join());
  } catch {
    return false;
  }
}

/**
 * FF1 of bytes 0..length-1 in radix 256 under sample 8's key and tweak, from @noble/ciphers: 40
 * (even, one chained Q block, two S blocks) and 127 (odd: NUM(B) right-aligned; five S blocks).
 */
const BYTES_SAMPLES = [
  { length: 40, hex: 'cb571aa3128f81c23f70a3cc5339c2e44d00cdbc96a43c4bbbdd66ec3011cb060e6cbb6649dbea5c' },
  {
    length: 127,
    hex: '1894196d74b2ad486763520a4461ecb7c0c20b17ea86a60d5a66ad08f7dd5b6f2f500e393b9e8c5d1801bb22884b0b29'
      + 'dfa8a2b893018c33153ab7b80b3e66f1d731a98b2f149c848dd14f9e8de1c56b419f601eb28303717ef2ae9f49d8c6a1'
      + '9cd29a6142b57b1f5119806c7e7ec6e5716ff1f1962d69e9f1b129f293dfc5',
  },
];

/** cryptBits gives what crypt gives for the same bits as radix-2 numerals (22 and 32 bits, both ways). */
function bitsAgreeWithNumerals(addon: NativeFf1, context: NativeFf1Context, tweak: Uint8Array): boolean {
  const cryptBits = addon.cryptBits;
  if (typeof cryptBits !== 'function') return false;
  for (const n of [22, 32]) {
    const values = Uint32Array.of(0, 1, 0x2a5f3c % 2 ** n, 2 ** n - 1);
    for (const decrypt of [false, true]) {
      const viaBits = new Uint32Array(values.length);
      cryptBits(context, n, values, viaBits, tweak, decrypt);
      const numerals = new Uint16Array(values.length * n);
      values.forEach((value, j) => {
        for (let p = 0; p < n; p++) numerals[j * n + p] = Math.floor(value / 2 ** (n - 1 - p)) % 2;
      });
      const out = new Uint16Array(numerals.length);
      addon.crypt(context, 2, n, numerals, out, tweak, undefined, decrypt);
      for (let j = 0; j < values.length; j++) {
        let value = 0;
        for (let p = 0; p < n; p++) value = value * 2 + (out[j * n + p] as number);
        if (value !== viaBits[j]) return false;
      }
    }
  }
  return true;
}

/**
 * cryptDigitsInPlace gives what crypt gives for the same digits, both ways, with and without a
 * Luhn check digit, and leaves alone a field of another spelling and one already handled.
 */
function digitsAgreeWithNumerals(addon: NativeFf1, context: NativeFf1Context, tweak: Uint8Array): boolean {
  const cryptDigits = addon.cryptDigitsInPlace;
  if (typeof cryptDigits !== 'function') return false;
  const luhnDouble = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
  const luhnOf = (body: readonly number[]): number => {
    const sum = body.reduceRight((total, d, j) => total + ((body.length - 1 - j) % 2 === 0 ? (luhnDouble[d] as number) : d), 0);
    return (10 - (sum % 10)) % 10;
  };
  for (const [spelling, luhn] of [['078-05-1120', false], ['4111 1111 1111 1112', true]] as const) {
    const template = Uint8Array.from(spelling, (c) => (c >= '0' && c <= '9' ? 0 : c.charCodeAt(0)));
    const fields = [spelling, spelling.replace(/\d/g, '7'), spelling.replace(/[ -]/g, '/'), spelling];
    const bytes = Buffer.from(fields.join(''), 'latin1');
    const starts = Int32Array.from(fields, (_, i) => i * spelling.length);
    const lengths = new Int32Array(fields.length).fill(spelling.length);
    for (const decrypt of [false, true]) {
      const handled = Uint8Array.of(0, 0, 0, 1);
      const copy = Buffer.from(bytes);
      if (cryptDigits(context, template, luhn, tweak, decrypt, copy, starts, lengths, handled) !== 2 || handled.join() !== '1,1,0,1') return false;
      if (!copy.subarray(2 * spelling.length).equals(bytes.subarray(2 * spelling.length))) return false;
      for (let i = 0; i < 2; i++) {
        const digits = Array.from((fields[i] as string).replace(/\D/g, ''), Number);
        const body = luhn ? digits.slice(0, -1) : digits;
        const out = new Uint16Array(body.length);
        addon.crypt(context, 10, body.length, Uint16Array.from(body), out, tweak, undefined, decrypt);
        const expected = luhn ? [...out, (luhnOf([...out]) + (digits.at(-1) as number) - luhnOf(body) + 10) % 10] : [...out];
        let k = 0;
        const want = Array.from(fields[i] as string, (c) => (c >= '0' && c <= '9' ? String(expected[k++]) : c)).join('');
        if (copy.toString('latin1', i * spelling.length, (i + 1) * spelling.length) !== want) return false;
      }
    }
  }
  return true;
}

/**
 * The builds with the byte path say how long a string it takes (128); anything else means none.
 * At least 40, so that the first sample always checks the path before it is used.
 */
function byteLimitOf(addon: NativeFf1): number | undefined {
  const limit = addon.maxBytes;
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 40 && limit <= 128 ? limit : undefined;
}

const selected = nativePart<NativeFf1>('FF1', ['createContext', 'crypt'], ff1AddonPassesKnownAnswer);

export const nativeFf1: NativeFf1 | undefined = selected.part;
export const nativeFf1Status: NativeFf1Status = selected.status;

/** The longest radix-256 string an addon takes as bytes, 0 for none (an older or a bogus build). */
export function nativeByteLimit(addon: NativeFf1): number {
  return byteLimitOf(addon) ?? 0;
}
