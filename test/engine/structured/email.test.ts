import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { emailKind } from '../../../src/engine/kinds/email.js';
import { encryptAll, failures, roundTrip } from './fpeRoundTrip.js';
import { recordingCipher, structuredTestCipher } from './testCiphers.js';

const cipher = structuredTestCipher();

/** Independent check of the documented form. */
function isEmail(value: string): boolean {
  const at = value.indexOf('@');
  if (at < 1 || value.indexOf('@', at + 1) !== -1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > 64 || domain.length > 253) return false;
  if (![...local].every((c) => /[A-Za-z0-9._%+-]/.test(c))) return false;
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  const tld = labels[labels.length - 1]!;
  if (tld.length < 2 || ![...tld].every((c) => /[A-Za-z]/.test(c))) return false;
  return labels.every((l) => l.length >= 1 && l.length <= 63 && !l.startsWith('-') && !l.endsWith('-')
    && [...l].every((c) => /[A-Za-z0-9-]/.test(c)));
}

function classOf(c: string): string {
  if (/[a-z]/.test(c)) return 'a';
  if (/[A-Z]/.test(c)) return 'A';
  if (/[0-9]/.test(c)) return '9';
  return c;
}
function tldOf(value: string): string {
  return value.slice(value.lastIndexOf('.'));
}

const letterDigit = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const word = (chars: fc.Arbitrary<string>, max: number) => fc.array(chars, { minLength: 1, maxLength: max }).map((a) => a.join(''));
const localPart = fc.array(word(fc.oneof(letterDigit, fc.constantFrom('_', '%', '+', '-')), 10), { minLength: 1, maxLength: 3 })
  .map((parts) => parts.join('.'));
const label = fc.tuple(letterDigit, fc.option(fc.tuple(word(fc.oneof(letterDigit, fc.constant('-')), 8), letterDigit), { nil: undefined }))
  .map(([first, rest]) => (rest ? first + rest[0] + rest[1] : first));
