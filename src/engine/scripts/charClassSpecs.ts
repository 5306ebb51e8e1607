/**
 * The character classes of the supported scripts, as explicit code point ranges. fpe maps a
 * character only to another member of its class (upper to upper, consonant to consonant,
 * hiragana to hiragana...), so the output reads as the same kind of text.
 *
 * When the tables are built (once, see charClassTable.ts) a range keeps the code points of the
 * spec's general category that NFC leaves alone; a code point already claimed by an earlier spec
 * or listed in IN_PLACE_LETTERS is skipped. Order therefore matters: narrow classes (ASCII, small
 * kana, Russian) come before the broad ones that share their blocks.
 *
 * A class is part of the ciphertext format: its members and their order must never change, or
 * stored fpe values stop decrypting. Hence ranges hold only code points assigned by Unicode 14
 * (the build refuses an unassigned one): a later Unicode version, which may fill a hole in a
 * block, cannot grow a class, and every Node version from 20 on builds identical tables.
 *
 * Combining marks (matras, virama, nukta, harakat, Thai vowels above and below, tone marks,
 * dakuten), joiners, spaces and punctuation have no class: they stay where they are.
 */
import type { ScriptId } from './scriptIds.js';

export type CodePointRange = readonly [first: number, last: number];

/** Which general category a class member must have. */
export type MemberCategory = 'Lu' | 'Ll' | 'L' | 'Nd';

export interface CharClassSpec {
  /** Stable name, e.g. "latin-upper-ascii"; it feeds the fpe tweak, so never rename one. */
  readonly name: string;
  readonly script: ScriptId;
  readonly category: MemberCategory;
  readonly ranges: readonly CodePointRange[];
}

export interface InPlaceLetterSpec {
  readonly script: ScriptId;
  readonly ranges: readonly CodePointRange[];
}

const one = (cp: number): CodePointRange => [cp, cp];

function spec(name: string, script: ScriptId, category: MemberCategory, ...ranges: CodePointRange[]): CharClassSpec {
  return { name, script, category, ranges };
}

const LATIN: CharClassSpec[] = [
  spec('latin-upper-ascii', 'latin', 'Lu', [0x41, 0x5a]),
  spec('latin-lower-ascii', 'latin', 'Ll', [0x61, 0x7a]),
  // Latin-1 Supplement and Latin Extended-A: the accented letters of de, fr, es, it.
  spec('latin-upper-accented', 'latin', 'Lu', [0xc0, 0x17f]),
  spec('latin-lower-accented', 'latin', 'Ll', [0xc0, 0x17f]),
  // ª º as in "1ª planta": letters, so they need a class of their own.
  spec('latin-ordinal', 'latin', 'L', one(0xaa), one(0xba)),
  spec('latin-upper-fullwidth', 'latin', 'Lu', [0xff21, 0xff3a]),
  spec('latin-lower-fullwidth', 'latin', 'Ll', [0xff41, 0xff5a]),
  spec('digit-ascii', 'latin', 'Nd', [0x30, 0x39]),
  spec('digit-fullwidth', 'latin', 'Nd', [0xff10, 0xff19]),
];

const CYRILLIC: CharClassSpec[] = [
  spec('cyrillic-upper-russian', 'cyrillic', 'Lu', one(0x401), [0x410, 0x42f]),
  spec('cyrillic-lower-russian', 'cyrillic', 'Ll', [0x430, 0x44f], one(0x451)),
  spec('cyrillic-upper-other', 'cyrillic', 'Lu', [0x400, 0x52f]),
  spec('cyrillic-lower-other', 'cyrillic', 'Ll', [0x400, 0x52f]),
];

const ARABIC: CharClassSpec[] = [
  spec('arabic-letter', 'arabic', 'L', [0x621, 0x63a], [0x641, 0x64a]),
  // Persian, Urdu and other extensions of the Arabic block and the Arabic Supplement.
  spec('arabic-letter-extended', 'arabic', 'L',
    one(0x620), [0x63b, 0x63f], [0x66e, 0x66f], [0x671, 0x6d3], one(0x6d5), [0x6ee, 0x6ef], [0x6fa, 0x6fc],
    one(0x6ff), [0x750, 0x77f]),
  spec('digit-arabic-indic', 'arabic', 'Nd', [0x660, 0x669]),
  spec('digit-extended-arabic-indic', 'arabic', 'Nd', [0x6f0, 0x6f9]),
];

