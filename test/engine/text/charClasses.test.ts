import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  charClass, charClasses, classIdOf, indexInClass, inPlaceLetterScript, IN_PLACE_LETTER, UNCLASSED,
} from '../../../src/engine/scripts/charClassTable.js';

const className = (cp: number): string | undefined => {
  const id = classIdOf(cp);
  return id >= 0 ? charClass(id).name : undefined;
};

/**
 * The classes are part of the fpe ciphertext format: a changed member or order would stop stored
 * values from decrypting. This pins them; change it only together with a key/format version.
 */
const CLASS_TABLE_FINGERPRINT = 'eef0387dcfaeaf623d2aa68b08b19b47de8ee6722560faca582f8f9fa5f9cb46';

describe('character classes', () => {
  it('are pinned (members and order never change silently)', () => {
    const hash = createHash('sha256');
    for (const cls of charClasses()) hash.update(`${cls.name}:${Array.from(cls.members, (cp) => cp.toString(16)).join(',')}\n`);
    expect(hash.digest('hex')).toBe(CLASS_TABLE_FINGERPRINT);
  });

  it('are disjoint, and each member looks itself up', () => {
    const seen = new Set<number>();
    const wrong: string[] = [];
    for (const cls of charClasses()) {
      cls.members.forEach((cp, index) => {
        if (seen.has(cp) || classIdOf(cp) !== cls.id || indexInClass(cp) !== index) wrong.push(cp.toString(16));
        seen.add(cp);
      });
    }
    expect(wrong).toEqual([]);
  });

  it('hold only NFC-stable letters (or digits for digit classes), never marks', () => {
    for (const cls of charClasses()) {
      const category = cls.isDigit ? /^\p{Nd}$/u : /^\p{L}$/u;
      const wrong = Array.from(cls.members).filter((cp) => {
        const ch = String.fromCodePoint(cp);
        return !category.test(ch) || ch.normalize('NFC') !== ch;
      });
      expect(wrong, cls.name).toEqual([]);
    }
  });

  it('have the expected sizes', () => {
    const size = (name: string) => charClasses().find((c) => c.name === name)?.members.length;
    expect(size('latin-upper-ascii')).toBe(26);
    expect(size('latin-lower-ascii')).toBe(26);
    expect(size('cyrillic-upper-russian')).toBe(33);
    expect(size('cyrillic-lower-russian')).toBe(33);
    expect(size('hangul-syllable')).toBe(11_172);
    expect(size('han')).toBe(20_992);
    expect(size('thai-consonant')).toBe(44);
    expect(size('thai-leading-vowel')).toBe(5);
    expect(size('digit-ascii')).toBe(10);
    expect(size('digit-devanagari')).toBe(10);
  });

  it('separate case, accents, consonants from vowels, kana kinds', () => {
    expect(className(0x41)).toBe('latin-upper-ascii'); // A
    expect(className(0x61)).toBe('latin-lower-ascii'); // a
    expect(className(0xc9)).toBe('latin-upper-accented'); // É
    expect(className(0xdf)).toBe('latin-lower-accented'); // ß
    expect(className(0xaa)).toBe('latin-ordinal'); // ª
    expect(className(0x401)).toBe('cyrillic-upper-russian'); // Ё
    expect(className(0x451)).toBe('cyrillic-lower-russian'); // ё
    expect(className(0x456)).toBe('cyrillic-lower-other'); // і
    expect(className(0x915)).toBe('devanagari-consonant'); // क
    expect(className(0x905)).toBe('devanagari-vowel'); // अ
    expect(className(0xd9a)).toBe('sinhala-consonant'); // ක
    expect(className(0xd85)).toBe('sinhala-vowel'); // අ
    expect(className(0xe01)).toBe('thai-consonant'); // ก
    expect(className(0xe40)).toBe('thai-leading-vowel'); // เ
    expect(className(0xe32)).toBe('thai-spacing-vowel'); // า
    expect(className(0x304c)).toBe('hiragana'); // が
    expect(className(0x3063)).toBe('hiragana-small'); // っ
    expect(className(0x30ac)).toBe('katakana'); // ガ
    expect(className(0x30c3)).toBe('katakana-small'); // ッ
    expect(className(0xd7bb)).toBeUndefined(); // a conjoining jamo: unsupported, no class
    expect(className(0xac00)).toBe('hangul-syllable'); // 가
    expect(className(0x4e2d)).toBe('han'); // 中
    expect(className(0x20000)).toBe('han-extension-b');
    expect(className(0x627)).toBe('arabic-letter'); // ا
    expect(className(0x67e)).toBe('arabic-letter-extended'); // پ
    expect(className(0xd7b)).toBe('malayalam-chillu'); // ൻ
    expect(className(0x30)).toBe('digit-ascii');
    expect(className(0x660)).toBe('digit-arabic-indic');
    expect(className(0x9e6)).toBe('digit-bengali');
    expect(className(0xe50)).toBe('digit-thai');
  });

  it('leave combining marks, joiners, spaces and punctuation unclassed', () => {
    const unclassed = [
      0x93e, 0x93f, 0x94d, 0x93c, 0x902, 0x901, 0x903, // Devanagari matras, virama, nukta, anusvara, candrabindu, visarga
      0x9cd, 0xa4d, 0xacd, 0xb4d, 0xbcd, 0xc4d, 0xccd, 0xd4d, // viramas
      0xdca, 0xdcf, 0xdd9, // Sinhala al-lakuna and vowel signs
      0x64b, 0x64e, 0x64f, 0x650, 0x651, 0x652, 0x670, // harakat, shadda, sukun, superscript alef
      0xe31, 0xe34, 0xe38, 0xe48, 0xe49, 0xe4a, 0xe4b, 0xe4c, // Thai vowels above/below, tone marks
      0x3099, 0x309a, 0x309b, 0x309c, // dakuten and handakuten
      0x200c, 0x200d, 0x20, 0xa0, 0x3000, 0x2c, 0x2e, 0x2d, 0x60c, 0x3001, 0x3002, 0xe3f, 0x2f,
    ];
    for (const cp of unclassed) expect(classIdOf(cp), `U+${cp.toString(16)}`).toBe(UNCLASSED);
  });

  it('leave every combining mark of the BMP unclassed', () => {
    const classedMarks: number[] = [];
    for (let cp = 0; cp < 0x10000; cp++) {
      if (/^\p{M}$/u.test(String.fromCodePoint(cp)) && classIdOf(cp) !== UNCLASSED) classedMarks.push(cp);
    }
    expect(classedMarks).toEqual([]);
  });

  it('cover every NFC letter and digit of the supported blocks (Unicode 14), or keep it in place', () => {
    const blocks = [
      [0x41, 0x7a], [0xc0, 0x17f], [0x400, 0x52f], [0x600, 0x6ff], [0x750, 0x77f], [0x900, 0xdff],
      [0xe00, 0xe7f], [0x3040, 0x30ff], [0x31f0, 0x31ff], [0x3131, 0x318e], [0x3400, 0x4dbf],
      [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0xff00, 0xffef],
    ] as const;
    // Assigned after Unicode 14, so left out of the frozen tables (see charClassSpecs.ts).
    const newerThanUnicode14 = new Set([0xc5c, 0xcdc]);
    const missing: string[] = [];
    for (const [first, last] of blocks) {
      for (let cp = first; cp <= last; cp++) {
        const ch = String.fromCodePoint(cp);
        if (!/^[\p{L}\p{Nd}]$/u.test(ch) || ch.normalize('NFC') !== ch || newerThanUnicode14.has(cp)) continue;
        if (classIdOf(cp) === UNCLASSED) missing.push(cp.toString(16));
      }
    }
    expect(missing).toEqual([]);
  });

  it('keep length and iteration marks in place with their script', () => {
    expect(classIdOf(0x30fc)).toBe(IN_PLACE_LETTER); // ー
    expect(inPlaceLetterScript(0x30fc)).toBe('katakana');
    expect(classIdOf(0x3005)).toBe(IN_PLACE_LETTER); // 々
    expect(classIdOf(0x640)).toBe(IN_PLACE_LETTER); // tatweel
    expect(classIdOf(0xe46)).toBe(IN_PLACE_LETTER); // ๆ
    expect(inPlaceLetterScript(0x41)).toBeUndefined();
  });

  it('has no class for letters of unsupported scripts', () => {
    for (const ch of 'αβγΩאבגᚠ') expect(classIdOf(ch.codePointAt(0) as number)).toBe(UNCLASSED);
  });
});
