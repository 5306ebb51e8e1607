import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FixedWidthBase } from '../../../src/engine/tokens/fixedWidthBase.js';
import { packValue, unpackValue, MIN_PACKED_BYTES } from '../../../src/engine/tokens/packing.js';
import { FIXED_WIDTH_ALPHABETS, TOKEN_CODECS } from '../../../src/engine/tokens/tokenCodecs.js';
import { ReferenceFixedWidthBase, referencePackSymbols, referenceUnpackSymbols } from '../bigintReference.js';

const SYMBOLS = '0123456789 -./+(),:';
const symbolString = (maxLength: number) =>
  fc.array(fc.constantFrom(...SYMBOLS), { maxLength }).map((a) => a.join(''));

describe('packing', () => {
  it('round-trips any string, compactly for digit shapes', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => {
      const packed = packValue(s);
      expect(packed.length).toBeGreaterThanOrEqual(MIN_PACKED_BYTES);
      expect(unpackValue(packed)).toBe(s);
    }), { numRuns: 500 });
    // A leading U+FEFF is part of the value (a decoder drops it by default), short or long.
    const marked = ['\ufeffAlice Smith', `\ufeff${'x'.repeat(80)}`, '\ufeff', '\ufeff\ufeffé'];
    for (const s of ['007', '7', '', '123-45-6789', '+1 (555) 010-4477', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'F47AC10B-58CC-4372-A567-0E02B2C3D479', ...marked]) {
      expect(unpackValue(packValue(s))).toBe(s);
    }
    expect(packValue('123-45-6789').length).toBeLessThan(Buffer.byteLength('123-45-6789'));
    expect(packValue('f47ac10b-58cc-4372-a567-0e02b2c3d479').length).toBe(17);
  });

  it('packs symbol strings to the same bytes as the BigInt packing', () => {
    fc.assert(fc.property(symbolString(64), (s) => {
      const body = referencePackSymbols(s) as Uint8Array;
      const pad = Math.max(0, MIN_PACKED_BYTES - 1 - body.length);
      expect(Buffer.from(packValue(s))).toEqual(Buffer.concat([Buffer.from([(1 << 2) | pad]), body, Buffer.alloc(pad)]));
    }), { numRuns: 1000 });
  });

  it('unpacks symbol bodies as the BigInt packing did, valid or not', () => {
    const body = fc.oneof(
      symbolString(64).map((s) => referencePackSymbols(s) as Uint8Array),
      fc.uint8Array({ maxLength: 80 }),
      fc.tuple(fc.nat(3), symbolString(20)).map(([zeros, s]) => Uint8Array.from([...new Uint8Array(zeros), ...(referencePackSymbols(s) as Uint8Array)])),
    );
    fc.assert(fc.property(body, (b) => {
      const packed = Uint8Array.from([1 << 2, ...b]);
      expect(unpackValue(packed)).toBe(packed.length < MIN_PACKED_BYTES ? null : referenceUnpackSymbols(b));
    }), { numRuns: 1000 });
  });

  it('rejects bytes that are not a packing', () => {
    expect(unpackValue(new Uint8Array([0xff, 1, 2]))).toBeNull();
    expect(unpackValue(new Uint8Array([0x02, 1, 0]))).toBeNull(); // two pad bytes promised, one is not zero
    expect(unpackValue(new Uint8Array([0x04, 0, 0]))).toBeNull(); // symbols without the leading 1
    expect(unpackValue(new Uint8Array([0x04, 0, 2]))).toBeNull();
  });
});

/** Every token alphabet, and a few more shapes: binary, and non-ASCII up to 256 symbols. */
const ALPHABETS = [
  ...Object.values(FIXED_WIDTH_ALPHABETS),
  '01',
  'αβγδεζηθικλμνξοπρστυφχψω',
  String.fromCharCode(...Array.from({ length: 256 }, (_, i) => 0x100 + i)),
];

describe('FixedWidthBase', () => {
  for (const alphabet of ALPHABETS) {
    const codec = new FixedWidthBase(alphabet);
    const reference = new ReferenceFixedWidthBase(alphabet);
    const symbols = [...alphabet];

    it(`base ${symbols.length}: the same text as the BigInt encoding, and back`, () => {
      fc.assert(fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), (bytes) => {
        const text = codec.encode(bytes);
        expect(text).toBe(reference.encode(bytes));
        expect([...text].length).toBe(bytes.length ? codec.width(bytes.length) : 0); // width(0) is -0
        if (bytes.length) expect(Buffer.from(codec.decode(text) as Uint8Array)).toEqual(Buffer.from(bytes));
      }), { numRuns: 400 });
      // Longest, all zeros, all ones, either side of the switch to limbs (16) and to BigInt (64).
      for (const n of [1, 2, 3, 13, 14, 15, 16, 17, 32, 63, 64, 65, 100, 300]) {
        for (const fill of [0, 1, 0x80, 0xff]) {
          const bytes = new Uint8Array(n).fill(fill);
          expect(codec.encode(bytes)).toBe(reference.encode(bytes));
          expect(Buffer.from(codec.decode(codec.encode(bytes)) as Uint8Array)).toEqual(Buffer.from(bytes));
        }
      }
    });

    it(`base ${symbols.length}: decodes or refuses any text as the BigInt decoding did`, () => {
      const digitText = fc.array(fc.constantFrom(...symbols), { minLength: 0, maxLength: 120 }).map((a) => a.join(''));
      const text = fc.oneof(
        digitText,
        fc.tuple(digitText, fc.nat(120), fc.constantFrom('x', ' ', '\u00e9', '\ud83d\ude00', '9', 'a')).map(([t, at, c]) => {
          const s = [...t];
          s.splice(at % (s.length + 1), 0, c);
          return s.join('');
        }),
        // The largest value of a width, which needs another byte.
        fc.nat(70).map((n) => symbols[symbols.length - 1]?.repeat(codec.width(n)) ?? ''),
        // A valid width with one symbol changed: mostly valid, sometimes too large.
        fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 70 }), fc.nat(), fc.constantFrom(...symbols)).map(([b, at, c]) => {
          const s = [...reference.encode(b)];
          s[at % s.length] = c;
          return s.join('');
        }),
      );
      fc.assert(fc.property(text, (t) => {
        const got = codec.decode(t);
        const want = reference.decode(t);
        expect(got === null ? null : Buffer.from(got)).toEqual(want === null ? null : Buffer.from(want));
      }), { numRuns: 600 });
    });
  }

  it('refuses widths no byte count gives, foreign symbols and too large values', () => {
    const codec = new FixedWidthBase('0123456789');
    expect(codec.decode('123456789')).toBeNull(); // 3 bytes → 8 digits, 4 → 10
    expect(codec.decode('12345678x')).toBeNull();
    expect(codec.decode('1234567x')).toBeNull();
    expect(codec.decode('99999999')).toBeNull(); // > 256^3
    expect(codec.decode('16777216')).toBeNull(); // 256^3 exactly
    expect([...(codec.decode('16777215') as Uint8Array)]).toEqual([255, 255, 255]);
    expect(codec.decode('')).toBeNull();
    expect(codec.decode('1'.repeat(0x10000))).toBeNull();
  });
});

