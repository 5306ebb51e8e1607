import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectScript, SCRIPT_IDS, scriptForLang, tokenAlphabet, type ScriptId,
} from '../../../src/engine/scripts/index.js';
import { decodeScriptToken, encodeTokenInScript, TOKEN_GROUP_LENGTH } from '../../../src/engine/tokens/scriptToken.js';
import { LANGS } from '../../../src/engine/types.js';
import { REAL_NAMES } from '../../fixtures/realNames.js';
import { referenceDecodeScriptToken, referenceEncodeTokenInScript } from '../bigintReference.js';

const MARK = /^\p{M}$/u;

function symbolsOf(token: string): string[] {
  return [...token].filter((ch) => ch !== ' ');
}

function scriptOfSymbols(token: string): Set<ScriptId> {
  const scripts = new Set<ScriptId>();
  for (const ch of symbolsOf(token)) {
    const cp = ch.codePointAt(0) as number;
    for (const script of SCRIPT_IDS) {
      if (tokenAlphabet(script).digitOf(cp) >= 0) scripts.add(script);
    }
  }
  return scripts;
}

describe('token alphabets', () => {
  it.each(SCRIPT_IDS)('%s: distinct NFC base letters, no marks', (script) => {
    const alphabet = tokenAlphabet(script);
    expect(alphabet.symbols.length).toBeGreaterThanOrEqual(23);
    expect(new Set(alphabet.symbols).size).toBe(alphabet.symbols.length);
    for (const cp of alphabet.symbols) {
      const ch = String.fromCodePoint(cp);
      expect(/^\p{L}$/u.test(ch) && !MARK.test(ch)).toBe(true);
      expect(ch.normalize('NFC')).toBe(ch);
      expect(alphabet.digitOf(cp)).toBeGreaterThanOrEqual(0);
    }
  });

  it('keep their sizes (they are part of the token format)', () => {
    const sizes = Object.fromEntries(SCRIPT_IDS.map((s) => [s, tokenAlphabet(s).symbols.length]));
    expect(sizes).toEqual({
      latin: 52, cyrillic: 64, arabic: 30, sinhala: 41, thai: 44, devanagari: 37, hiragana: 73,
      katakana: 74, han: 20_992, hangul: 11_172, telugu: 36, kannada: 35, tamil: 23, bengali: 32,
      gurmukhi: 31, gujarati: 34, oriya: 34, malayalam: 37,
    });
  });

  it('uses a–z A–Z for Latin and the large blocks for Han and Hangul', () => {
    expect(String.fromCodePoint(...tokenAlphabet('latin').symbols)).toBe('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ');
    expect(tokenAlphabet('han').symbols.length).toBe(20_992);
    expect(tokenAlphabet('hangul').symbols.length).toBe(11_172);
  });

  it('gives every lang a script', () => {
    for (const lang of LANGS) expect(SCRIPT_IDS).toContain(scriptForLang(lang));
    expect(scriptForLang('ja')).toBe('hiragana');
    expect(scriptForLang('pa')).toBe('gurmukhi');
  });
});

