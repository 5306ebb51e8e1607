import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { ff1AddonPassesKnownAnswer, nativeFf1, nativeFf1Status, type NativeFf1 } from '../../../src/engine/crypto/nativeFf1.js';
import { loadedNativeFf1, nativeSwitchedOff } from './nativeAddon.js';

interface Ff1Sample {
  sample: number;
  key: string;
  radix: number;
  alphabet: string;
  tweak: string;
  plaintext: string;
  ciphertext: string;
}

const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/fpe-vectors.json', import.meta.url), 'utf8'),
) as { ff1: Ff1Sample[] };

const TWO_POW_53 = 2n ** 53n;

/** The shortest FF1 length (radix^n >= 10^6) and the longest the addon takes (radix^(n - n/2) < 2^53). */
function nativeLengths(radix: number): { min: number; max: number } {
  let min = 2;
  while (BigInt(radix) ** BigInt(min) < 1_000_000n) min++;
  let max = min;
  while (BigInt(radix) ** BigInt(max + 1 - ((max + 1) >> 1)) < TWO_POW_53) max++;
  return { min, max };
}

/** The addon with a count of its crypt calls, to prove a path really ran natively. */
function countingAddon(addon: NativeFf1): { addon: NativeFf1; calls: () => number } {
  let calls = 0;
  return {
    addon: {
      ...(addon.maxBytes === undefined ? {} : { maxBytes: addon.maxBytes }),
      createContext: (key) => addon.createContext(key),
      crypt: (...args) => {
        calls++;
        addon.crypt(...args);
      },
    },
    calls: () => calls,
  };
}

const radixArbitrary = fc.oneof(
  fc.integer({ min: 2, max: 65_536 }),
  fc.constantFrom(2, 3, 10, 16, 26, 36, 62, 255, 256, 1000, 65_535, 65_536),
);
const keyArbitrary = fc.constantFrom(16, 24, 32).chain((length) => fc.uint8Array({ minLength: length, maxLength: length }));

describe('native FF1 addon', () => {
  it(nativeSwitchedOff ? 'is off under PGVEIL_NATIVE=0' : 'is loaded (CI builds it; PGVEIL_NATIVE=0 only where no compiler exists)', () => {
    if (nativeSwitchedOff) {
      expect(nativeFf1Status).toBe('disabled');
      expect(nativeFf1).toBeUndefined();
    } else {
      expect(() => loadedNativeFf1()).not.toThrow();
      expect(nativeFf1Status).toBe('loaded');
    }
  });
});

