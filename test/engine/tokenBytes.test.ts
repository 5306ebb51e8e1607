import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FixedWidthBase } from '../../src/engine/tokens/fixedWidthBase.js';
import { packValue, unpackValue, MIN_PACKED_BYTES } from '../../src/engine/tokens/packing.js';

describe('packing', () => {
  it('round-trips any string, compactly for digit shapes', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => {
      const packed = packValue(s);
      expect(packed.length).toBeGreaterThanOrEqual(MIN_PACKED_BYTES);
      expect(unpackValue(packed)).toBe(s);
    }), { numRuns: 500 });
    for (const s of ['007', '7', '', '123-45-6789', '+1 (555) 010-4477', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'F47AC10B-58CC-4372-A567-0E02B2C3D479']) {
      expect(unpackValue(packValue(s))).toBe(s);
    }
    expect(packValue('123-45-6789').length).toBeLessThan(Buffer.byteLength('123-45-6789'));
    expect(packValue('f47ac10b-58cc-4372-a567-0e02b2c3d479').length).toBe(17);
  });

  it('rejects bytes that are not a packing', () => {
    expect(unpackValue(new Uint8Array([0xff, 1, 2]))).toBeNull();
    expect(unpackValue(new Uint8Array([0x02, 1, 0]))).toBeNull(); // two pad bytes promised, one is not zero
  });
});

describe('FixedWidthBase', () => {
  for (const alphabet of ['0123456789', 'abcdefghijklmnopqrstuvwxyz0123456789', '01']) {
    const codec = new FixedWidthBase(alphabet);
    it(`round-trips bytes in base ${alphabet.length}, width fixed by byte count`, () => {
      fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        const text = codec.encode(bytes);
        expect(text.length).toBe(codec.width(bytes.length));
        expect(codec.decode(text)).toEqual(Buffer.from(bytes));
      }), { numRuns: 300 });
    });
  }
  it('refuses widths no byte count gives and foreign symbols', () => {
    const codec = new FixedWidthBase('0123456789');
    expect(codec.decode('123456789')).toBeNull(); // 3 bytes → 8 digits, 4 → 10
    expect(codec.decode('12345678x')).toBeNull();
    expect(codec.decode('99999999')).toBeNull(); // > 256^3
  });
});