describe('encodeTokenInScript / decodeScriptToken', () => {
  it.each(SCRIPT_IDS)('%s: round trips random bytes and stays in the script', (script) => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), (bytes) => {
        const token = encodeTokenInScript(bytes, script);
        expect(token.normalize('NFC')).toBe(token);
        expect([...scriptOfSymbols(token)]).toEqual([script]);
        expect(decodeScriptToken(token)).toEqual(bytes);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps leading zero bytes and the empty value', () => {
    for (const bytes of [new Uint8Array([]), new Uint8Array([0]), new Uint8Array([0, 0, 0, 7]), new Uint8Array(32)]) {
      for (const script of SCRIPT_IDS) expect(decodeScriptToken(encodeTokenInScript(bytes, script))).toEqual(bytes);
    }
  });

  it('writes groups of five separated by single spaces', () => {
    const token = encodeTokenInScript(new Uint8Array(40).fill(0xa5), 'latin');
    const groups = token.split(' ');
    expect(groups.length).toBeGreaterThan(2);
    for (const group of groups.slice(0, -1)) expect([...group]).toHaveLength(TOKEN_GROUP_LENGTH);
    expect([...(groups.at(-1) as string)].length).toBeGreaterThanOrEqual(1);
    expect(token).toMatch(/^[a-zA-Z]+( [a-zA-Z]+)*$/);
  });

  it('handles long values (code points, not UTF-16 units, in Han)', () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 131) & 0xff);
    const token = encodeTokenInScript(bytes, 'han');
    expect(decodeScriptToken(token)).toEqual(bytes);
    const latin = encodeTokenInScript(bytes, 'latin');
    expect(decodeScriptToken(latin)).toEqual(bytes);
  });

  it('is recognised from an NFD copy (kana and Hangul decompose under NFD)', () => {
    const bytes = new Uint8Array([1, 2, 3, 250, 251, 252, 9, 9, 9]);
    for (const script of ['hiragana', 'katakana', 'hangul'] as const) {
      expect(decodeScriptToken(encodeTokenInScript(bytes, script).normalize('NFD'))).toEqual(bytes);
    }
  });

  it('refuses what is no token', () => {
    const bytes = new Uint8Array([10, 20, 30, 40, 50, 60, 70, 80]);
    const latin = encodeTokenInScript(bytes, 'latin');
    const cyrillic = encodeTokenInScript(bytes, 'cyrillic');
    const mixed = `${latin.slice(0, 3)}${[...cyrillic][3]}${latin.slice(4)}`;
    expect(decodeScriptToken(mixed)).toBeNull(); // two scripts
    expect(decodeScriptToken(latin.replace(/^./u, '1'))).toBeNull(); // a digit is outside the alphabet
    expect(decodeScriptToken(latin.replace(/^./u, 'é'))).toBeNull(); // an accented letter too
    expect(decodeScriptToken(latin.replaceAll(' ', ''))).toBeNull(); // no groups
    expect(decodeScriptToken(`${latin} `)).toBeNull(); // trailing space
    expect(decodeScriptToken(` ${latin}`)).toBeNull(); // leading space
    expect(decodeScriptToken(latin.replace(' ', '  '))).toBeNull(); // double space
    expect(decodeScriptToken(`a${latin}`)).toBeNull(); // leading zero digit (a = 0)
    expect(decodeScriptToken('')).toBeNull();
    expect(decodeScriptToken(' ')).toBeNull();
    expect(decodeScriptToken('zzzzz')).toBeNull(); // a group of five, but no 0x01 sentinel
    expect(decodeScriptToken('c')).toBeNull(); // 2: no sentinel either
    expect(decodeScriptToken('b')).toEqual(new Uint8Array([])); // 1: the sentinel alone
    expect(decodeScriptToken('ab')).toBeNull(); // the same number behind a zero digit: not how a token is written
    expect(decodeScriptToken('абвгд б'.replace(/^./u, 'а'))).toBeNull(); // the same in Cyrillic (а = 0)
    expect(decodeScriptToken('क्षत्र')).toBeNull(); // a virama is not a token symbol
    expect(decodeScriptToken('Παρίσι')).toBeNull();
  });

  it('decodes any well-formed text in an alphabet only when the sentinel is there', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[b-z][a-zA-Z]{0,4}( [a-zA-Z]{5}){0,2}$/), (text) => {
        if (text.split(' ').slice(0, -1).some((g) => g.length !== 5)) return;
        const bytes = decodeScriptToken(text);
        if (bytes) expect(encodeTokenInScript(bytes, 'latin')).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the same tokens as the BigInt conversion', () => {
  const bytesOf = (got: Uint8Array | null) => (got === null ? null : [...got]);

  it.each(SCRIPT_IDS)('%s: encodes random bytes identically, and decodes or refuses edits identically', (script) => {
    const symbols = [...tokenAlphabet(script).symbols].map((cp) => String.fromCodePoint(cp));
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 90 }),
        fc.nat(),
        // ASCII that is no symbol, and a combining mark NFC folds into the letter before it.
        fc.constantFrom(...symbols, ' ', 'a', '\u00e9', '1', '~', '\u0301'),
        fc.constantFrom('replace', 'insert', 'delete', 'none'),
        (bytes, at, symbol, edit) => {
          const token = encodeTokenInScript(bytes, script);
          expect(token).toBe(referenceEncodeTokenInScript(bytes, script));
          const chars = [...token];
          const i = at % chars.length;
          if (edit === 'replace') chars[i] = symbol;
          if (edit === 'insert') chars.splice(i, 0, symbol);
          if (edit === 'delete') chars.splice(i, 1);
          const text = chars.join('');
          expect(bytesOf(decodeScriptToken(text))).toEqual(bytesOf(referenceDecodeScriptToken(text)));
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('tokens of the real samples', () => {
  it.each(REAL_NAMES)('$lang: in the script of the name, city and address', (sample) => {
    const bytes = new Uint8Array(24).map((_, i) => (i * 37 + sample.lang.charCodeAt(0)) & 0xff);
    bytes[0] = 0; // a leading zero byte must survive too
    for (const value of [sample.name, sample.city, sample.address]) {
      const script = detectScript(value, sample.lang);
      const token = encodeTokenInScript(bytes, script);
      expect(decodeScriptToken(token)).toEqual(bytes);
      expect([...scriptOfSymbols(token)]).toEqual([script]);
      expect(detectScript(token, sample.lang)).toBe(script);
    }
  });
});