const SINHALA: CharClassSpec[] = [
  spec('sinhala-vowel', 'sinhala', 'L', [0xd85, 0xd96]),
  spec('sinhala-consonant', 'sinhala', 'L', [0xd9a, 0xdb1], [0xdb3, 0xdbb], one(0xdbd), [0xdc0, 0xdc6]),
  spec('digit-sinhala', 'sinhala', 'Nd', [0xde6, 0xdef]),
];

const THAI: CharClassSpec[] = [
  spec('thai-consonant', 'thai', 'L', [0xe01, 0xe23], one(0xe25), [0xe27, 0xe2e]),
  spec('thai-leading-vowel', 'thai', 'L', [0xe40, 0xe44]),
  spec('thai-spacing-vowel', 'thai', 'L', one(0xe30), [0xe32, 0xe33]),
  // ฤ ฦ sit among the consonants but are vocalic letters.
  spec('thai-vocalic-letter', 'thai', 'L', one(0xe24), one(0xe26)),
  spec('digit-thai', 'thai', 'Nd', [0xe50, 0xe59]),
];

/** A Brahmic script: independent vowels, consonants, digits. */
function brahmic(
  script: ScriptId, vowels: CodePointRange[], consonants: CodePointRange[], digits: CodePointRange,
): CharClassSpec[] {
  return [
    spec(`${script}-vowel`, script, 'L', ...vowels),
    spec(`${script}-consonant`, script, 'L', ...consonants),
    spec(`digit-${script}`, script, 'Nd', digits),
  ];
}

// Nukta forms such as U+09DC are in some ranges; NFC decomposes them, so the build drops them.
const INDIC: CharClassSpec[] = [
  ...brahmic('devanagari', [[0x904, 0x914], [0x960, 0x961]], [[0x915, 0x939]], [0x966, 0x96f]),
  // Letters of Marathi, Sindhi, Marwari...: kept apart so Hindi stays Hindi-looking.
  spec('devanagari-vowel-extended', 'devanagari', 'L', [0x972, 0x977]),
  spec('devanagari-consonant-extended', 'devanagari', 'L', [0x978, 0x97f]),
  ...brahmic('bengali',
    [[0x985, 0x98c], [0x98f, 0x990], [0x993, 0x994], [0x9e0, 0x9e1]],
    [[0x995, 0x9a8], [0x9aa, 0x9b0], one(0x9b2), [0x9b6, 0x9b9], one(0x9ce), [0x9dc, 0x9dd], one(0x9df), [0x9f0, 0x9f1]],
    [0x9e6, 0x9ef]),
  // ੲ ੳ are the vowel bearers of Gurmukhi.
  ...brahmic('gurmukhi',
    [[0xa05, 0xa0a], [0xa0f, 0xa10], [0xa13, 0xa14], [0xa72, 0xa73]],
    [[0xa15, 0xa28], [0xa2a, 0xa30], [0xa32, 0xa33], [0xa35, 0xa36], [0xa38, 0xa39], [0xa59, 0xa5c], one(0xa5e)],
    [0xa66, 0xa6f]),
  ...brahmic('gujarati',
    [[0xa85, 0xa8d], [0xa8f, 0xa91], [0xa93, 0xa94], [0xae0, 0xae1]],
    [[0xa95, 0xaa8], [0xaaa, 0xab0], [0xab2, 0xab3], [0xab5, 0xab9], one(0xaf9)],
    [0xae6, 0xaef]),
  ...brahmic('oriya',
    [[0xb05, 0xb0c], [0xb0f, 0xb10], [0xb13, 0xb14], [0xb60, 0xb61]],
    [[0xb15, 0xb28], [0xb2a, 0xb30], [0xb32, 0xb33], [0xb35, 0xb39], [0xb5c, 0xb5d], one(0xb5f), one(0xb71)],
    [0xb66, 0xb6f]),
  ...brahmic('tamil',
    [[0xb85, 0xb8a], [0xb8e, 0xb90], [0xb92, 0xb94]],
    [one(0xb95), [0xb99, 0xb9a], one(0xb9c), [0xb9e, 0xb9f], [0xba3, 0xba4], [0xba8, 0xbaa], [0xbae, 0xbb9]],
    [0xbe6, 0xbef]),
  ...brahmic('telugu',
    [[0xc05, 0xc0c], [0xc0e, 0xc10], [0xc12, 0xc14], [0xc60, 0xc61]],
    [[0xc15, 0xc28], [0xc2a, 0xc39]],
    [0xc66, 0xc6f]),
  spec('telugu-consonant-extended', 'telugu', 'L', [0xc58, 0xc5a], one(0xc5d)),
  ...brahmic('kannada',
    [[0xc85, 0xc8c], [0xc8e, 0xc90], [0xc92, 0xc94], [0xce0, 0xce1]],
    [[0xc95, 0xca8], [0xcaa, 0xcb3], [0xcb5, 0xcb9], [0xcdd, 0xcde]],
    [0xce6, 0xcef]),
  ...brahmic('malayalam',
    [[0xd05, 0xd0c], [0xd0e, 0xd10], [0xd12, 0xd14], [0xd5f, 0xd61]],
    [[0xd15, 0xd3a]],
    [0xd66, 0xd6f]),
  // Chillu letters are dead consonants; a chillu stays a chillu so the word keeps its shape.
  spec('malayalam-chillu', 'malayalam', 'L', [0xd54, 0xd56], [0xd7a, 0xd7f]),
];

