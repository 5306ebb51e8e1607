import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FF1 } from '../../../src/engine/crypto/ff1.js';
import { FF1_IMPLEMENTATIONS } from './nativeAddon.js';

interface Ff1Sample {
  sample: number;
  aes: number;
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

function toNumerals(text: string, alphabet: string): Uint16Array {
  return Uint16Array.from(text, (ch) => alphabet.indexOf(ch));
}

function fromNumerals(numerals: Uint16Array | undefined, alphabet: string): string {
  return Array.from(numerals ?? [], (x) => alphabet[x]).join('');
}

describe.each(FF1_IMPLEMENTATIONS)('FF1 NIST SP 800-38G samples (%s)', (_name, addon) => {
  it('has all nine samples', () => {
    expect(fixture.ff1.map((s) => s.sample)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  for (const s of fixture.ff1) {
    const key = Buffer.from(s.key, 'hex');
    const tweak = new Uint8Array(Buffer.from(s.tweak, 'hex'));

    it(`sample ${s.sample} (AES-${s.aes}, radix ${s.radix}) encrypts`, () => {
      expect(key.length * 8).toBe(s.aes);
      const ff1 = new FF1(key, s.radix, addon());
      const [out] = ff1.encrypt([toNumerals(s.plaintext, s.alphabet)], tweak);
      expect(fromNumerals(out, s.alphabet)).toBe(s.ciphertext);
    });

    it(`sample ${s.sample} (AES-${s.aes}, radix ${s.radix}) decrypts`, () => {
      const ff1 = new FF1(key, s.radix, addon());
      const [out] = ff1.decrypt([toNumerals(s.ciphertext, s.alphabet)], tweak);
      expect(fromNumerals(out, s.alphabet)).toBe(s.plaintext);
    });
  }

  it('gives the same results for all samples in one batch with per-value tweaks', () => {
    for (const aes of [128, 192, 256]) {
      const samples = fixture.ff1.filter((s) => s.aes === aes);
      const key = Buffer.from((samples[0] as Ff1Sample).key, 'hex');
      for (const radix of [10, 36]) {
        const group = samples.filter((s) => s.radix === radix);
        const ff1 = new FF1(key, radix, addon());
        const tweaks = group.map((s) => new Uint8Array(Buffer.from(s.tweak, 'hex')));
        const out = ff1.encrypt(group.map((s) => toNumerals(s.plaintext, s.alphabet)), tweaks);
        expect(out.map((x, j) => fromNumerals(x, (group[j] as Ff1Sample).alphabet))).toEqual(group.map((s) => s.ciphertext));
      }
    }
  });
});