describe.skipIf(nativeSwitchedOff)('native FF1 against TypeScript FF1', () => {
  it('gives the NIST SP 800-38G samples when called directly', () => {
    const addon = loadedNativeFf1();
    for (const s of fixture.ff1) {
      const context = addon.createContext(Buffer.from(s.key, 'hex'));
      const tweak = Buffer.from(s.tweak, 'hex');
      const plain = Uint16Array.from(s.plaintext, (ch) => s.alphabet.indexOf(ch));
      const cipher = new Uint16Array(plain.length);
      addon.crypt(context, s.radix, plain.length, plain, cipher, tweak, undefined, false);
      expect(Array.from(cipher, (x) => s.alphabet[x]).join('')).toBe(s.ciphertext);
      const back = new Uint16Array(plain.length);
      addon.crypt(context, s.radix, plain.length, cipher, back, tweak, undefined, true);
      expect(Array.from(back)).toEqual(Array.from(plain));
    }
  });

  it('matches TypeScript for random keys, radixes, lengths, tweaks and batches, both ways', () => {
    const addon = loadedNativeFf1();
    fc.assert(fc.property(
      keyArbitrary,
      radixArbitrary.chain((radix) => {
        const { min, max } = nativeLengths(radix);
        return fc.tuple(fc.constant(radix), fc.integer({ min, max }));
      }),
      fc.integer({ min: 1, max: 40 }),
      fc.uint8Array({ maxLength: 40 }),
      fc.boolean(),
      fc.integer(),
      (key, [radix, n], count, tweakBytes, perValue, seed) => {
        const values = Array.from({ length: count }, (_, j) =>
          Uint16Array.from({ length: n }, (_, p) => Math.abs(Math.imul(seed ^ (j * 131 + p), 2_654_435_761)) % radix));
        const tweak = perValue ? values.map((_, j) => tweakBytes.subarray(j % (tweakBytes.length + 1))) : tweakBytes;
        const counted = countingAddon(addon);
        const native = new FF1(key, radix, counted.addon);
        const typescript = new FF1(key, radix, null);
        const encrypted = native.encrypt(values, tweak);
        expect(counted.calls()).toBeGreaterThan(0);
        expect(encrypted.map((x) => Array.from(x))).toEqual(typescript.encrypt(values, tweak).map((x) => Array.from(x)));
        const decrypted = native.decrypt(encrypted, tweak);
        expect(decrypted.map((x) => Array.from(x))).toEqual(typescript.decrypt(encrypted, tweak).map((x) => Array.from(x)));
        expect(decrypted.map((x) => Array.from(x))).toEqual(values.map((x) => Array.from(x)));
        // Each value alone: the proxy's one-value call.
        const alone = native.encrypt([values[0] as Uint16Array], perValue ? [(tweak as Uint8Array[])[0] as Uint8Array] : tweak);
        expect(Array.from(alone[0] as Uint16Array)).toEqual(Array.from(encrypted[0] as Uint16Array));
      },
    ), { numRuns: 150 });
  });

  it('matches TypeScript at every length of radix 10 and of power-of-two radixes (halves reduced without a divide), both ways', () => {
    const addon = loadedNativeFf1();
    const key = new Uint8Array(32).map((_, i) => i * 11 + 1);
    const tweak = new Uint8Array([9, 8, 7]);
    for (const radix of [2, 4, 10, 16, 100, 256, 1024, 65_536]) {
      const { min, max } = nativeLengths(radix);
      for (let n = min; n <= max; n++) {
        const counted = countingAddon(addon);
        const native = new FF1(key, radix, counted.addon);
        const typescript = new FF1(key, radix, null);
        // Values whose rounds reach every residue size: all zeros, all top numerals, and a spread.
        const values = [0, radix - 1, -1].map((fill) => Uint16Array.from({ length: n }, (_, p) => (fill >= 0 ? fill : (p * 7919 + n) % radix)));
        const encrypted = native.encrypt(values, tweak);
        expect(encrypted.map((v) => Array.from(v)), `${radix}^${n}`).toEqual(typescript.encrypt(values, tweak).map((v) => Array.from(v)));
        expect(native.decrypt(encrypted, tweak).map((v) => Array.from(v))).toEqual(values.map((v) => Array.from(v)));
        expect(counted.calls()).toBe(2);
      }
    }
  });

  it('takes lengths up to radix^(n - n/2) < 2^53 and leaves longer ones to TypeScript', () => {
    const addon = loadedNativeFf1();
    const key = new Uint8Array(32).map((_, i) => i * 5 + 3);
    for (const radix of [2, 10, 36, 1000, 65_536]) {
      const { max } = nativeLengths(radix);
      for (const n of [max, max + 1, max + 2]) {
        const counted = countingAddon(addon);
        const native = new FF1(key, radix, counted.addon);
        const typescript = new FF1(key, radix, null);
        const values = [Uint16Array.from({ length: n }, (_, p) => (p * 7919 + 1) % radix)];
        const tweak = new Uint8Array([1, 2, 3]);
        expect(Array.from(native.encrypt(values, tweak)[0] as Uint16Array)).toEqual(Array.from(typescript.encrypt(values, tweak)[0] as Uint16Array));
        expect(counted.calls()).toBe(n === max ? 1 : 0);
      }
    }
  });

  it('runs radix 256 (token bodies) of every length up to 128 bytes natively, and longer in TypeScript, with the same outputs', () => {
    const addon = loadedNativeFf1();
    fc.assert(fc.property(
      keyArbitrary,
      fc.integer({ min: 3, max: 140 }),
      fc.integer({ min: 1, max: 40 }),
      fc.uint8Array({ maxLength: 40 }),
      fc.boolean(),
      fc.integer(),
      (key, n, count, tweakBytes, perValue, seed) => {
        const values = Array.from({ length: count }, (_, j) =>
          Uint16Array.from({ length: n }, (_, p) => Math.abs(Math.imul(seed ^ (j * 131 + p), 2_654_435_761)) % 256));
        const tweak = perValue ? values.map((_, j) => tweakBytes.subarray(j % (tweakBytes.length + 1))) : tweakBytes;
        const counted = countingAddon(addon);
        const native = new FF1(key, 256, counted.addon);
        const typescript = new FF1(key, 256, null);
        const encrypted = native.encrypt(values, tweak);
        expect(counted.calls() > 0).toBe(n <= 128);
        expect(encrypted.map((x) => Array.from(x))).toEqual(typescript.encrypt(values, tweak).map((x) => Array.from(x)));
        const decrypted = native.decrypt(encrypted, tweak);
        expect(decrypted.map((x) => Array.from(x))).toEqual(values.map((x) => Array.from(x)));
      },
    ), { numRuns: 200 });
    // Every length at least once: each b % 16 puts [i] at another place of its block.
    const key = new Uint8Array(32).map((_, i) => i * 7 + 1);
    for (let n = 3; n <= 129; n++) {
      const values = [Uint16Array.from({ length: n }, (_, p) => (p * 97 + n) % 256), Uint16Array.from({ length: n }, (_, p) => (p * 13) % 256)];
      const tweak = new Uint8Array(n % 23).fill(n);
      const native = new FF1(key, 256, addon);
      const typescript = new FF1(key, 256, null);
      expect(native.encrypt(values, tweak).map((x) => Array.from(x))).toEqual(typescript.encrypt(values, tweak).map((x) => Array.from(x)));
    }
  });

  it('leaves long radix-256 strings to TypeScript when the build does not say it takes bytes, or says nonsense', () => {
    const addon = loadedNativeFf1();
    expect(addon.maxBytes).toBe(128);
    const key = new Uint8Array(32).fill(5);
    const values = [Uint16Array.from({ length: 40 }, (_, p) => p), Uint16Array.from({ length: 12 }, (_, p) => p)];
    const tweak = new Uint8Array([7, 7]);
    const typescript = new FF1(key, 256, null);
    // No limit (a build from before the byte path), or one that makes no sense: no byte path.
    for (const maxBytes of [undefined, 1e9, Number.NaN, '128', 12.5, -1, 20]) {
      const counted = countingAddon(addon);
      const build = { createContext: counted.addon.createContext, crypt: counted.addon.crypt, maxBytes } as NativeFf1;
      const native = new FF1(key, 256, build);
      expect(Array.from(native.encrypt([values[0] as Uint16Array], tweak)[0] as Uint16Array)).toEqual(Array.from(typescript.encrypt([values[0] as Uint16Array], tweak)[0] as Uint16Array));
      expect(counted.calls()).toBe(0);
      native.encrypt([values[1] as Uint16Array], tweak); // 12 bytes: halves fit integers, native as before
      expect(counted.calls()).toBe(1);
    }
  });

  it('never serves a remembered chain for another tweak: same length, changed in place, longer than remembered', () => {
    const addon = loadedNativeFf1();
    const key = new Uint8Array(32).fill(9);
    const native = new FF1(key, 10, addon);
    const typescript = new FF1(key, 10, null);
    const values = [Uint16Array.from([4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])];
    const tweak = new Uint8Array(20).fill(1);
    const long = new Uint8Array(100).map((_, i) => i);
    const sequence: Uint8Array[] = [tweak, new Uint8Array(20).fill(2), tweak, long, long.subarray(0, 99), new Uint8Array(0)];
    for (const t of sequence) {
      expect(Array.from(native.encrypt(values, t)[0] as Uint16Array)).toEqual(Array.from(typescript.encrypt(values, t)[0] as Uint16Array));
    }
    const before = Array.from(native.encrypt(values, tweak)[0] as Uint16Array);
    tweak[19] = 7;
    const after = Array.from(native.encrypt(values, tweak)[0] as Uint16Array);
    expect(after).not.toEqual(before);
    expect(after).toEqual(Array.from(typescript.encrypt(values, tweak)[0] as Uint16Array));
  });

  it('matches TypeScript over batches longer than its lanes, with a tweak per value', () => {
    const addon = loadedNativeFf1();
    const key = new Uint8Array(16).fill(3);
    const native = new FF1(key, 36, addon);
    const typescript = new FF1(key, 36, null);
    const values = Array.from({ length: 101 }, (_, j) => Uint16Array.from({ length: 12 }, (_, p) => (j * 31 + p * 7) % 36));
    const tweaks = values.map((_, j) => new Uint8Array(j % 23).fill(j));
    expect(native.encrypt(values, tweaks).map((x) => Array.from(x))).toEqual(typescript.encrypt(values, tweaks).map((x) => Array.from(x)));
  });
});

