/**
 * Whether a text names something that may change client_encoding or standard_conforming_strings:
 * the analysis and literal splicing read texts under UTF8 and standard strings, and a session
 * whose statement might change either is held to stricter rules until the server reports them.
 * Part of the analysis, so that a kept analysis answers it too for every text it is reused for.
 */
import { codeOutsideStrings } from './codeOutsideStrings.js';

// `u&`: a Unicode-escaped name (U&"set\005fconfig") spells any of these words without its letters.
const SETTING_WORDS = /client_encoding|standard_conforming_strings|set_config|pg_settings|\bnames\b|\breset\b|\bdiscard\b|u&/i;

export interface SettingWords {
  /** Anywhere in the text, string constants included: what counts while the settings are not the ones pgveil relies on. */
  readonly inText: boolean;
  /**
   * In the code outside string constants (read as the server reads them under the settings
   * pgveil relies on; a value `'password reset'` changes nothing); the whole text when the
   * scanner rejects it.
   */
  readonly inCode: boolean;
}

export const NO_SETTING_WORDS: SettingWords = Object.freeze({ inText: false, inCode: false });

/** One test over the whole text: false means neither of settingWordsOf's answers can be true. */
export function textNamesSettingWords(sql: string): boolean {
  return SETTING_WORDS.test(sql);
}

export function settingWordsOf(sql: string): SettingWords {
  if (!SETTING_WORDS.test(sql)) return NO_SETTING_WORDS;
  const code = codeOutsideStrings(sql);
  return { inText: true, inCode: code === undefined || SETTING_WORDS.test(code) };
}
