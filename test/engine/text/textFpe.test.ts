import { describe, expect, it } from 'vitest';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { addressKind } from '../../../src/engine/kinds/address.js';
import { cityKind } from '../../../src/engine/kinds/city.js';
import type { KindHandler } from '../../../src/engine/kinds/kind.js';
import { nameKind } from '../../../src/engine/kinds/name.js';
import { textKind } from '../../../src/engine/kinds/text.js';
import { charClass, classIdOf, detectScript } from '../../../src/engine/scripts/index.js';
import { REAL_NAMES, type RealNameSample } from '../../fixtures/realNames.js';
import { classIds, codePoints, expectString, fpeRoundTrip, recording, textTestCipher } from './textTestSupport.js';

const cipher = textTestCipher();
const FIELDS: readonly { field: keyof Omit<RealNameSample, 'lang'>; kind: KindHandler }[] = [
  { field: 'name', kind: nameKind },
  { field: 'city', kind: cityKind },
  { field: 'address', kind: addressKind },
  { field: 'address', kind: textKind },
];
const MARK_OR_JOINER = /^[\p{M}\u200c\u200d]$/u;

/** Everything the fpe contract promises about one value and its image. */
function expectFpeShape(input: string, output: string): void {
  const inCps = codePoints(input.normalize('NFC'));
  const outCps = codePoints(output);
  expect(output.normalize('NFC')).toBe(output);
  expect(outCps).toHaveLength(inCps.length);
  expect(classIds(output)).toEqual(classIds(input.normalize('NFC')));
  inCps.forEach((cp, i) => {
    if (classIdOf(cp) < 0) expect(outCps[i]).toBe(cp); // unclassed and in-place letters stay
  });
}

describe.each(FIELDS)('$kind.kind fpe on real $field samples', ({ field, kind }) => {
  it.each(REAL_NAMES)('$lang', (sample) => {
    const value = sample[field];
    const { encrypted, decrypted } = fpeRoundTrip(kind, value, cipher, sample.lang);
    expect(decrypted).toBe(value);
    expect(encrypted).not.toBe(value);
    expectFpeShape(value, encrypted);
    expect(detectScript(encrypted, sample.lang)).toBe(detectScript(value, sample.lang));
    // The marks, joiners and separators that shape the script are all still there, in place.
    const layout = (s: string) => [...s].map((ch) => (MARK_OR_JOINER.test(ch) || classIdOf(ch.codePointAt(0) as number) < 0 ? ch : '_')).join('');
    expect(layout(encrypted)).toBe(layout(value));
  });
});

describe('text fpe, script details', () => {
  it('keeps Devanagari matras, virama and anusvara in place', () => {
    const { encrypted } = fpeRoundTrip(nameKind, 'महात्मा गांधी', cipher, 'hi');
    const marks = (s: string) => [...s].filter((ch) => /\p{M}/u.test(ch)).join('');
    expect(marks(encrypted)).toBe(marks('महात्मा गांधी'));
    expect([...encrypted][4]).toBe('\u094d'); // the virama of त्म
  });

  it('keeps the ZWJ of Sinhala and Malayalam conjuncts', () => {
    const si = fpeRoundTrip(cityKind, 'ශ්‍රී ජයවර්ධනපුර කෝට්ටේ', cipher, 'si').encrypted;
    expect([...si].slice(1, 3)).toEqual(['\u0dca', '\u200d']);
    const ml = fpeRoundTrip(addressKind, 'കണ്ണന്‍ ദേവന്‍', cipher, 'ml').encrypted;
    expect([...ml].filter((ch) => ch === '\u200d')).toHaveLength(2);
    expect([...ml][6]).toBe('\u200d');
  });

  it('keeps Thai tone marks and maps leading vowels to leading vowels', () => {
    const input = 'เชียงใหม่';
    const out = [...fpeRoundTrip(cityKind, input, cipher, 'th').encrypted];
    expect(out[1]).not.toBeUndefined();
    expect(out[2]).toBe('\u0e35'); // sara ii above
    expect(out[8]).toBe('\u0e48'); // mai ek
    expect(charClass(classIdOf(out[0]?.codePointAt(0) as number)).name).toBe('thai-leading-vowel');
    expect(charClass(classIdOf(out[5]?.codePointAt(0) as number)).name).toBe('thai-leading-vowel');
  });

  it('maps NFC kana to kana of the same kind and keeps ー in place', () => {
    const out = fpeRoundTrip(nameKind, 'スズキ イチロー', cipher, 'ja').encrypted;
    expect([...out][7]).toBe('ー');
    expect(detectScript(out, 'ja')).toBe('katakana');
    const hira = fpeRoundTrip(cityKind, 'しぶやがわ', cipher, 'ja').encrypted;
    for (const ch of hira) expect(charClass(classIdOf(ch.codePointAt(0) as number)).name).toBe('hiragana');
  });

  it('keeps Arabic harakat in place', () => {
    const input = 'نَجِيب مَحْفُوظ';
    const out = fpeRoundTrip(nameKind, input, cipher, 'ar').encrypted;
    const harakat = (s: string) => [...s].map((ch) => (/\p{M}/u.test(ch) ? ch : '.')).join('');
    expect(harakat(out)).toBe(harakat(input));
  });

  it('never maps a base letter onto one NFC would compose with the marks after it', () => {
    // क + nukta stays decomposed in NFC (U+0958 is excluded), but न + nukta composes to U+0929;
    // q + dot above stays, but e + dot above composes to ė; あ + dakuten stays, か + dakuten is が.
    const samples = ['क़लम', 'q̇q̇q̇ q̇q̇', 'あ゙あ゙あ゙あ゙', 'ബ്‍ ഫ്‍'];
    for (const value of samples) {
      expect(value.normalize('NFC')).toBe(value);
      for (let i = 0; i < 30; i++) {
        const variant = value + ' ' + 'abcdefghij'.slice(0, i % 10);
        const { encrypted, decrypted } = fpeRoundTrip(textKind, variant, cipher);
        expect(decrypted).toBe(variant);
        expectFpeShape(variant, encrypted);
      }
    }
  });

  it('normalises to NFC first', () => {
    const nfd = 'Zürich Ōsaka が'.normalize('NFD');
    const { encrypted, decrypted } = fpeRoundTrip(cityKind, nfd, cipher);
    expect(decrypted).toBe(nfd.normalize('NFC'));
    expectFpeShape(nfd, encrypted);
  });

  it('gives the pinned answers under the test key (stored values depend on them)', () => {
    expect(nameKind.fpe(['Ada Lovelace', '東京', 'महात्मा गांधी', 'Li'], 'encrypt', cipher, 'en'))
      .toEqual(['Cah Rxcnlspg', '蜦欒', 'ङठाञ्ला गांघी', 'Vv']);
  });

  it('is deterministic and depends on the layout', () => {
    const a = expectString(nameKind.fpe(['Ada Lovelace'], 'encrypt', cipher, 'en')[0]);
    const b = expectString(nameKind.fpe(['Ada Lovelace'], 'encrypt', cipher, 'en')[0]);
    expect(a).toBe(b);
    // Same domain (3 + 8 letters of the same classes), other layout: not the same permutation.
    const c = expectString(nameKind.fpe(['Adalovelace'], 'encrypt', cipher, 'en')[0]);
    expect(c.slice(0, 3)).not.toBe(a.slice(0, 3));
  });
});

