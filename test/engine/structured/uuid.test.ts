import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { uuidKind } from '../../../src/engine/kinds/uuid.js';
import { encryptAll, failures, roundTrip } from './fpeRoundTrip.js';
import { recordingCipher, shiftCipher, structuredTestCipher, tooSmallCipher } from './testCiphers.js';

const cipher = structuredTestCipher();
const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Version: first hex digit of the third group. Variant: top two bits of the fourth group's first digit. */
function versionOf(uuid: string): string {
  return uuid.charAt(14).toLowerCase();
}
function variantOf(uuid: string): number {
  return parseInt(uuid.charAt(19), 16) >> 2;
}

const hexDigits = (n: number) => fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: n, maxLength: n }).map((a) => a.join(''));
const lowerUuid = fc.tuple(hexDigits(8), hexDigits(4), hexDigits(4), hexDigits(4), hexDigits(12)).map((g) => g.join('-'));
const validUuid = fc.tuple(lowerUuid, fc.boolean()).map(([u, upper]) => (upper ? u.toUpperCase() : u));
const mixedCaseUuid = fc.tuple(lowerUuid, fc.array(fc.boolean(), { minLength: 36, maxLength: 36 }))
  .map(([u, flags]) => [...u].map((c, i) => (flags[i] ? c.toUpperCase() : c)).join(''));

describe('uuid: validity', () => {
  it.each([
    'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'F47AC10B-58CC-4372-A567-0E02B2C3D479',
    '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'F47ac10b-58cc-4372-a567-0e02b2c3d479',
  ])('accepts %s', (value) => {
    expect(uuidKind.isValid(value, 'en')).toBe(true);
  });

  it.each([
    'f47ac10b58cc4372a5670e02b2c3d479', '{f47ac10b-58cc-4372-a567-0e02b2c3d479}', 'f47ac10b-58cc-4372-a567-0e02b2c3d47',
    'f47ac10b-58cc-4372-a567-0e02b2c3d4799', 'g47ac10b-58cc-4372-a567-0e02b2c3d479', 'f47ac10b-58cc4-372-a567-0e02b2c3d479',
    ' f47ac10b-58cc-4372-a567-0e02b2c3d479', 'f47ac10b-58cc-4372-a567-0e02b2c3d479\n', '', 'uuid',
  ])('refuses %j', (value) => {
    expect(uuidKind.isValid(value, 'en')).toBe(false);
  });
});

