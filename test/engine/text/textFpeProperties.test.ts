import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_DOMAIN } from '../../../src/engine/crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { textKind } from '../../../src/engine/kinds/text.js';
import { IN_PLACE_LETTERS } from '../../../src/engine/scripts/charClassSpecs.js';
import { charClasses, detectScript, SCRIPT_IDS, analyseLetters, type ScriptId } from '../../../src/engine/scripts/index.js';
import { mixedRadixDomain } from '../../../src/engine/scripts/mixedRadix.js';
import { classIds, codePoints, expectString, textTestCipher } from './textTestSupport.js';

const cipher = textTestCipher();

/** Where each script's combining marks live. */
const MARK_BLOCKS: Readonly<Record<ScriptId, readonly (readonly [number, number])[]>> = {
  latin: [[0x300, 0x36f]],
  cyrillic: [[0x483, 0x487], [0x300, 0x36f]],
  arabic: [[0x610, 0x61a], [0x64b, 0x65f], [0x670, 0x670], [0x6d6, 0x6ed]],
  sinhala: [[0xd80, 0xdff]],
  thai: [[0xe00, 0xe7f]],
  devanagari: [[0x900, 0x97f]],
  bengali: [[0x980, 0x9ff]],
  gurmukhi: [[0xa00, 0xa7f]],
  gujarati: [[0xa80, 0xaff]],
  oriya: [[0xb00, 0xb7f]],
  tamil: [[0xb80, 0xbff]],
  telugu: [[0xc00, 0xc7f]],
  kannada: [[0xc80, 0xcff]],
  malayalam: [[0xd00, 0xd7f]],
  hiragana: [[0x3099, 0x309a]],
  katakana: [[0x3099, 0x309a]],
  han: [],
  hangul: [],
};

function charPool(script: ScriptId): string[] {
  const pool = new Set<string>([' ', ',', '-', '.', '1', '7', '\u200c', '\u200d']);
  for (const cls of charClasses()) {
    if (cls.script !== script) continue;
    // Up to 40 members per class, spread over the whole class.
    const step = Math.max(1, Math.floor(cls.members.length / 40));
    for (let i = 0; i < cls.members.length; i += step) pool.add(String.fromCodePoint(cls.members[i] as number));
  }
  for (const [first, last] of MARK_BLOCKS[script]) {
    for (let cp = first; cp <= last; cp++) {
      const ch = String.fromCodePoint(cp);
      if (/^\p{M}$/u.test(ch)) pool.add(ch);
    }
  }
  for (const spec of IN_PLACE_LETTERS) {
    if (spec.script === script) for (const [first] of spec.ranges) pool.add(String.fromCodePoint(first));
  }
  return [...pool];
}

describe.each(SCRIPT_IDS)('text fpe properties: %s', (script) => {
  const pool = charPool(script);
  const texts = fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 40 }).map((chars) => chars.join(''));

  it('round trips and keeps classes, layout, script and NFC', () => {
    fc.assert(
      fc.property(texts, (value) => {
        const nfc = value.normalize('NFC');
        const [result] = textKind.fpe([value], 'encrypt', cipher, 'en');
        const pattern = analyseLetters(nfc);
        if (!pattern) {
          // NFC composed a letter no class covers (e.g. Vietnamese ệ from e + marks).
          expect(result).toBe(INVALID_VALUE);
          return;
        }
        if (mixedRadixDomain(pattern.radices) < BigInt(MIN_DOMAIN)) {
          expect(result).toBe(DOMAIN_TOO_SMALL);
          return;
        }
        const encrypted = expectString(result);
        expect(encrypted.normalize('NFC')).toBe(encrypted);
        expect(classIds(encrypted)).toEqual(classIds(nfc));
        const inCps = codePoints(nfc);
        const outCps = codePoints(encrypted);
        inCps.forEach((cp, i) => {
          if ((classIds(nfc)[i] as number) < 0) expect(outCps[i]).toBe(cp);
        });
        expect(detectScript(encrypted, 'en')).toBe(detectScript(nfc, 'en'));
        expect(textKind.fpe([encrypted], 'decrypt', cipher, 'en')).toEqual([nfc]);
      }),
      { numRuns: 40 },
    );
  });
});
