import { AES_BLOCK_BYTES, AesEcb } from './aesEcb.js';
import { feistelArithmeticFor, loadFeistelHalves } from './ff1Halves.js';
import { NativeFf1Rounds } from './ff1NativeRounds.js';
import {
  addModulo, numberModulo, reductionChunkBytes, xorNumberBigEndian,
} from './ff1NumberHalves.js';
import {
  FF1_MAX_RADIX, FF1_MIN_DOMAIN_SIZE, feistelOutputBytes, minLengthForDomain, numeralStringBytes,
} from './ff1Params.js';
import type { Tweak, Tweaks } from './fpeCipher.js';
import { sharedTweakOf, xorTweakBlock } from './ff1TweakBlocks.js';
import { nativeFf1, type NativeFf1, type NativeFf1Context } from './nativeFf1.js';
import { numberToNumerals, numeralsToNumber } from './numerals.js';

const ROUNDS = 10;
/** Keeps (length, tweak length) packable into one safe-integer group key. */
const MAX_TWEAK_BYTES = 2 ** 21 - 1;
const GROUP_KEY_LENGTH_FACTOR = 2 ** 21;
const P_CACHE_LIMIT = 1024;

/**
 * NIST SP 800-38G FF1 over node:crypto AES (AES-128/192/256 by key length), radix 2..65536,
 * numerals as Uint16Array, batched: values are grouped by (length, tweak length) and each
 * Feistel round of a group is one AES-ECB call over the blocks of all its values. CBC-MAC
 * chaining runs per block index across the batch, so the PRF is exactly the standard's.
 *
 * Where the native addon is loaded (nativeFf1.ts), groups whose halves fit 64-bit integers, and
 * radix-256 groups up to its byte limit, run all their rounds there instead, with identical outputs.
 *
 * Domains must satisfy radix^length >= 10^6 (SP 800-38G Rev.1); smaller ones are a RangeError.
 */
export class FF1 {
  readonly radix: number;
  /** The shortest length allowed: radix^minLength >= 10^6. */
  readonly minLength: number;
  private readonly aes: AesEcb;
  private readonly native: NativeFf1Rounds | undefined;
  /** CIPH_K(P) by (length, tweak length): P depends on nothing else for a fixed radix. */
  private readonly encryptedP = new Map<number, Buffer>();
  /** The round block of a one-value call: the code is synchronous, so one serves every call. */
  private readonly oneBlock = new Uint8Array(AES_BLOCK_BYTES);
  private readonly oneBase = new Uint8Array(AES_BLOCK_BYTES);
  /** cryptOne's sizes by (length, tweak length), undefined where it does not apply. */
  private readonly oneValueShapes = new Map<number, OneValueShape | undefined>();

  /** `addon`: the native rounds to use where they apply; null for TypeScript only (tests, comparisons). */
  constructor(key: Uint8Array, radix: number, addon: NativeFf1 | null = nativeFf1 ?? null) {
    if (!Number.isInteger(radix) || radix < 2 || radix > FF1_MAX_RADIX) {
      throw new RangeError(`FF1 radix must be an integer from 2 to ${FF1_MAX_RADIX}; got ${String(radix)}`);
    }
    this.radix = radix;
    this.minLength = Math.max(2, minLengthForDomain(radix, FF1_MIN_DOMAIN_SIZE));
    this.aes = new AesEcb(key);
    this.native = addon ? new NativeFf1Rounds(addon, key, radix) : undefined;
  }

  encrypt(values: readonly Uint16Array[], tweak: Tweaks): Uint16Array[] {
    return this.crypt(values, tweak, false);
  }

  decrypt(values: readonly Uint16Array[], tweak: Tweaks): Uint16Array[] {
    return this.crypt(values, tweak, true);
  }

