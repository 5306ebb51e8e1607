/**
 * The Unicode scripts the text kinds (address, text, name, city) support, and which script each
 * `lang` writes in by default. Japanese spans three scripts (hiragana, katakana, han); each is its
 * own ScriptId so a katakana name tokenises to katakana and a kanji name to kanji.
 */
import type { Lang } from '../types.js';

export const SCRIPT_IDS = [
  'latin', 'cyrillic', 'arabic', 'sinhala', 'thai', 'devanagari',
  'hiragana', 'katakana', 'han', 'hangul',
  'telugu', 'kannada', 'tamil', 'bengali', 'gurmukhi', 'gujarati', 'oriya', 'malayalam',
] as const;
export type ScriptId = (typeof SCRIPT_IDS)[number];

const DEFAULT_SCRIPT: Readonly<Record<Lang, ScriptId>> = {
  en: 'latin', de: 'latin', fr: 'latin', es: 'latin', it: 'latin',
  ru: 'cyrillic',
  ar: 'arabic',
  si: 'sinhala',
  th: 'thai',
  hi: 'devanagari',
  // Kana is what only Japanese writes; han alone would be Chinese as well.
  ja: 'hiragana',
  ko: 'hangul',
  zh: 'han',
  te: 'telugu', kn: 'kannada', ta: 'tamil', bn: 'bengali', pa: 'gurmukhi',
  gu: 'gujarati', or: 'oriya', ml: 'malayalam',
};

/** The script a lang writes in when the value itself has no letters to tell. */
export function scriptForLang(lang: Lang): ScriptId {
  return DEFAULT_SCRIPT[lang];
}

export function isScriptId(value: unknown): value is ScriptId {
  return typeof value === 'string' && (SCRIPT_IDS as readonly string[]).includes(value);
}