describe('uuid: fpe', () => {
  it('encrypts the seed-style uuid into a uuid of the same version, variant and case, and back', () => {
    const values = ['f47ac10b-58cc-4372-a567-0e02b2c3d479', 'F47AC10B-58CC-4372-A567-0E02B2C3D479', '00000000-0000-0000-0000-000000000000'];
    const { encrypted, decrypted } = roundTrip(uuidKind, values, cipher);
    expect(decrypted).toEqual(values);
    expect(encrypted[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(encrypted[1]).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
    expect(encrypted[2]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-0[0-9a-f]{3}-[0-3][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('encrypts the 122 free bits as one integer, skipping the version and variant bits', () => {
    const shift = shiftCipher();
    expect(encryptAll(uuidKind, [
      '00000000-0000-4000-8000-000000000000',
      '00000000-0000-4000-bfff-ffffffffffff', // low 62 bits all ones: carry into the middle bits
      '00000000-0000-4fff-bfff-ffffffffffff', // and on into the high 48 bits
      'ffffffff-ffff-4fff-bfff-ffffffffffff', // wraps to zero
    ], shift)).toEqual([
      '00000000-0000-4000-8000-000000000001',
      '00000000-0000-4001-8000-000000000000',
      '00000000-0001-4000-8000-000000000000',
      '00000000-0000-4000-8000-000000000000',
    ]);
  });

  it('makes one cipher call per request over 2^122, the kept bits bound in each tweak', () => {
    const { cipher: recording, calls } = recordingCipher(cipher);
    const results = uuidKind.fpe([
      'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'nope', '6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'f47ac10b-58cc-4372-e567-0e02b2c3d479',
    ], 'encrypt', recording, 'en');
    expect(failures(results)).toEqual({ 1: 'invalid_value' });
    expect(calls.map((c) => [c.domain, c.count])).toEqual([[2n ** 122n, 3]]);
    const tweaks = calls[0]!.tweaks as Uint8Array[];
    expect(tweaks).toHaveLength(3);
    expect(tweaks[0]).not.toEqual(tweaks[1]); // version 4 vs 1
    expect(tweaks[0]).not.toEqual(tweaks[2]); // variant 10 vs 11
  });

  it('gives lowercase output for mixed-case input (the same uuid comes back, lowercased)', () => {
    const value = 'F47ac10b-58CC-4372-a567-0e02b2c3d479';
    const { encrypted, decrypted } = roundTrip(uuidKind, [value], cipher);
    expect(encrypted[0]).toBe(encrypted[0]!.toLowerCase());
    expect(decrypted).toEqual([value.toLowerCase()]);
  });

  it('reports DOMAIN_TOO_SMALL when the cipher gives null', () => {
    expect(uuidKind.fpe(['f47ac10b-58cc-4372-a567-0e02b2c3d479', 'x'], 'encrypt', tooSmallCipher(), 'en'))
      .toEqual([DOMAIN_TOO_SMALL, INVALID_VALUE]);
  });
});

describe('uuid: fpe properties', () => {
  it('round-trips exactly and keeps shape, case, version and variant', () => {
    fc.assert(fc.property(fc.array(validUuid, { minLength: 1, maxLength: 40 }), (values) => {
      const { encrypted, decrypted } = roundTrip(uuidKind, values, cipher);
      encrypted.forEach((out, i) => {
        const input = values[i]!;
        expect(out).toMatch(UUID_SHAPE);
        expect(versionOf(out)).toBe(versionOf(input));
        expect(variantOf(out)).toBe(variantOf(input));
        const upperInput = /[A-F]/.test(input);
        expect(out).toBe(upperInput ? out.toUpperCase() : out.toLowerCase());
        // An uppercase value round-trips exactly unless its ciphertext has no letter to carry the case.
        if (upperInput && !/[A-F]/.test(out)) expect(decrypted[i]).toBe(input.toLowerCase());
        else expect(decrypted[i]).toBe(input);
      });
    }), { numRuns: 200 });
  });

  it('round-trips mixed-case values to the same uuid', () => {
    fc.assert(fc.property(mixedCaseUuid, (value) => {
      const { decrypted } = roundTrip(uuidKind, [value], cipher);
      expect(decrypted[0]!.toLowerCase()).toBe(value.toLowerCase());
    }), { numRuns: 200 });
  });

  it('changes uuids in general', () => {
    const values = fc.sample(validUuid, { numRuns: 300, seed: 3 });
    const encrypted = encryptAll(uuidKind, values, cipher);
    expect(encrypted.filter((out, i) => out === values[i])).toEqual([]);
  });

  it('refuses strings that are not hyphenated uuids', () => {
    const nearUuid = fc.stringMatching(/^[0-9a-gA-G-]{30,38}$/);
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 40 }), nearUuid), (value) => {
      const valid = UUID_SHAPE.test(value);
      expect(uuidKind.isValid(value, 'en')).toBe(valid);
      if (!valid) expect(uuidKind.fpe([value], 'decrypt', cipher, 'en')).toEqual([INVALID_VALUE]);
    }), { numRuns: 1000 });
  });
});

describe('uuid: mask and redact', () => {
  it('masks every hex digit but the last four', () => {
    expect(uuidKind.mask('f47ac10b-58cc-4372-a567-0e02b2c3d479', 'en')).toBe('00000000-0000-0000-0000-00000000d479');
    expect(uuidKind.mask('F47AC10B-58CC-4372-A567-0E02B2C3D4E9', 'en')).toBe('00000000-0000-0000-0000-00000000D4E9');
  });

  it('redacts to the layout', () => {
    expect(uuidKind.redact('f47ac10b-58cc-4372-a567-0e02b2c3d479', 'en')).toBe('********-****-****-****-************');
  });

  it('never echoes a value that is not a uuid', () => {
    expect(uuidKind.mask('f47ac10b-58cc', 'en')).toBe('********-****');
  });
});