const SMALL_HIRAGANA: CodePointRange[] = [
  0x3041, 0x3043, 0x3045, 0x3047, 0x3049, 0x3063, 0x3083, 0x3085, 0x3087, 0x308e, 0x3095, 0x3096,
].map(one);
const SMALL_KATAKANA: CodePointRange[] = [
  ...[0x30a1, 0x30a3, 0x30a5, 0x30a7, 0x30a9, 0x30c3, 0x30e3, 0x30e5, 0x30e7, 0x30ee, 0x30f5, 0x30f6].map(one),
  [0x31f0, 0x31ff],
];

const JAPANESE: CharClassSpec[] = [
  spec('hiragana-small', 'hiragana', 'L', ...SMALL_HIRAGANA),
  // NFC composes kana with dakuten (か+゙ → が), so voiced kana are plain members here.
  spec('hiragana', 'hiragana', 'L', [0x3041, 0x3096]),
  spec('katakana-small', 'katakana', 'L', ...SMALL_KATAKANA),
  spec('katakana', 'katakana', 'L', [0x30a1, 0x30fa]),
  spec('katakana-halfwidth-small', 'katakana', 'L', [0xff67, 0xff6f]),
  spec('katakana-halfwidth', 'katakana', 'L', [0xff66, 0xff9d]),
];

const HAN_AND_HANGUL: CharClassSpec[] = [
  spec('han', 'han', 'L', [0x4e00, 0x9fff]),
  spec('han-extension-a', 'han', 'L', [0x3400, 0x4dbf]),
  spec('han-extension-b', 'han', 'L', [0x20000, 0x2a6df]),
  spec('hangul-syllable', 'hangul', 'L', [0xac00, 0xd7a3]),
  spec('hangul-compatibility-jamo', 'hangul', 'L', [0x3131, 0x318e]),
  spec('hangul-halfwidth-jamo', 'hangul', 'L',
    [0xffa0, 0xffbe], [0xffc2, 0xffc7], [0xffca, 0xffcf], [0xffd2, 0xffd7], [0xffda, 0xffdc]),
];

export const CHAR_CLASS_SPECS: readonly CharClassSpec[] = [
  ...LATIN, ...CYRILLIC, ...ARABIC, ...SINHALA, ...THAI, ...INDIC, ...JAPANESE, ...HAN_AND_HANGUL,
];

/**
 * Letters of supported scripts that carry no identity worth protecting and stay in place: length
 * and iteration marks, the Arabic tatweel, avagraha and om signs. Without this list they would
 * make a value unprotectable (a letter with no class fails fpe).
 */
export const IN_PLACE_LETTERS: readonly InPlaceLetterSpec[] = [
  { script: 'arabic', ranges: [one(0x640), [0x6e5, 0x6e6]] },
  { script: 'thai', ranges: [one(0xe2f), one(0xe45), one(0xe46)] },
  { script: 'devanagari', ranges: [one(0x93d), one(0x950), one(0x971)] },
  { script: 'bengali', ranges: [one(0x980), one(0x9bd), one(0x9fc)] },
  { script: 'gurmukhi', ranges: [one(0xa74)] },
  { script: 'gujarati', ranges: [one(0xabd), one(0xad0)] },
  { script: 'oriya', ranges: [one(0xb3d)] },
  { script: 'tamil', ranges: [one(0xb83), one(0xbd0)] },
  { script: 'telugu', ranges: [one(0xc3d)] },
  { script: 'kannada', ranges: [one(0xc80), one(0xcbd), [0xcf1, 0xcf2]] },
  { script: 'malayalam', ranges: [one(0xd04), one(0xd3d), one(0xd4e)] },
  { script: 'hiragana', ranges: [[0x309d, 0x309f]] },
  { script: 'katakana', ranges: [[0x30fc, 0x30ff], one(0xff70), [0xff9e, 0xff9f]] },
  { script: 'han', ranges: [[0x3005, 0x3006], [0x303b, 0x303c]] },
];
