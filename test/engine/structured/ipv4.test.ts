import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { ipv4Kind } from '../../../src/engine/kinds/ipv4.js';
import { encryptAll, failures, roundTrip } from './fpeRoundTrip.js';
import { recordingCipher, shiftCipher, structuredTestCipher, tooSmallCipher } from './testCiphers.js';

const cipher = structuredTestCipher();

/** Independent check: four decimal octets 0–255 without leading zeros, optional /0–/32. */
function readIpv4(value: string): { octets: number[]; prefix: string } | undefined {
  const [address = '', prefix, ...rest] = value.split('/');
  if (rest.length > 0) return undefined;
  if (prefix !== undefined && (!/^\d{1,2}$/.test(prefix) || String(Number(prefix)) !== prefix || Number(prefix) > 32)) return undefined;
  const parts = address.split('.');
  if (parts.length !== 4) return undefined;
  if (!parts.every((p) => /^\d{1,3}$/.test(p) && String(Number(p)) === p && Number(p) <= 255)) return undefined;
  return { octets: parts.map(Number), prefix: prefix === undefined ? '' : `/${prefix}` };
}

const octet = fc.integer({ min: 0, max: 255 });
const prefix = fc.option(fc.integer({ min: 0, max: 32 }).map((n) => `/${n}`), { nil: '' });
const validIpv4 = fc.tuple(fc.array(octet, { minLength: 4, maxLength: 4 }), prefix).map(([o, p]) => o.join('.') + p);

describe('ipv4: validity', () => {
  it.each(['192.168.10.4', '10.0.0.0/8', '0.0.0.0', '255.255.255.255/32', '1.2.3.4/0', '127.0.0.1'])('accepts %s', (value) => {
    expect(ipv4Kind.isValid(value, 'en')).toBe(true);
  });

  it.each([
    '256.1.1.1', '01.2.3.4', '1.2.3', '1.2.3.4.5', '1.2.3.4/33', '1.2.3.4/', '1.2.3.4/08', '1.2.3.4/8/8',
    ' 1.2.3.4', '1.2.3.4 ', '1..3.4', '::1', '1.2.3.-4', '1.2.3.4x', '٣.2.3.4', '', 'localhost',
  ])('refuses %j', (value) => {
    expect(ipv4Kind.isValid(value, 'en')).toBe(false);
  });
});

describe('ipv4: fpe', () => {
  it('encrypts realistic addresses into addresses, prefix kept, and back', () => {
    const values = ['192.168.10.4', '10.0.0.0/8', '0.0.0.0', '255.255.255.255/32'];
    const { encrypted, decrypted } = roundTrip(ipv4Kind, values, cipher);
    expect(decrypted).toEqual(values);
    encrypted.forEach((out, i) => {
      expect(readIpv4(out)?.prefix).toBe(readIpv4(values[i]!)!.prefix);
    });
  });

  it('encrypts the address as one 32-bit integer', () => {
    expect(encryptAll(ipv4Kind, ['192.168.10.4', '10.0.0.255/24', '255.255.255.255'], shiftCipher()))
      .toEqual(['192.168.10.5', '10.0.1.0/24', '0.0.0.0']);
  });

  it('makes one cipher call per request, over 2^32', () => {
    const { cipher: recording, calls } = recordingCipher(cipher);
    const results = ipv4Kind.fpe(['1.2.3.4', 'nope', '10.0.0.0/8', '300.1.1.1', '8.8.8.8'], 'encrypt', recording, 'en');
    expect(failures(results)).toEqual({ 1: 'invalid_value', 3: 'invalid_value' });
    expect(calls.map((c) => [c.domain, c.count])).toEqual([[2n ** 32n, 3]]);
  });

  it('reports DOMAIN_TOO_SMALL when the cipher gives null', () => {
    expect(ipv4Kind.fpe(['1.2.3.4', '1.2.3'], 'decrypt', tooSmallCipher(), 'en')).toEqual([DOMAIN_TOO_SMALL, INVALID_VALUE]);
  });
});

describe('ipv4: fpe properties', () => {
  it('round-trips exactly and gives four octets 0–255 with the prefix kept', () => {
    fc.assert(fc.property(fc.array(validIpv4, { minLength: 1, maxLength: 40 }), (values) => {
      const { encrypted, decrypted } = roundTrip(ipv4Kind, values, cipher);
      expect(decrypted).toEqual(values);
      encrypted.forEach((out, i) => {
        const read = readIpv4(out);
        expect(read).toBeDefined();
        expect(read!.prefix).toBe(readIpv4(values[i]!)!.prefix);
      });
    }), { numRuns: 200 });
  });

  it('changes addresses in general', () => {
    const values = fc.sample(validIpv4, { numRuns: 500, seed: 7 });
    const encrypted = encryptAll(ipv4Kind, values, cipher);
    expect(encrypted.filter((out, i) => out === values[i]).length).toBeLessThan(3);
  });

  it('refuses every string that is not an address', () => {
    const nearAddress = fc.stringMatching(/^[0-9./]{1,18}$/);
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 20 }), nearAddress), (value) => {
      const valid = readIpv4(value) !== undefined;
      expect(ipv4Kind.isValid(value, 'en')).toBe(valid);
      if (!valid) expect(ipv4Kind.fpe([value], 'encrypt', cipher, 'en')).toEqual([INVALID_VALUE]);
    }), { numRuns: 1000 });
  });

  it('processes mixed batches element by element', () => {
    const mixed = fc.array(fc.oneof(validIpv4, fc.constantFrom('1.2.3.256', '', 'a.b.c.d', '1.2.3.4/40')), { maxLength: 30 });
    fc.assert(fc.property(mixed, (values) => {
      const results = ipv4Kind.fpe(values, 'encrypt', cipher, 'en');
      expect(results).toHaveLength(values.length);
      results.forEach((r, i) => {
        if (readIpv4(values[i]!)) expect(readIpv4(r as string)).toBeDefined();
        else expect(r).toBe(INVALID_VALUE);
      });
    }), { numRuns: 100 });
  });
});

describe('ipv4: mask and redact', () => {
  it.each([
    ['192.168.10.4', '192.168.0.0'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['172.16.254.3/20', '172.16.0.0/20'],
    ['255.255.255.255', '255.255.0.0'],
  ])('mask %s → %s', (value, masked) => {
    expect(ipv4Kind.mask(value, 'en')).toBe(masked);
  });

  it('redacts to the layout', () => {
    expect(ipv4Kind.redact('192.168.10.4', 'en')).toBe('***.***.**.*');
    expect(ipv4Kind.redact('10.0.0.0/8', 'en')).toBe('**.*.*.*/*');
  });

  it('never echoes a value that is not an address', () => {
    expect(ipv4Kind.mask('300.1.2.3', 'en')).toBe('***.*.*.*');
  });
});