  private crypt(values: readonly Uint16Array[], tweak: Tweaks, decrypt: boolean): Uint16Array[] {
    const count = values.length;
    const single = tweak instanceof Uint8Array ? tweak : undefined;
    const perValue = tweak instanceof Uint8Array ? undefined : tweak;
    if (perValue && perValue.length !== count) {
      throw new RangeError(`FF1 got ${perValue.length} tweaks for ${count} values: give one tweak, or one per value`);
    }
    if (count === 0) return [];

    // Validate, and find out whether the whole call is one group (the usual case).
    const firstLength = (values[0] as Uint16Array).length;
    const firstTweakLength = (single ?? (perValue?.[0] as Tweak)).length;
    let oneGroup = true;
    for (let j = 0; j < count; j++) {
      const x = values[j] as Uint16Array;
      this.checkNumerals(x);
      const tweakLength = single ? single.length : (perValue?.[j] as Tweak).length;
      if (tweakLength > MAX_TWEAK_BYTES) throw new RangeError(`FF1 tweaks are limited to ${MAX_TWEAK_BYTES} bytes`);
      if (x.length !== firstLength || tweakLength !== firstTweakLength) oneGroup = false;
    }
    if (oneGroup) return this.cryptGroup(values, tweak, decrypt);

    const groups = new Map<number, number[]>();
    for (let j = 0; j < count; j++) {
      const tweakLength = single ? single.length : (perValue?.[j] as Tweak).length;
      const key = (values[j] as Uint16Array).length * GROUP_KEY_LENGTH_FACTOR + tweakLength;
      const members = groups.get(key);
      if (members) members.push(j);
      else groups.set(key, [j]);
    }
    const out = new Array<Uint16Array>(count);
    for (const members of groups.values()) {
      const groupValues = members.map((j) => values[j] as Uint16Array);
      const groupTweak: Tweaks = single ?? members.map((j) => perValue?.[j] as Tweak);
      const results = this.cryptGroup(groupValues, groupTweak, decrypt);
      members.forEach((j, g) => { out[j] = results[g] as Uint16Array; });
    }
    return out;
  }

  /**
   * One value, written into `out` (x.length numerals, not x itself): what encrypt/decrypt([x],
   * tweak)[0] gives, without the batch's arrays. The caller's buffers are reused across calls, so
   * the native addon sees the same (already external) memory every time.
   */
  cryptInto(x: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): void {
    this.checkNumerals(x);
    if (tweak.length > MAX_TWEAK_BYTES) throw new RangeError(`FF1 tweaks are limited to ${MAX_TWEAK_BYTES} bytes`);
    if (out.length !== x.length || out === x) throw new RangeError('FF1 output must be another array of the input\'s length');
    const n = x.length;
    if (this.native?.inRange(n)) {
      this.native.cryptInto(x, tweak, decrypt, out);
      return;
    }
    const shape = this.oneValueShape(n, tweak.length);
    if (shape === undefined) {
      out.set(this.cryptGroup([x], tweak, decrypt)[0] as Uint16Array);
      return;
    }
    this.cryptOne(x, tweak, decrypt, shape.u, shape.b, shape.d, shape.roundByteAt, out);
  }

  /** The native addon's context of this key where it runs values of length n; undefined where TypeScript does. */
  nativeHandleFor(n: number): NativeFf1Context | undefined {
    return this.native?.inRange(n) ? this.native.handle : undefined;
  }

  /**
   * Radix 2 only: values of n bits each held in an integer (most significant bit first), one tweak,
   * into `out`: what cryptRun gives for the same bits, without a numeral per bit. False, with
   * nothing done, where only the numeral path runs (no native build, or n outside 20..32).
   */
  cryptBitsRun(n: number, input: Uint32Array, tweak: Tweak, decrypt: boolean, out: Uint32Array): boolean {
    if (out.length !== input.length || sharesMemory(out, input)) throw new RangeError('FF1 output must be another array of the input\'s length');
    if (tweak.length > MAX_TWEAK_BYTES) throw new RangeError(`FF1 tweaks are limited to ${MAX_TWEAK_BYTES} bytes`);
    return this.native?.cryptBitsRun(n, input, tweak, decrypt, out) ?? false;
  }

