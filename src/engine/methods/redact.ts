/** The character that stands for a hidden letter or digit in mask and redact output. */
export const MASK_CHAR = '*';

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const MARK = /\p{M}/u;
/** 7-bit text has no marks and no joiners, and is already NFC: the masks read it byte by byte. */
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_LETTER_OR_DIGIT = /[A-Za-z0-9]/g;

export function isAscii(value: string): boolean {
  return ASCII_ONLY.test(value);
}

/**
 * Redact keeps only the layout: every letter and digit becomes MASK_CHAR, combining marks that
 * belonged to them disappear, separators and punctuation stay. "123-45-6789" → "***-**-****".
 */
export function redactLayout(value: string): string {
  if (isAscii(value)) return value.replace(ASCII_LETTER_OR_DIGIT, MASK_CHAR);
  // Pieces joined once, not `+=` per character: see maskText (kinds/textKind.ts).
  const out: string[] = [];
  for (const ch of value.normalize('NFC')) {
    if (LETTER_OR_DIGIT.test(ch)) out.push(MASK_CHAR);
    else if (!MARK.test(ch)) out.push(ch);
  }
  return out.join('');
}
