/**
 * A text seen the way fpe sees it: the classed code points become numerals (each its index in
 * the alphabet it may take), everything else stays where it is. A value and its fpe image have
 * the same pattern (same classes at the same positions, same unclassed characters), so the
 * radices and the tweak computed here are the same on encrypt and on decrypt.
 */
import { createHash } from 'node:crypto';
import { charClass, classIdOf, indexInClass, UNCLASSED } from './charClassTable.js';
import { codePointsToString, isCombiningMark, isLetterOrDecimalDigit, toCodePoints } from './codePoints.js';
import { membersStableBefore } from './markComposition.js';

export interface LetterPattern {
  /** The NFC value, by code point. */
  readonly codePoints: readonly number[];
  /** Indexes into codePoints of the classed positions, in order. */
  readonly positions: readonly number[];
  /** Per classed position: the code points it may become. */
  readonly alphabets: readonly Uint32Array[];
  /** Per classed position: the index of its code point in its alphabet. */
  readonly numerals: readonly number[];
  /** Per classed position: the size of its alphabet. */
  readonly radices: readonly number[];
  /** Derived from the class of every position; independent of which members sit there. */
  readonly tweak: Uint8Array;
}

const TWEAK_LABEL = 'pgveil/text-fpe/v1';
const TWEAK_BYTES = 16;

function patternTweak(classNames: readonly string[]): Uint8Array {
  const digest = createHash('sha256').update(TWEAK_LABEL).update('\u0000').update(classNames.join(',')).digest();
  return new Uint8Array(digest.subarray(0, TWEAK_BYTES));
}

/**
 * The pattern of an NFC string, or null when it has a letter or digit that no class covers (an
 * unsupported script): fpe must fail rather than leave such a character readable.
 */
export function analyseLetters(nfcValue: string): LetterPattern | null {
  const codePoints = toCodePoints(nfcValue);
  const classIds = codePoints.map(classIdOf);
  const positions: number[] = [];
  const alphabets: Uint32Array[] = [];
  const numerals: number[] = [];
  const radices: number[] = [];
  const classNames: string[] = new Array<string>(codePoints.length).fill('');

  for (let i = 0; i < codePoints.length; i++) {
    const id = classIds[i] as number;
    const cp = codePoints[i] as number;
    if (id === UNCLASSED) {
      if (isLetterOrDecimalDigit(cp)) return null;
      continue;
    }
    if (id < 0) continue; // an in-place letter
    let marks = '';
    for (let j = i + 1; j < codePoints.length && classIds[j] === UNCLASSED; j++) {
      const next = codePoints[j] as number;
      if (!isCombiningMark(next)) break;
      marks += String.fromCodePoint(next);
    }
    const cls = charClass(id);
    const alphabet = marks ? membersStableBefore(id, marks) : cls.members;
    const numeral = alphabet === cls.members ? indexInClass(cp) : alphabet.indexOf(cp);
    if (numeral < 0) return null; // not NFC after all; cannot be mapped consistently
    positions.push(i);
    alphabets.push(alphabet);
    numerals.push(numeral);
    radices.push(alphabet.length);
    classNames[i] = cls.name;
  }
  return { codePoints, positions, alphabets, numerals, radices, tweak: patternTweak(classNames) };
}

/** The pattern's text with the classed positions set to `numerals` (one per position). */
export function renderLetters(pattern: LetterPattern, numerals: readonly number[]): string {
  const out = pattern.codePoints.slice();
  pattern.positions.forEach((pos, k) => {
    const cp = pattern.alphabets[k]?.[numerals[k] as number];
    if (cp === undefined) throw new RangeError('numeral outside its alphabet');
    out[pos] = cp;
  });
  return codePointsToString(out);
}