describe('text fpe, failures and batching', () => {
  it('fails closed on letters of unsupported scripts', () => {
    const results = nameKind.fpe(['Αθήνα', 'Paris Αθήνα', 'Paris', 'שלום עולם', '서울 ᄀ'], 'encrypt', cipher, 'en');
    expect(results[0]).toBe(INVALID_VALUE);
    expect(results[1]).toBe(INVALID_VALUE);
    expect(typeof results[2]).toBe('string');
    expect(results[3]).toBe(INVALID_VALUE);
    expect(results[4]).toBe(INVALID_VALUE); // a conjoining jamo
  });

  it('reports domains under MIN_DOMAIN, and invalid values', () => {
    const results = nameKind.fpe(['A', '...', 'Ab', 'Abc', '', 'a\u0000b', 'ab\ud800cd', 'Li'], 'encrypt', cipher, 'en');
    expect(results[0]).toBe(DOMAIN_TOO_SMALL); // 26
    expect(results[1]).toBe(DOMAIN_TOO_SMALL); // no letters at all
    expect(typeof results[2]).toBe('string'); // 26 × 26 = 676
    expect(typeof results[3]).toBe('string');
    expect(results[4]).toBe(INVALID_VALUE);
    expect(results[5]).toBe(INVALID_VALUE);
    expect(results[6]).toBe(INVALID_VALUE);
    expect(typeof results[7]).toBe('string');
  });

  it('allows line breaks in address and text only', () => {
    const value = '10 Downing Street\nLondon SW1A 2AA';
    expect(addressKind.isValid(value, 'en')).toBe(true);
    expect(textKind.isValid(value, 'en')).toBe(true);
    expect(nameKind.isValid(value, 'en')).toBe(false);
    expect(cityKind.isValid('Lon\tdon', 'en')).toBe(false);
    const { encrypted, decrypted } = fpeRoundTrip(addressKind, value, cipher);
    expect(decrypted).toBe(value);
    expect(encrypted.indexOf('\n')).toBe(value.indexOf('\n'));
  });

  it('makes one cipher call per distinct domain, in request order', () => {
    const { cipher: rec, calls } = recording(cipher);
    const values = ['Anna', 'Bert', 'Carl Smith', 'Dora', 'Emil Jones', 'Αθήνα', 'X'];
    const results = nameKind.fpe(values, 'encrypt', rec, 'en');
    expect(calls.map((c) => c.count).sort()).toEqual([2, 3]);
    expect(new Set(calls.map((c) => c.domain)).size).toBe(2);
    expect(results[5]).toBe(INVALID_VALUE);
    expect(results[6]).toBe(DOMAIN_TOO_SMALL);
    const back = nameKind.fpe(results.slice(0, 5).map(expectString), 'decrypt', rec, 'en');
    expect(back).toEqual(values.slice(0, 5));
  });

  it('gives the same tweak to a value and its image, and different tweaks to other layouts', () => {
    const { cipher: rec, calls } = recording(cipher);
    const enc = nameKind.fpe(['Ab Cd', 'Abc D'], 'encrypt', rec, 'en').map(expectString);
    nameKind.fpe(enc, 'decrypt', rec, 'en');
    const [encCall, decCall] = calls;
    expect(decCall?.tweaks).toEqual(encCall?.tweaks);
    const tweaks = encCall?.tweaks as Uint8Array[];
    expect(Buffer.from(tweaks[0] as Uint8Array).equals(Buffer.from(tweaks[1] as Uint8Array))).toBe(false);
  });

  it('handles long text in one integer', () => {
    const paragraph = REAL_NAMES.map((s) => `${s.name}, ${s.address}`).join('\n').repeat(5);
    const { encrypted, decrypted } = fpeRoundTrip(textKind, paragraph, cipher);
    expect(decrypted).toBe(paragraph);
    expectFpeShape(paragraph, encrypted);
  });
});