  /**
   * Radix 10 only: FpeCipher.cryptDigitsInPlace with `tweak` as FF1 takes it; false, with nothing
   * done, where only the numeral paths run (no native build).
   */
  cryptDigitsInPlace(
    template: Uint8Array, luhn: boolean, tweak: Tweak, decrypt: boolean, bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, handled: Uint8Array,
  ): boolean {
    if (tweak.length > MAX_TWEAK_BYTES) throw new RangeError(`FF1 tweaks are limited to ${MAX_TWEAK_BYTES} bytes`);
    return this.native?.cryptDigitsInPlace(template, luhn, tweak, decrypt, bytes, starts, lengths, handled) ?? false;
  }

  /**
   * `count` values of n numerals laid end to end in `input` (count = input.length / n), one
   * tweak for all, into `out` (another array of the same length): what encrypt / decrypt give
   * each, without an array per value. The proxy's read path hands a whole column this way.
   */
  cryptRun(n: number, input: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): void {
    const total = input.length;
    if (!Number.isInteger(n) || n < 1 || total % n !== 0) throw new RangeError('FF1 run: the input is not whole values of n numerals');
    if (out.length !== total || sharesMemory(out, input)) throw new RangeError('FF1 output must be another array of the input\'s length');
    if (tweak.length > MAX_TWEAK_BYTES) throw new RangeError(`FF1 tweaks are limited to ${MAX_TWEAK_BYTES} bytes`);
    this.requireLength(n);
    if (total === 0) return;
    if (this.native?.inRange(n)) {
      // The addon checks every numeral against the radix itself, and throws a RangeError.
      this.native.cryptRun(n, input, tweak, decrypt, out);
      return;
    }
    const count = total / n;
    const values = new Array<Uint16Array>(count);
    for (let j = 0; j < count; j++) this.checkNumerals((values[j] = input.subarray(j * n, (j + 1) * n)));
    const results = this.cryptGroup(values, tweak, decrypt);
    for (let j = 0; j < count; j++) {
      const result = results[j] as Uint16Array;
      out.set(result, j * n);
      result.fill(0); // a decrypt's plaintext numerals: `out` is the only copy kept
    }
  }

  /** cryptOne's sizes for (n, t), or undefined where it does not apply; cached (lengths are few). */
  private oneValueShape(n: number, t: number): OneValueShape | undefined {
    const key = n * GROUP_KEY_LENGTH_FACTOR + t;
    const known = this.oneValueShapes.get(key);
    if (known !== undefined || this.oneValueShapes.has(key)) return known;
    const u = n >> 1;
    const b = numeralStringBytes(this.radix, n - u);
    const d = feistelOutputBytes(b);
    const pad = (((-t - b - 1) % AES_BLOCK_BYTES) + AES_BLOCK_BYTES) % AES_BLOCK_BYTES;
    const roundByteAt = t + pad;
    const numBInFirstBlock = Math.min(b, AES_BLOCK_BYTES - 1 - (roundByteAt % AES_BLOCK_BYTES));
    const fits = b === numBInFirstBlock && Math.ceil(d / AES_BLOCK_BYTES) === 1 && feistelArithmeticFor(this.radix, n) === 'number';
    const shape = fits ? { u, b, d, roundByteAt } : undefined;
    if (this.oneValueShapes.size >= P_CACHE_LIMIT) this.oneValueShapes.clear();
    this.oneValueShapes.set(key, shape);
    return shape;
  }

  private requireLength(n: number): void {
    if (n < this.minLength) {
      throw new RangeError(`FF1 radix ${this.radix} needs at least ${this.minLength} numerals (radix^length >= ${FF1_MIN_DOMAIN_SIZE})`);
    }
  }

  private checkNumerals(x: Uint16Array): void {
    this.requireLength(x.length);
    if (this.radix === FF1_MAX_RADIX) return;
    for (let p = 0; p < x.length; p++) {
      if ((x[p] as number) >= this.radix) throw new RangeError(`FF1 numeral out of range for radix ${this.radix}`);
    }
  }

