import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { latlngKind } from '../../../src/engine/kinds/latlng.js';
import { PROPERTY_RUNS, decrypt, digitString, encrypt, expectSameLayout, failureOf, roundTrip, testCipher } from './helpers.js';

/** Coordinates with 0–180 integer degrees, optionally zero-padded to 2 or 3 digits. */
const latlngArb = fc
  .record({
    sign: fc.constantFrom('', '-', '+'),
    degrees: fc.integer({ min: 0, max: 180 }),
    pad: fc.integer({ min: 0, max: 3 }),
    fraction: fc.option(digitString(1, 12), { nil: undefined }),
  })
  .map(({ sign, degrees, pad, fraction }) => {
    const frac = degrees === 180 && fraction !== undefined ? fraction.replace(/\d/g, '0') : fraction;
    return sign + String(degrees).padStart(pad, '0') + (frac === undefined ? '' : `.${frac}`);
  });

interface Shape { sign: string; zeros: number; significant: number; fraction: number; value: number }

function shapeOf(value: string): Shape {
  const [, sign = '', int = '', fraction = ''] = /^([-+]?)(\d+)(?:\.(\d+))?$/.exec(value) ?? [];
  let zeros = 0;
  while (zeros < int.length - 1 && int[zeros] === '0') zeros++;
  return { sign, zeros, significant: int.length - zeros, fraction: fraction.length, value: Math.abs(Number(value)) };
}

/** The band's size in steps of the last fraction digit, as latlng.ts defines the bands. */
function bandSize(s: Shape): number {
  const unit = 10 ** s.fraction;
  if (s.significant === 1) return 10 * unit;
  if (s.significant === 2) return s.value <= 90 ? 80 * unit + 1 : 10 * unit - 1;
  return 80 * unit + 1;
}

describe('latlng kind', () => {
  it('accepts coordinates up to 180 and refuses the rest', () => {
    for (const ok of ['-33.8688', '151.2093', '0', '+7.5', '90', '-180.000', '005.25', '179.99999999']) {
      expect(latlngKind.isValid(ok, 'en')).toBe(true);
    }
    for (const bad of ['', '180.0001', '181', '-200.5', '1000', '12.', '.5', '1,5', '33.8688S', '--3.5', ' 33.1', `1.${'1'.repeat(21)}`]) {
      expect(latlngKind.isValid(bad, 'en')).toBe(false);
    }
  });

  it('keeps sign, layout and range of realistic coordinates', () => {
    const lat = roundTrip(latlngKind, '-33.8688');
    expect(lat).toMatch(/^-\d\d\.\d{4}$/);
    expect(Math.abs(Number(lat))).toBeGreaterThanOrEqual(10);
    expect(Math.abs(Number(lat))).toBeLessThanOrEqual(90);
    const lng = roundTrip(latlngKind, '151.2093');
    expect(lng).toMatch(/^1\d\d\.\d{4}$/);
    expect(Number(lng)).toBeLessThanOrEqual(180);
    expect(roundTrip(latlngKind, '2.3522')).toMatch(/^\d\.\d{4}$/);
  });

  it('round-trips every coordinate, staying in its band', () => {
    fc.assert(
      fc.property(latlngArb, (value) => {
        expect(latlngKind.isValid(value, 'en')).toBe(true);
        const before = shapeOf(value);
        const [out] = encrypt(latlngKind, [value]);
        if (bandSize(before) < 100) {
          expect(failureOf(out)).toBe('domain_too_small');
          return;
        }
        expect(typeof out).toBe('string');
        const output = String(out);
        expectSameLayout(value, output);
        expect(decrypt(latlngKind, [output])).toEqual([value]);
        const after = shapeOf(output);
        expect({ ...after, value: 0 }).toEqual({ ...before, value: 0 });
        expect(after.value).toBeLessThanOrEqual(180);
        if (before.significant === 2) expect(after.value <= 90).toBe(before.value <= 90);
        if (before.significant === 3) expect(after.value).toBeGreaterThanOrEqual(100);
      }),
      PROPERTY_RUNS,
    );
  });

  it('allows the band edges 90 and 180 and never goes beyond', () => {
    const lats = Array.from({ length: 200 }, (_, i) => `${10 + (i % 80)}.${String(i % 100).padStart(2, '0')}`);
    const outs = encrypt(latlngKind, lats).map(String);
    for (const o of outs) expect(Math.abs(Number(o))).toBeLessThanOrEqual(90);
    // Whatever encrypts to an edge is in the band, and the edges are reachable outputs.
    const edges = decrypt(latlngKind, ['90.00', '180.00']).map(String);
    expect(Number(edges[0])).toBeLessThanOrEqual(90);
    expect(Number(edges[1])).toBeLessThanOrEqual(180);
    expect(encrypt(latlngKind, edges)).toEqual(['90.00', '180.00']);
  });

  it('processes a mixed batch with one cipher call per band size', () => {
    const cipher = testCipher();
    const values = ['-33.8688', 'north', '151.2093', '45', '-12.3456', '200.0'];
    const out = encrypt(latlngKind, values, cipher);
    // Bands [10, 90] and [100, 180] at 4 decimals both have 800 001 values; "45" has 81.
    expect(cipher.calls.integers).toBe(2);
    expect(out.map(failureOf)).toEqual([undefined, 'invalid_value', undefined, 'domain_too_small', undefined, 'invalid_value']);
    expect(decrypt(latlngKind, [out[0], out[2], out[4]].map(String))).toEqual(['-33.8688', '151.2093', '-12.3456']);
  });

  it('masks the fraction and keeps the degrees', () => {
    expect(latlngKind.mask('-33.8688', 'en')).toBe('-33.0000');
    expect(latlngKind.mask('151.2093', 'en')).toBe('151.0000');
    expect(latlngKind.mask('45', 'en')).toBe('45');
    expect(latlngKind.redact('-33.8688', 'en')).toBe('-**.****');
  });
});