describe.skipIf(nativeSwitchedOff)('native FF1 over bits held in integers (cryptBits)', () => {
  /** value's n bits as radix-2 numerals, most significant first, and back. */
  const bitsOf = (value: number, n: number): number[] => Array.from({ length: n }, (_, p) => Math.floor(value / 2 ** (n - 1 - p)) % 2);
  const valueOf = (bits: ArrayLike<number>): number => Array.from(bits).reduce((value, bit) => value * 2 + bit, 0);

  it('gives what crypt gives in radix 2 for the same bits, every n from 20 to 32, both ways', () => {
    const addon = loadedNativeFf1();
    const cryptBits = addon.cryptBits;
    if (cryptBits === undefined) throw new Error('this build has no cryptBits');
    fc.assert(fc.property(keyArbitrary, fc.integer({ min: 20, max: 32 }), fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 70 }), fc.uint8Array({ maxLength: 40 }), fc.boolean(),
      (key, n, fractions, tweak, decrypt) => {
        const context = addon.createContext(key);
        const values = Uint32Array.from(fractions, (f) => Math.floor(f * 2 ** n));
        const viaBits = new Uint32Array(values.length);
        cryptBits(context, n, values, viaBits, tweak, decrypt);
        const numerals = Uint16Array.from(Array.from(values).flatMap((value) => bitsOf(value, n)));
        const viaNumerals = new Uint16Array(numerals.length);
        addon.crypt(context, 2, n, numerals, viaNumerals, tweak, undefined, decrypt);
        expect(Array.from(viaBits)).toEqual(Array.from(values, (_, j) => valueOf(viaNumerals.subarray(j * n, (j + 1) * n))));
      }), { numRuns: 120 });
  });

  it('refuses every malformed argument', () => {
    const addon = loadedNativeFf1();
    const cryptBits = addon.cryptBits as (...args: unknown[]) => void;
    const context = addon.createContext(new Uint8Array(32).fill(9));
    const good: unknown[] = [context, 22, new Uint32Array(3), new Uint32Array(3), new Uint8Array(2), false];
    const bad: [number, unknown, ErrorConstructor][] = [
      [0, {}, TypeError], [1, 19, RangeError], [1, 33, RangeError], [1, 21.5, RangeError], [1, '22', RangeError],
      [2, new Uint16Array(3), TypeError], [2, new Int32Array(3), TypeError], [2, Uint32Array.of(0, 2 ** 22, 0), RangeError],
      [3, new Uint32Array(2), RangeError], [3, null, TypeError], [4, 'tweak', TypeError], [5, 0, TypeError],
    ];
    for (const [at, value, kind] of bad) {
      const args = [...good];
      args[at] = value;
      expect(() => cryptBits(...args), `argument ${at}`).toThrow(kind);
    }
    expect(() => cryptBits(...good.slice(0, 5))).toThrow(TypeError);
    // 32 bits: every integer is in range.
    cryptBits(context, 32, Uint32Array.of(2 ** 32 - 1), new Uint32Array(1), new Uint8Array(0), true);
  });

  it('an addon whose cryptBits disagrees with its crypt fails the load-time check; one without cryptBits passes it', () => {
    const addon = loadedNativeFf1();
    const { cryptBits, ...rest } = addon;
    expect(ff1AddonPassesKnownAnswer(addon)).toBe(true);
    expect(ff1AddonPassesKnownAnswer({ ...rest, crypt: addon.crypt })).toBe(true);
    const offByOne: NativeFf1 = {
      ...rest, crypt: addon.crypt,
      cryptBits: (context, n, input, output, tweak, decrypt) => {
        cryptBits?.(context, n, input, output, tweak, decrypt);
        output[0] = ((output[0] as number) ^ 1) >>> 0;
      },
    };
    expect(ff1AddonPassesKnownAnswer(offByOne)).toBe(false);
  });
});