  /** All values share length n and tweak length t. */
  private cryptGroup(values: readonly Uint16Array[], tweak: Tweaks, decrypt: boolean): Uint16Array[] {
    const count = values.length;
    const n = (values[0] as Uint16Array).length;
    const sharedTweak = sharedTweakOf(tweak);
    if (this.native?.inRange(n)) return this.native.cryptGroup(values, tweak, sharedTweak, decrypt);
    const u = n >> 1;
    const v = n - u;
    const b = numeralStringBytes(this.radix, v);
    const d = feistelOutputBytes(b);
    const t = sharedTweak ? sharedTweak.length : (tweak[0] as Tweak).length;
    // Q = T || [0]^pad || [i]_1 || [NUM(B)]_b, a whole number of blocks.
    const pad = (((-t - b - 1) % AES_BLOCK_BYTES) + AES_BLOCK_BYTES) % AES_BLOCK_BYTES;
    const roundByteAt = t + pad;
    const roundBlockOffset = roundByteAt % AES_BLOCK_BYTES;
    // Bytes of NUM(B) in the block that holds [i]; the rest fill whole blocks after it.
    const numBInFirstBlock = Math.min(b, AES_BLOCK_BYTES - 1 - roundBlockOffset);
    const laterBlocks = (b - numBInFirstBlock) / AES_BLOCK_BYTES;
    const sBlocks = Math.ceil(d / AES_BLOCK_BYTES);

    if (count === 1 && laterBlocks === 0 && sBlocks === 1 && feistelArithmeticFor(this.radix, n) === 'number') {
      const x = values[0] as Uint16Array;
      return [this.cryptOne(x, sharedTweak ?? (tweak[0] as Tweak), decrypt, u, b, d, roundByteAt, new Uint16Array(n))];
    }
    const base = this.roundIndependentChain(values.length, tweak, sharedTweak, n, u, t, roundByteAt);
    const halves = loadFeistelHalves(values, this.radix, u, v, decrypt);
    // Plain typed arrays: for the small batches of a proxy (one to a few values) they cost far less
    // than Buffer.allocUnsafe, whose pool refills dominated a single-value call.
    const numB = new Uint8Array(laterBlocks > 0 ? count * b : 0);
    const blocks = new Uint8Array(count * AES_BLOCK_BYTES);
    const extension = sBlocks > 1 ? Buffer.allocUnsafe(count * (sBlocks - 1) * AES_BLOCK_BYTES) : undefined;
    const longS = sBlocks > 1 ? Buffer.allocUnsafe(count * sBlocks * AES_BLOCK_BYTES) : undefined;

    for (let round = 0; round < ROUNDS; round++) {
      const i = decrypt ? ROUNDS - 1 - round : round;
      const m = i % 2 === 0 ? u : v;
      // The block holding [i]: the chain value (xor the constant bytes before [i]), xor the round bytes.
      blocks.set(base);
      for (let o = roundBlockOffset; o < blocks.length; o += AES_BLOCK_BYTES) blocks[o] = (blocks[o] as number) ^ i;
      if (laterBlocks === 0) {
        halves.xorNumB(blocks, roundBlockOffset + 1, AES_BLOCK_BYTES, b);
      } else {
        numB.fill(0);
        halves.xorNumB(numB, 0, b, b);
        for (let j = 0, o = roundBlockOffset + 1, src = 0; j < count; j++, o += AES_BLOCK_BYTES, src += b) {
          for (let x = 0; x < numBInFirstBlock; x++) blocks[o + x] = (blocks[o + x] as number) ^ (numB[src + x] as number);
        }
      }
      let r = this.aes.encryptBlocks(blocks);
      for (let later = 0; later < laterBlocks; later++) {
        const from = numBInFirstBlock + later * AES_BLOCK_BYTES;
        for (let j = 0, o = 0; j < count; j++, o += AES_BLOCK_BYTES) {
          const src = j * b + from;
          for (let x = 0; x < AES_BLOCK_BYTES; x++) blocks[o + x] = (r[o + x] as number) ^ (numB[src + x] as number);
        }
        r = this.aes.encryptBlocks(blocks);
      }
      if (extension && longS) {
        this.extendS(r, count, sBlocks, extension, longS);
        halves.mixRound(longS, sBlocks * AES_BLOCK_BYTES, d, m, decrypt);
      } else {
        halves.mixRound(r, AES_BLOCK_BYTES, d, m, decrypt);
      }
    }
    return halves.numerals();
  }

