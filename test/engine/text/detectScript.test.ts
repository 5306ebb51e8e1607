import { describe, expect, it } from 'vitest';
import { detectScript } from '../../../src/engine/scripts/index.js';
import { REAL_NAMES } from '../../fixtures/realNames.js';

const EXPECTED_SCRIPT = {
  en: 'latin', de: 'latin', fr: 'latin', es: 'latin', it: 'latin', ru: 'cyrillic', ar: 'arabic',
  si: 'sinhala', th: 'thai', hi: 'devanagari', ko: 'hangul', zh: 'han', te: 'telugu',
  kn: 'kannada', ta: 'tamil', bn: 'bengali', pa: 'gurmukhi', gu: 'gujarati', or: 'oriya', ml: 'malayalam',
} as const;

describe('detectScript', () => {
  it.each(REAL_NAMES.filter((s) => s.lang !== 'ja'))('finds the script of $lang samples', (sample) => {
    const expected = EXPECTED_SCRIPT[sample.lang as keyof typeof EXPECTED_SCRIPT];
    expect(detectScript(sample.name, sample.lang)).toBe(expected);
    expect(detectScript(sample.city, sample.lang)).toBe(expected);
    expect(detectScript(sample.address, sample.lang)).toBe(expected);
  });

  it('tells the three Japanese scripts apart', () => {
    expect(detectScript('スズキ イチロー', 'ja')).toBe('katakana');
    expect(detectScript('さいたま', 'ja')).toBe('hiragana');
    expect(detectScript('東京都千代田区千代田1-1', 'ja')).toBe('han');
    expect(detectScript('夏目漱石', 'ja')).toBe('han');
  });

  it('counts letters, not digits or punctuation', () => {
    expect(detectScript('Moscow 123', 'ru')).toBe('latin');
    expect(detectScript('ул. Тверская 7, Moscow', 'en')).toBe('cyrillic');
  });

  it('gives a value with no letters the lang default', () => {
    expect(detectScript('12-34', 'hi')).toBe('devanagari');
    expect(detectScript('…', 'ja')).toBe('hiragana');
    expect(detectScript('42', 'en')).toBe('latin');
    expect(detectScript('Αθήνα', 'ru')).toBe('cyrillic'); // Greek is not supported
  });

  it('breaks ties in favour of the lang, then of the first script seen', () => {
    expect(detectScript('abc где', 'ru')).toBe('cyrillic');
    expect(detectScript('abc где', 'en')).toBe('latin');
    expect(detectScript('abc где', 'hi')).toBe('latin');
    expect(detectScript('東京タワ', 'ja')).toBe('han');
  });

  it('uses in-place letters only when nothing else tells', () => {
    expect(detectScript('ー', 'en')).toBe('katakana');
  });

  it('works on NFD input', () => {
    expect(detectScript('がぎぐ'.normalize('NFD'), 'en')).toBe('hiragana');
  });
});