describe.skipIf(nativeSwitchedOff)('native FF1 over the digits of text fields in place (cryptDigitsInPlace)', () => {
  const LUHN_DOUBLE = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
  const luhnCheck = (body: readonly number[]): number => {
    let sum = 0;
    for (let j = body.length - 1, doubled = true; j >= 0; j--, doubled = !doubled) sum += doubled ? (LUHN_DOUBLE[body[j] as number] as number) : (body[j] as number);
    return (10 - (sum % 10)) % 10;
  };
  /** A template: digit places (0) and separators; `places` digit places in all. */
  const templates = fc.tuple(fc.integer({ min: 6, max: 30 }), fc.array(fc.constantFrom(0x20, 0x2d, 0x2f, 0x41), { maxLength: 8 }), fc.nat())
    .map(([places, separators, seed]) => {
      const template = new Array<number>(places).fill(0);
      separators.forEach((separator, k) => template.splice(1 + ((seed + k * 7) % (template.length - 1)), 0, separator));
      return Uint8Array.from(template);
    });

  it('rewrites exactly the unhandled fields that spell the template, as crypt gives their digits, both ways, with and without Luhn', () => {
    const addon = loadedNativeFf1();
    const cryptDigits = addon.cryptDigitsInPlace;
    if (cryptDigits === undefined) throw new Error('this build has no cryptDigitsInPlace');
    fc.assert(fc.property(keyArbitrary, templates, fc.boolean(), fc.uint8Array({ maxLength: 30 }), fc.boolean(), fc.array(fc.tuple(fc.nat(), fc.constantFrom('spelled', 'other', 'short', 'handled')), { minLength: 1, maxLength: 80 }),
      (key, template, luhnWanted, tweak, decrypt, kinds) => {
        const places = template.filter((b) => b === 0).length;
        const luhn = luhnWanted && places >= 7;
        const context = addon.createContext(key);
        const fields = kinds.map(([seed, kind]) => {
          const text = Array.from(template, (b, p) => (b === 0 ? 48 + ((seed + p * 13) % 10) : b));
          if (kind === 'other') text[(seed % text.length)] = 0x78; // one byte off the template
          if (kind === 'short') text.pop();
          return { bytes: Uint8Array.from(text), kind };
        });
        // Laid out back to back with a byte of filler between them, as rows in a frame.
        const bytes = new Uint8Array(fields.reduce((n, f) => n + f.bytes.length + 1, 0)).fill(0x7c);
        const starts = new Int32Array(fields.length);
        const lengths = new Int32Array(fields.length);
        let at = 0;
        fields.forEach((field, i) => {
          bytes.set(field.bytes, at);
          starts[i] = at;
          lengths[i] = field.bytes.length;
          at += field.bytes.length + 1;
        });
        const handled = Uint8Array.from(fields, (f) => (f.kind === 'handled' ? 1 : 0));
        const before = Uint8Array.from(bytes);
        const rewritten = cryptDigits(context, template, luhn, tweak, decrypt, bytes, starts, lengths, handled);
        const expected = Uint8Array.from(before);
        let spelled = 0;
        fields.forEach((field, i) => {
          const start = starts[i] as number;
          if (field.kind !== 'spelled') {
            expect(handled[i]).toBe(field.kind === 'handled' ? 1 : 0);
            return;
          }
          spelled++;
          expect(handled[i]).toBe(1);
          const digits = Array.from(field.bytes.filter((_, p) => template[p] === 0), (b) => b - 48);
          const body = luhn ? digits.slice(0, -1) : digits;
          const out = new Uint16Array(body.length);
          addon.crypt(context, 10, body.length, Uint16Array.from(body), out, tweak, undefined, decrypt);
          const written = luhn ? [...out, (luhnCheck([...out]) + (digits.at(-1) as number) - luhnCheck(body) + 10) % 10] : [...out];
          let k = 0;
          template.forEach((b, p) => {
            if (b === 0) expected[start + p] = 48 + (written[k++] as number);
          });
        });
        expect(rewritten).toBe(spelled);
        expect(Array.from(bytes)).toEqual(Array.from(expected));
      }), { numRuns: 150 });
  });

  it('refuses every malformed argument, and fields outside the buffer before writing anything', () => {
    const addon = loadedNativeFf1();
    const cryptDigits = addon.cryptDigitsInPlace as (...args: unknown[]) => number;
    const context = addon.createContext(new Uint8Array(32).fill(5));
    const template = Uint8Array.from('ddd-dd-dddd', (c) => (c === 'd' ? 0 : c.charCodeAt(0)));
    const bytes = Buffer.from('123-45-6789|987-65-4321');
    const good: unknown[] = [context, template, false, new Uint8Array(3), false, bytes, Int32Array.of(0, 12), Int32Array.of(11, 11), new Uint8Array(2)];
    const bad: [number, unknown, ErrorConstructor][] = [
      [0, {}, TypeError], [1, 'ddd', TypeError], [1, new Uint8Array(0), RangeError], [1, new Uint8Array(65), RangeError],
      [1, Uint8Array.of(0, 0, 0, 0, 0), RangeError], [1, new Uint8Array(31 + 1), RangeError], [1, new Uint8Array(40), RangeError],
      [2, 1, TypeError], [3, null, TypeError], [4, 'no', TypeError], [5, [1, 2], TypeError],
      [6, new Uint32Array(2), TypeError], [6, Int32Array.of(0), RangeError], [6, Int32Array.of(0, 13), RangeError], [6, Int32Array.of(-1, 12), RangeError],
      [7, Int32Array.of(11, 12), RangeError], [7, Int32Array.of(11, -1), RangeError], [8, new Uint8Array(3), RangeError], [8, new Uint16Array(2), TypeError],
      // Fields out of order, or overlapping: each must be read before any write can reach it.
      [6, Int32Array.of(12, 0), RangeError], [6, Int32Array.of(5, 12), RangeError], [6, Int32Array.of(0, 0), RangeError],
    ];
    for (const [at, value, kind] of bad) {
      const args = [...good];
      args[at] = value;
      const copy = Buffer.from(bytes);
      if (at !== 5) args[5] = copy;
      expect(() => cryptDigits(...args), `argument ${at}`).toThrow(kind);
      if (at !== 5) expect(copy.equals(bytes), `argument ${at} wrote`).toBe(true);
    }
    expect(() => cryptDigits(...good.slice(0, 8))).toThrow(TypeError);
    expect(cryptDigits(...good)).toBe(2);
  });

  it('refuses places, flags or a template that share memory with the bytes it writes, before writing anything', () => {
    const addon = loadedNativeFf1();
    const cryptDigits = addon.cryptDigitsInPlace as NonNullable<NativeFf1['cryptDigitsInPlace']>;
    const context = addon.createContext(new Uint8Array(32).fill(1));
    const template = Uint8Array.of(0, 1, 1, 1, 0, 0, 0, 0, 0);
    const spelled = [0x31, 1, 1, 1, 0x32, 0x33, 0x34, 0x35, 0x36];
    const buffer = new ArrayBuffer(200);
    const bytes = new Uint8Array(buffer);
    bytes.set(spelled, 100);
    bytes.set(spelled, 150);
    const before = Uint8Array.from(bytes);
    const at = (offset: number, values: number[]): Int32Array => {
      const view = new Int32Array(buffer, offset, values.length);
      view.set(values);
      return view;
    };
    const call = (starts: Int32Array, lengths: Int32Array, handled: Uint8Array, inTemplate = template): number =>
      cryptDigits(context, inTemplate, false, Uint8Array.of(4), true, bytes, starts, lengths, handled);
    // Rewriting a field would move or change these: a place read later, a flag, the template.
    expect(() => call(at(20, [100, 150]), Int32Array.of(9, 9), new Uint8Array(2))).toThrow(/share memory/);
    expect(() => call(Int32Array.of(100, 150), at(40, [9, 9]), new Uint8Array(2))).toThrow(/share memory/);
    expect(() => call(Int32Array.of(100, 150), Int32Array.of(9, 9), bytes.subarray(60, 62))).toThrow(/share memory/);
    bytes.set(template, 80);
    expect(() => call(Int32Array.of(100, 150), Int32Array.of(9, 9), new Uint8Array(2), bytes.subarray(80, 89))).toThrow(/share memory/);
    expect(Array.from(bytes.subarray(100))).toEqual(Array.from(before.subarray(100)));
    // Apart, the same call rewrites both fields.
    expect(call(Int32Array.of(100, 150), Int32Array.of(9, 9), new Uint8Array(2))).toBe(2);
    expect(Array.from(bytes.subarray(150, 159))).not.toEqual(spelled);
  });

  it('an addon whose cryptDigitsInPlace disagrees with its crypt fails the load-time check', () => {
    const addon = loadedNativeFf1();
    const { cryptDigitsInPlace, ...rest } = addon;
    expect(ff1AddonPassesKnownAnswer({ ...rest, crypt: addon.crypt })).toBe(true);
    const anotherTweak: NativeFf1 = {
      ...rest, crypt: addon.crypt,
      cryptDigitsInPlace: (context, template, luhn, tweak, decrypt, bytes, starts, lengths, handled) =>
        cryptDigitsInPlace?.(context, template, luhn, tweak.subarray(1), decrypt, bytes, starts, lengths, handled) ?? 0,
    };
    expect(ff1AddonPassesKnownAnswer(anotherTweak)).toBe(false);
    const handledTwice: NativeFf1 = {
      ...rest, crypt: addon.crypt,
      cryptDigitsInPlace: (context, template, luhn, tweak, decrypt, bytes, starts, lengths, handled) =>
        cryptDigitsInPlace?.(context, template, luhn, tweak, decrypt, bytes, starts, lengths, handled.fill(0)) ?? 0,
    };
    expect(ff1AddonPassesKnownAnswer(handledTwice)).toBe(false);
  });
});