  /**
   * cryptGroup for one value whose halves fit plain numbers (path (a)) and whose Q is one block:
   * the proxy's shape. The same steps with scalars and two reused blocks, so that a call costs
   * little beyond its ten AES calls; cryptGroup is the reference it must equal.
   */
  private cryptOne(
    x: Uint16Array, tweak: Tweak, decrypt: boolean, u: number, b: number, d: number, roundByteAt: number, out: Uint16Array,
  ): Uint16Array {
    const radix = this.radix;
    const n = x.length;
    const v = n - u;
    const roundBlockOffset = roundByteAt % AES_BLOCK_BYTES;
    const constantBlocks = Math.floor(roundByteAt / AES_BLOCK_BYTES);
    let base: Uint8Array;
    if (constantBlocks === 0) {
      // Q's constant bytes (tweak, padding) all lie in the round block: no AES call for them.
      base = this.oneBase;
      xorTweakBlock(base, 0, this.encryptedPFor(n, u, tweak.length), 0, tweak, 0, roundBlockOffset);
    } else {
      base = this.roundIndependentChain(1, tweak, tweak, n, u, tweak.length, roundByteAt);
    }
    const modulusU = radix ** u;
    const modulusV = radix ** v;
    const inverseU = 1 / modulusU;
    const inverseV = 1 / modulusV;
    const chunkU = reductionChunkBytes(modulusU);
    const chunkV = reductionChunkBytes(modulusV);
    const first = numeralsToNumber(x, 0, u, radix);
    const second = numeralsToNumber(x, u, n, radix);
    // Decryption runs the rounds backwards from A = X[u..n), B = X[0..u) (see FeistelHalves).
    let left = decrypt ? second : first;
    let right = decrypt ? first : second;
    const block = this.oneBlock;
    for (let round = 0; round < ROUNDS; round++) {
      const i = decrypt ? ROUNDS - 1 - round : round;
      const even = i % 2 === 0;
      block.set(base);
      block[roundBlockOffset] = (block[roundBlockOffset] as number) ^ i;
      xorNumberBigEndian(block, roundBlockOffset + 1, right, b);
      const s = this.aes.encryptBlocks(block);
      const modulus = even ? modulusU : modulusV;
      const y = numberModulo(s, 0, d, modulus, even ? inverseU : inverseV, even ? chunkU : chunkV);
      const c = addModulo(left, y, modulus, decrypt);
      left = right;
      right = c;
    }
    numberToNumerals(decrypt ? right : left, radix, out, 0, u);
    numberToNumerals(decrypt ? left : right, radix, out, u, v);
    return out;
  }