const tld = word(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'), 6).filter((t) => t.length >= 2);
const validEmail = fc.tuple(localPart, fc.array(label, { minLength: 1, maxLength: 3 }), tld)
  .map(([l, labels, t]) => `${l}@${[...labels, t].join('.')}`)
  .filter((e) => [...e.slice(0, e.lastIndexOf('.'))].filter((c) => /[A-Za-z0-9]/.test(c)).length >= 3);

describe('email: validity', () => {
  it.each([
    'jane.doe@example.co.uk', 'J.Doe+tag@Mail-Server.example.org', 'a@b.io', 'user_1%x@sub-1.example.COM',
    'x-y@1.2.de', `${'a'.repeat(64)}@example.com`,
  ])('accepts %s', (value) => {
    expect(emailKind.isValid(value, 'en')).toBe(true);
  });

  it.each([
    'jane.doe', '@example.com', 'jane@', 'jane@example', 'jane@example.c', 'jane@example.c0m', '.jane@example.com',
    'jane.@example.com', 'ja..ne@example.com', 'ja@ne@example.com', 'jane@-example.com', 'jane@example-.com',
    'jane@exa_mple.com', 'jane@.example.com', 'jane@example..com', 'jane doe@example.com', 'jäne@example.com',
    'jane@exämple.com', `${'a'.repeat(65)}@example.com`, `a@${'b'.repeat(64)}.com`, ' jane@example.com', '',
  ])('refuses %j', (value) => {
    expect(emailKind.isValid(value, 'en')).toBe(false);
  });
});

describe('email: fpe', () => {
  it('keeps form, length, classes, punctuation and TLD, and round-trips', () => {
    const values = ['jane.doe@example.co.uk', 'J.Doe+tag@Mail-Server.example.org', 'a1@b2.io'];
    const { encrypted, decrypted } = roundTrip(emailKind, values, cipher);
    expect(decrypted).toEqual(values);
    encrypted.forEach((out, i) => {
      const input = values[i]!;
      expect(isEmail(out)).toBe(true);
      expect([...out].map(classOf)).toEqual([...input].map(classOf));
      expect(tldOf(out)).toBe(tldOf(input));
      expect(out).not.toBe(input);
    });
    expect(encrypted[1]).toMatch(/^[A-Z]\.[A-Z][a-z]{2}\+[a-z]{3}@[A-Z][a-z]{3}-[A-Z][a-z]{5}\.[a-z]{7}\.org$/);
  });

  it('groups the cipher calls by domain size, with the pattern in each tweak', () => {
    const { cipher: recording, calls } = recordingCipher(cipher);
    const results = emailKind.fpe(['ab@cd.io', 'nope', 'xy@zw.com', 'AB@cd.io', '12@cd.io', 'ab@cd.io'], 'encrypt', recording, 'en');
    expect(failures(results)).toEqual({ 1: 'invalid_value' });
    expect(calls.map((c) => [c.domain, c.count])).toEqual([[26n ** 4n, 4], [100n * 26n ** 2n, 1]]);
    const tweaks = (calls[0]!.tweaks as Uint8Array[]).map((t) => new TextDecoder().decode(t));
    expect(new Set(tweaks).size).toBe(3); // .io vs .com, lower vs upper local part; equal patterns share
    expect(results[0]).toBe(results[5]);
  });

  it('reports DOMAIN_TOO_SMALL for a value with too few letters and digits', () => {
    const results = emailKind.fpe(['_@x.io', '+-@9.io', 'ab@c.io', 'bad'], 'encrypt', cipher, 'en');
    expect(results.slice(0, 2)).toEqual([DOMAIN_TOO_SMALL, DOMAIN_TOO_SMALL]);
    expect(isEmail(results[2] as string)).toBe(true);
    expect(results[3]).toBe(INVALID_VALUE);
  });
});

describe('email: fpe properties', () => {
  it('round-trips exactly and keeps the form, classes and TLD', () => {
    fc.assert(fc.property(fc.array(validEmail, { minLength: 1, maxLength: 30 }), (values) => {
      const { encrypted, decrypted } = roundTrip(emailKind, values, cipher);
      expect(decrypted).toEqual(values);
      encrypted.forEach((out, i) => {
        const input = values[i]!;
        expect(isEmail(out)).toBe(true);
        expect([...out].map(classOf)).toEqual([...input].map(classOf));
        expect(tldOf(out)).toBe(tldOf(input));
      });
    }), { numRuns: 100 }); // short emails use the small-domain tables, built per pattern
  });

  it('changes emails in general', () => {
    const values = fc.sample(validEmail, { numRuns: 300, seed: 11 });
    const encrypted = encryptAll(emailKind, values, cipher);
    expect(encrypted.filter((out, i) => out === values[i]).length).toBeLessThan(3);
  });

  it('accepts exactly the documented form', () => {
    const near = fc.stringMatching(/^[a-c0-9.@_+-]{1,12}\.[a-z0-9]{1,3}$/);
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 20 }), near, validEmail), (value) => {
      expect(emailKind.isValid(value, 'en')).toBe(isEmail(value));
      if (!isEmail(value)) expect(emailKind.fpe([value], 'encrypt', cipher, 'en')).toEqual([INVALID_VALUE]);
    }), { numRuns: 2000 });
  });
});

describe('email: mask and redact', () => {
  it.each([
    ['jane.doe@example.co.uk', 'j*******@example.co.uk'],
    ['J.Doe+tag@Mail-Server.example.org', 'J********@Mail-Server.example.org'],
    ['a@b.io', 'a@b.io'],
  ])('mask %s → %s', (value, masked) => {
    expect(emailKind.mask(value, 'en')).toBe(masked);
  });

  it('redacts to the layout', () => {
    expect(emailKind.redact('jane.doe@example.co.uk', 'en')).toBe('****.***@*******.**.**');
  });

  it('never echoes a value that is not an email', () => {
    expect(emailKind.mask('jane.doe@example', 'en')).toBe('****.***@*******');
  });
});