describe.skipIf(nativeSwitchedOff)('native FF1 refuses bad arguments with an error, never a crash', () => {
  const keyHex = 'c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc';

  it('refuses keys that are not AES keys', () => {
    const addon = loadedNativeFf1();
    for (const key of [new Uint8Array(0), new Uint8Array(20), new Uint8Array(33)]) {
      expect(() => addon.createContext(key)).toThrow(RangeError);
    }
    for (const key of [new Uint16Array(16), 'key', undefined, [1, 2, 3]]) {
      expect(() => addon.createContext(key as unknown as Uint8Array)).toThrow(TypeError);
    }
  });

  it('refuses every malformed crypt argument', () => {
    const addon = loadedNativeFf1();
    const context = addon.createContext(Buffer.from(keyHex, 'hex'));
    const input = new Uint16Array(10);
    const output = new Uint16Array(10);
    const tweak = new Uint8Array(4);
    type Args = Parameters<NativeFf1['crypt']>;
    const good: Args = [context, 10, 10, input, output, tweak, undefined, false];
    const bad: [number, unknown, ErrorConstructor][] = [
      [0, {}, TypeError], [0, null, TypeError], [0, Buffer.from(keyHex, 'hex'), TypeError],
      [1, 1, RangeError], [1, 65_537, RangeError], [1, 10.5, RangeError], [1, Number.NaN, RangeError], [1, '10', RangeError],
      [2, 1, RangeError], [2, 129, RangeError], [2, 3, RangeError], [2, 5.5, RangeError],
      [3, new Uint8Array(10), TypeError], [3, [0, 1], TypeError], [3, new Uint16Array(11), RangeError],
      [3, Uint16Array.from({ length: 10 }, () => 10), RangeError],
      [4, new Uint16Array(9), RangeError], [4, new Float64Array(10), TypeError], [4, null, TypeError],
      [5, undefined, TypeError], [5, new Uint16Array(2), TypeError],
      [6, new Uint32Array(2), RangeError], [6, new Uint32Array([5]), RangeError], [6, new Int32Array(1), TypeError], [6, null, TypeError],
      [7, 1, TypeError], [7, undefined, TypeError],
    ];
    for (const [at, value, kind] of bad) {
      const args = [...good] as unknown[];
      args[at] = value;
      let caught: unknown;
      try {
        (addon.crypt as (...a: unknown[]) => void)(...args);
      } catch (error) {
        caught = error;
      }
      expect(caught, `argument ${at}`).toBeInstanceOf(kind);
    }
    // radix^v at or beyond 2^53 (also where the product would wrap 64 bits), and domains below 10^6.
    for (const [radix, n] of [[7132, 9], [7132, 10], [8884, 9], [8884, 10], [65_536, 10]] as const) {
      expect(() => addon.crypt(context, radix, n, new Uint16Array(n), new Uint16Array(n), tweak, undefined, false), `${radix}^${n}`).toThrow(RangeError);
    }
    expect(() => addon.crypt(context, 10, 32, new Uint16Array(32), new Uint16Array(32), tweak, undefined, false)).toThrow(RangeError);
    expect(() => addon.crypt(context, 2, 106, new Uint16Array(106), new Uint16Array(106), tweak, undefined, false)).toThrow(RangeError);
    expect(() => addon.crypt(context, 10, 5, new Uint16Array(5), new Uint16Array(5), tweak, undefined, false)).toThrow(RangeError);
    expect(() => (addon.crypt as (...a: unknown[]) => void)(...good.slice(0, 7))).toThrow(TypeError);
    // Tweak ends must rise and stay within the bytes.
    const two = new Uint16Array(20);
    expect(() => addon.crypt(context, 10, 10, two, new Uint16Array(20), tweak, new Uint32Array([3, 2]), false)).toThrow(RangeError);
    expect(() => addon.crypt(context, 10, 10, two, new Uint16Array(20), tweak, new Uint32Array([2, 5]), false)).toThrow(RangeError);
    // The good call still works after all of that.
    addon.crypt(...good);
    expect(output.some((x) => x !== 0)).toBe(true);
  });
});
