import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  LayoutTweaks, countDigits, digitRunLayout, digitsOf, maskAllButLastDigits, maskToFirstSignificantDigit, withDigits,
} from '../../../src/engine/kinds/digitTemplate.js';

describe('digitTemplate', () => {
  it('takes digits out of a template and puts others back in place', () => {
    expect([...digitsOf('+1 (555) 010-4477')]).toEqual([1, 5, 5, 5, 0, 1, 0, 4, 4, 7, 7]);
    expect(withDigits('123-45-6789', [9, 8, 7, 6, 5, 4, 3, 2, 1])).toBe('987-65-4321');
    expect(countDigits('€ 12.345,67')).toBe(7);
  });

  it('withDigits(v, digitsOf(v)) is v for any string', () => {
    fc.assert(fc.property(fc.string(), (v) => {
      expect(withDigits(v, digitsOf(v))).toBe(v);
    }));
  });

  it('writes digit runs as their lengths', () => {
    expect(digitRunLayout('4111 1111 1111 1111')).toBe('4 4 4 4');
    expect(digitRunLayout('+1 (555) 010-4477')).toBe('+1 (3) 3-4');
    expect(digitRunLayout('-33.8688')).toBe('-2.4');
    expect(digitRunLayout('')).toBe('');
  });

  it('gives two strings the same run layout exactly when they differ only in digits', () => {
    const digitish = fc.string({ unit: fc.constantFrom('0', '1', '9', '-', ' ', '.', '$'), maxLength: 12 });
    fc.assert(
      fc.property(digitish, digitish, (a, b) => {
        const sameShape = a.replace(/\d/g, 'd') === b.replace(/\d/g, 'd');
        expect(digitRunLayout(a) === digitRunLayout(b)).toBe(sameShape);
      }),
      { numRuns: 500 },
    );
  });

  it('caches tweak bytes per layout', () => {
    const tweaks = new LayoutTweaks();
    expect(tweaks.get('3-2-4')).toBe(tweaks.get('3-2-4'));
    expect([...tweaks.get('3-2-4')]).toEqual([...Buffer.from('3-2-4')]);
  });

  it('masks digits', () => {
    expect(maskToFirstSignificantDigit('$1,234.56')).toBe('$1,000.00');
    expect(maskToFirstSignificantDigit('-0.0042')).toBe('-0.0040');
    expect(maskAllButLastDigits('4111 1111 1111 1111', 4, '*')).toBe('**** **** **** 1111');
    expect(maskAllButLastDigits('12', 4, '*')).toBe('12');
  });
});
