/**
 * Across the six digit kinds: near-miss strings (digits, signs, separators, currency) are either
 * of the kind and round-trip, or are refused as invalid_value on both encrypt and decrypt,
 * next to valid elements that still succeed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { KindHandler } from '../../../src/engine/kinds/kind.js';
import { ccnKind } from '../../../src/engine/kinds/ccn.js';
import { latlngKind } from '../../../src/engine/kinds/latlng.js';
import { numericKind } from '../../../src/engine/kinds/numeric.js';
import { phoneKind } from '../../../src/engine/kinds/phone.js';
import { priceKind } from '../../../src/engine/kinds/price.js';
import { ssnKind } from '../../../src/engine/kinds/ssn.js';
import { decrypt, encrypt, failureOf } from './helpers.js';

const KINDS: readonly { name: string; kind: KindHandler; realistic: string }[] = [
  { name: 'ccn', kind: ccnKind, realistic: '4111 1111 1111 1111' },
  { name: 'ssn', kind: ssnKind, realistic: '123-45-6789' },
  { name: 'phone', kind: phoneKind, realistic: '+1 (555) 010-4477' },
  { name: 'numeric', kind: numericKind, realistic: '-12.50' },
  { name: 'price', kind: priceKind, realistic: '$1,234.56' },
  { name: 'latlng', kind: latlngKind, realistic: '-33.8688' },
];

const nearMiss = fc.string({
  unit: fc.constantFrom('0', '1', '4', '9', '9', '5', ' ', '-', '+', '.', ',', '(', ')', '$', '€', "'", '\u00A0', 'a', 'E'),
  maxLength: 24,
});

describe.each(KINDS)('$name refuses what is not of the kind', ({ kind, realistic }) => {
  it('round-trips valid strings and refuses the others, element by element', () => {
    fc.assert(
      fc.property(fc.array(nearMiss, { maxLength: 8 }), (values) => {
        const batch = [realistic, ...values];
        const out = encrypt(kind, batch);
        expect(out).toHaveLength(batch.length);
        const tokens: string[] = [];
        out.forEach((o, i) => {
          const value = batch[i] ?? '';
          if (!kind.isValid(value, 'en')) {
            expect(failureOf(o)).toBe('invalid_value');
            expect(failureOf(decrypt(kind, [value])[0])).toBe('invalid_value');
          } else if (typeof o === 'string') {
            expect(o).toHaveLength(value.length);
            expect(kind.isValid(o, 'en')).toBe(true);
            tokens.push(o);
          } else {
            expect(failureOf(o)).toBe('domain_too_small');
          }
        });
        const originals = batch.filter((v, i) => kind.isValid(v, 'en') && typeof out[i] === 'string');
        expect(decrypt(kind, tokens)).toEqual(originals);
      }),
      { numRuns: 200 },
    );
  });
});
