/**
 * The alphabet tokens are written in, per script: base letters only (no combining marks, no
 * small kana, no nukta forms), so any sequence of them is well-formed NFC text. A symbol's
 * position is its digit. These alphabets are part of the token format: never reorder or change
 * one, or stored tokens stop decoding.
 */
import type { CodePointRange } from './charClassSpecs.js';
import { SCRIPT_IDS, type ScriptId } from './scriptIds.js';

function fromText(text: string): CodePointRange[] {
  return Array.from(text, (ch) => {
    const cp = ch.codePointAt(0) as number;
    return [cp, cp] as const;
  });
}

const one = (cp: number): CodePointRange => [cp, cp];

const ALPHABET_RANGES: Readonly<Record<ScriptId, readonly CodePointRange[]>> = {
  latin: [[0x61, 0x7a], [0x41, 0x5a]], // a–z A–Z
  cyrillic: [[0x430, 0x44f], [0x410, 0x42f]], // а–я А–Я
  arabic: [[0x627, 0x63a], [0x641, 0x64a]], // ا … غ, ف … ي
  sinhala: [[0xd9a, 0xdb1], [0xdb3, 0xdbb], one(0xdbd), [0xdc0, 0xdc6]], // consonants
  thai: [[0xe01, 0xe23], one(0xe25), [0xe27, 0xe2e]], // consonants
  // Brahmic scripts: the consonants of the main block, nukta forms left out.
  devanagari: [[0x915, 0x939]],
  bengali: [[0x995, 0x9a8], [0x9aa, 0x9b0], one(0x9b2), [0x9b6, 0x9b9]],
  gurmukhi: [[0xa15, 0xa28], [0xa2a, 0xa30], one(0xa32), one(0xa35), [0xa38, 0xa39]],
  gujarati: [[0xa95, 0xaa8], [0xaaa, 0xab0], [0xab2, 0xab3], [0xab5, 0xab9]],
  oriya: [[0xb15, 0xb28], [0xb2a, 0xb30], [0xb32, 0xb33], [0xb35, 0xb39]],
  tamil: [one(0xb95), [0xb99, 0xb9a], one(0xb9c), [0xb9e, 0xb9f], [0xba3, 0xba4], [0xba8, 0xbaa], [0xbae, 0xbb9]],
  telugu: [[0xc15, 0xc28], [0xc2a, 0xc39]],
  kannada: [[0xc95, 0xca8], [0xcaa, 0xcb3], [0xcb5, 0xcb9]],
  malayalam: [[0xd15, 0xd39]],
  hiragana: fromText('あいうえおかがきぎくぐけげこごさざしじすずせぜそぞただちぢつづてでとどなにぬねのはばぱひびぴふぶぷへべぺほぼぽまみむめもやゆよらりるれろわゐゑをん'),
  katakana: fromText('アイウエオカガキギクグケゲコゴサザシジスズセゼソゾタダチヂツヅテデトドナニヌネノハバパヒビピフブプヘベペホボポマミムメモヤユヨラリルレロワヰヱヲンヴ'),
  han: [[0x4e00, 0x9fff]], // CJK Unified Ideographs
  hangul: [[0xac00, 0xd7a3]], // every precomposed syllable
};

export interface TokenAlphabet {
  readonly script: ScriptId;
  readonly symbols: Uint32Array;
  /** The digit of a symbol, or -1 when the code point is not in this alphabet. */
  digitOf(cp: number): number;
}

function makeAlphabet(script: ScriptId): TokenAlphabet {
  const symbols: number[] = [];
  for (const [first, last] of ALPHABET_RANGES[script]) {
    for (let cp = first; cp <= last; cp++) symbols.push(cp);
  }
  // Digits by code point minus the lowest symbol: an array lookup per character of a token
  // read back (every alphabet spans at most a block, 21k code points for Han).
  const low = Math.min(...symbols);
  const digits = new Int32Array(Math.max(...symbols) - low + 1).fill(-1);
  symbols.forEach((cp, digit) => {
    if (digits[cp - low] !== -1) throw new Error(`token alphabet of ${script} repeats a symbol`);
    digits[cp - low] = digit;
  });
  const digitOf = (cp: number): number => {
    const i = cp - low;
    return i >= 0 && i < digits.length ? (digits[i] as number) : -1;
  };
  return { script, symbols: Uint32Array.from(symbols), digitOf };
}

let alphabets: ReadonlyMap<ScriptId, TokenAlphabet> | undefined;
/** Which alphabet a code point belongs to; alphabets of different scripts never overlap. */
let owner: ReadonlyMap<number, TokenAlphabet> | undefined;

function build(): void {
  const byScript = new Map<ScriptId, TokenAlphabet>();
  const byCodePoint = new Map<number, TokenAlphabet>();
  for (const script of SCRIPT_IDS) {
    const alphabet = makeAlphabet(script);
    byScript.set(script, alphabet);
    for (const cp of alphabet.symbols) {
      if (byCodePoint.has(cp)) throw new Error(`token alphabets overlap at U+${cp.toString(16)}`);
      byCodePoint.set(cp, alphabet);
    }
  }
  alphabets = byScript;
  owner = byCodePoint;
}

export function tokenAlphabet(script: ScriptId): TokenAlphabet {
  if (!alphabets) build();
  const alphabet = alphabets?.get(script);
  if (!alphabet) throw new RangeError(`no token alphabet for ${script}`);
  return alphabet;
}

/** The alphabet that has this code point as a symbol, if any. */
export function tokenAlphabetOf(cp: number): TokenAlphabet | undefined {
  if (!owner) build();
  return owner?.get(cp);
}