  /**
   * The part of the CBC-MAC that no round changes: Y = CIPH(P), chained through the blocks of Q
   * that hold only tweak and padding, then xored with the constant bytes (tweak tail, padding)
   * of the block that holds [i]. One 16-byte block per value.
   */
  private roundIndependentChain(
    count: number, tweak: Tweaks, sharedTweak: Tweak | undefined, n: number, u: number, t: number, roundByteAt: number,
  ): Uint8Array {
    const constantBlocks = Math.floor(roundByteAt / AES_BLOCK_BYTES);
    const tail = roundByteAt % AES_BLOCK_BYTES;
    const y0 = this.encryptedPFor(n, u, t);
    const base = new Uint8Array(count * AES_BLOCK_BYTES);
    if (sharedTweak) {
      let chain: Uint8Array = y0;
      const block = new Uint8Array(AES_BLOCK_BYTES);
      for (let q = 0; q < constantBlocks; q++) {
        xorTweakBlock(block, 0, chain, 0, sharedTweak, q * AES_BLOCK_BYTES, AES_BLOCK_BYTES);
        chain = this.aes.encryptBlocks(block);
      }
      xorTweakBlock(block, 0, chain, 0, sharedTweak, constantBlocks * AES_BLOCK_BYTES, tail);
      if (count === 1) return block;
      for (let o = 0; o < base.length; o += AES_BLOCK_BYTES) base.set(block, o);
      return base;
    }
    const tweaks = tweak as readonly Tweak[];
    let chain: Uint8Array = new Uint8Array(count * AES_BLOCK_BYTES);
    for (let o = 0; o < chain.length; o += AES_BLOCK_BYTES) chain.set(y0, o);
    for (let q = 0; q < constantBlocks; q++) {
      for (let j = 0; j < count; j++) {
        const o = j * AES_BLOCK_BYTES;
        xorTweakBlock(base, o, chain, o, tweaks[j] as Tweak, q * AES_BLOCK_BYTES, AES_BLOCK_BYTES);
      }
      chain = this.aes.encryptBlocks(base);
    }
    for (let j = 0; j < count; j++) {
      const o = j * AES_BLOCK_BYTES;
      xorTweakBlock(base, o, chain, o, tweaks[j] as Tweak, constantBlocks * AES_BLOCK_BYTES, tail);
    }
    return base;
  }

  /** S = R || CIPH(R xor [1]_16) || CIPH(R xor [2]_16) ..., laid out per value in `longS`. */
  private extendS(r: Buffer, count: number, sBlocks: number, extension: Buffer, longS: Buffer): void {
    const extra = sBlocks - 1;
    for (let j = 0; j < count; j++) {
      const from = j * AES_BLOCK_BYTES;
      for (let e = 1; e <= extra; e++) {
        const o = (j * extra + e - 1) * AES_BLOCK_BYTES;
        r.copy(extension, o, from, from + AES_BLOCK_BYTES);
        extension.writeUInt32BE((extension.readUInt32BE(o + 12) ^ e) >>> 0, o + 12);
      }
    }
    const encrypted = this.aes.encryptBlocks(extension);
    const stride = sBlocks * AES_BLOCK_BYTES;
    for (let j = 0; j < count; j++) {
      r.copy(longS, j * stride, j * AES_BLOCK_BYTES, (j + 1) * AES_BLOCK_BYTES);
      encrypted.copy(longS, j * stride + AES_BLOCK_BYTES, j * extra * AES_BLOCK_BYTES, (j + 1) * extra * AES_BLOCK_BYTES);
    }
  }

  /** CIPH_K(P), P = [1]_1 [2]_1 [1]_1 [radix]_3 [10]_1 [u mod 256]_1 [n]_4 [t]_4. */
  private encryptedPFor(n: number, u: number, t: number): Buffer {
    const key = n * GROUP_KEY_LENGTH_FACTOR + t;
    let y0 = this.encryptedP.get(key);
    if (!y0) {
      const p = Buffer.alloc(AES_BLOCK_BYTES);
      p[0] = 1;
      p[1] = 2;
      p[2] = 1;
      p.writeUIntBE(this.radix, 3, 3);
      p[6] = 10;
      p[7] = u & 255;
      p.writeUInt32BE(n, 8);
      p.writeUInt32BE(t, 12);
      y0 = this.aes.encryptBlocks(p);
      if (this.encryptedP.size >= P_CACHE_LIMIT) this.encryptedP.clear();
      this.encryptedP.set(key, y0);
    }
    return y0;
  }

  toJSON(): string {
    return `[FF1 radix ${this.radix}]`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `FF1 { radix: ${this.radix} }`;
  }
}

interface OneValueShape {
  readonly u: number;
  readonly b: number;
  readonly d: number;
  readonly roundByteAt: number;
}

/** Whether two views overlap in memory: results written into one would overwrite numerals still to be read from the other. */
function sharesMemory(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}