/** The token codecs' parse as it was written first, with patterns: the reference for the hand-written one. */
const referenceDecimal = new ReferenceFixedWidthBase(FIXED_WIDTH_ALPHABETS.decimal);
const referenceBase36 = new ReferenceFixedWidthBase(FIXED_WIDTH_ALPHABETS.base36);
function referenceDecimalParse(token: string): Uint8Array | null {
  if (token.length > 32_768 || !/^[0-9]+(?: [0-9]+)*$/.test(token)) return null;
  return referenceDecimal.decode(token.replaceAll(' ', ''));
}
function referenceEmailParse(token: string): Uint8Array | null {
  const m = /^([a-z0-9]+)@([a-z0-9]+)\.([a-z0-9]{3}|[a-z]{4})$/.exec(token);
  if (!m) return null;
  let tld: string | null = m[3] as string;
  if (tld.length === 4) {
    let n = 0;
    for (const c of tld) n = n * 26 + 'abcdefghijklmnopqrstuvwxyz'.indexOf(c);
    const base36 = [2, 1, 0].map((k) => FIXED_WIDTH_ALPHABETS.base36.charAt(Math.floor(n / 36 ** k) % 36)).join('');
    tld = n >= 36 ** 3 || /^[a-z]+$/.test(base36) ? null : base36;
  }
  return tld === null ? null : referenceBase36.decode(`${m[1]}${m[2]}${tld}`);
}

describe('token codecs', () => {
  const bytesOf = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b));
  /** Rendered tokens, and texts near them: a character inserted, changed or removed. */
  const nearTokens = (kind: 'email' | 'ccn' | 'phone' | 'numeric', extra: string) => {
    const token = fc.uint8Array({ minLength: 11, maxLength: 40 }).map((b) => TOKEN_CODECS[kind].render(b, '', 'en'));
    return fc.oneof(
      token,
      fc.tuple(token, fc.nat(), fc.constantFrom(...extra)).map(([t, at, c]) => t.slice(0, at % (t.length + 1)) + c + t.slice(at % (t.length + 1))),
      fc.tuple(token, fc.nat(), fc.constantFrom(...extra)).map(([t, at, c]) => t.slice(0, at % t.length) + c + t.slice((at % t.length) + 1)),
      fc.tuple(token, fc.nat()).map(([t, at]) => t.slice(0, at % t.length) + t.slice((at % t.length) + 1)),
      fc.string({ unit: fc.constantFrom(...extra), maxLength: 30 }),
    );
  };

  it('email: reads the same bytes as the pattern did, and refuses what it refused', () => {
    fc.assert(fc.property(nearTokens('email', '@.aZz09 é-'), (t) => {
      expect(bytesOf(TOKEN_CODECS.email.parse(t))).toEqual(bytesOf(referenceEmailParse(t)));
    }), { numRuns: 3000 });
    for (const t of ['a@b.cde', '@b.cde', 'a@.cde', 'a@b.', 'a@b.cd', 'a@b.cdefg', 'a@b@c.def', 'a.b@c.def', 'a@b.c.def', 'a@b.zzzz', 'a@b.aaaa', 'A@b.cde', 'a@b.cd9', 'a@b.cd9a']) {
      expect(bytesOf(TOKEN_CODECS.email.parse(t))).toEqual(bytesOf(referenceEmailParse(t)));
    }
  });

  it('decimal kinds: read the same bytes as the pattern did, grouped or not', () => {
    for (const kind of ['ccn', 'phone', 'numeric'] as const) {
      fc.assert(fc.property(nearTokens(kind, '0 9x-'), (t) => {
        expect(bytesOf(TOKEN_CODECS[kind].parse(t))).toEqual(bytesOf(referenceDecimalParse(t)));
      }), { numRuns: 1500 });
    }
    // The longest text read, and one more digit (grouped or not): the BigInt decoding of long text is quadratic.
    for (const t of ['', ' ', '12345678', ' 12345678', '12345678 ', '1234  5678', '1234 5678', '１２３４５６７８', '1'.repeat(32_768), '1'.repeat(32_769), `1 ${'1'.repeat(32_767)}`]) {
      expect(bytesOf(TOKEN_CODECS.numeric.parse(t))).toEqual(bytesOf(referenceDecimalParse(t)));
    }
  });
});
