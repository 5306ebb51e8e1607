/** Strings as arrays of code points (not UTF-16 units), and back; per-code-point properties. */

export function toCodePoints(text: string): number[] {
  return Array.from(text, (ch) => ch.codePointAt(0) as number);
}

/**
 * The string of the code points. Built as UTF-16 units with String.fromCharCode, several times
 * faster than String.fromCodePoint, in slices so long texts do not overflow the argument limit.
 */
export function codePointsToString(codePoints: ArrayLike<number>): string {
  const SLICE = 8192;
  let text = '';
  const units: number[] = [];
  for (let i = 0; i < codePoints.length; i++) {
    const cp = codePoints[i] as number;
    if (cp >>> 0 !== cp || cp > 0x10ffff) throw new RangeError(`invalid code point ${cp}`);
    if (cp < 0x10000) units.push(cp);
    else units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + (cp & 0x3ff));
    if (units.length >= SLICE) {
      text += String.fromCharCode.apply(null, units);
      units.length = 0;
    }
  }
  return text + String.fromCharCode.apply(null, units);
}

const KNOWN = 1;
const MARK = 2;
const LETTER_OR_DIGIT = 4;
const MARK_RE = /^\p{M}$/u;
const LETTER_OR_DIGIT_RE = /^[\p{L}\p{Nd}]$/u;

/** Properties of every code point, computed on first sight: 1 byte each, 1.1 MB in all. */
let flags: Uint8Array | undefined;

function flagsOf(cp: number): number {
  flags ??= new Uint8Array(0x110000);
  let f = flags[cp] as number;
  if (f === 0) {
    const ch = String.fromCodePoint(cp);
    f = KNOWN | (MARK_RE.test(ch) ? MARK : 0) | (LETTER_OR_DIGIT_RE.test(ch) ? LETTER_OR_DIGIT : 0);
    flags[cp] = f;
  }
  return f;
}

/** \p{M}: a combining mark (matra, virama, nukta, haraka, tone mark, dakuten...). */
export function isCombiningMark(cp: number): boolean {
  return (flagsOf(cp) & MARK) !== 0;
}

/** \p{L} or \p{Nd}. */
export function isLetterOrDecimalDigit(cp: number): boolean {
  return (flagsOf(cp) & LETTER_OR_DIGIT) !== 0;
}
