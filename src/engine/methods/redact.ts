/** The character that stands for a hidden letter or digit in mask and redact output. */
export const MASK_CHAR = '*';

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const MARK = /\p{M}/u;

/**
 * Redact keeps only the layout: every letter and digit becomes MASK_CHAR, combining marks that
 * belonged to them disappear, separators and punctuation stay. "123-45-6789" → "***-**-****".
 */
export function redactLayout(value: string): string {
  // Pieces joined once, not `+=` per character: see maskText (kinds/textKind.ts).
  const out: string[] = [];
  for (const ch of value.normalize('NFC')) {
    if (LETTER_OR_DIGIT.test(ch)) out.push(MASK_CHAR);
    else if (!MARK.test(ch)) out.push(ch);
  }
  return out.join('');
}
