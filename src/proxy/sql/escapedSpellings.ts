/**
 * The other readings of a text whose names or strings PostgreSQL decodes: `E'…'` strings
 * (`\x63`, `\143`, `\u0063`, `\U00000063`, `\c`) and Unicode-escaped names and strings
 * (`U&"\0063ustomers"`, `U&'…'`, `\+000063`, any escape character set by `UESCAPE`). A function
 * body or DO block written as such a string, or a name written so inside one, spells a table's
 * name only once decoded. The name scan reads every reading: the escapes are decoded wherever they
 * stand (inside or outside a literal, whatever the nesting), which may decode more than the server
 * does but never less — a superset of the words PostgreSQL can see, so the scan fails closed.
 */

/**
 * One E'' escape, read left to right as the server reads it: a byte (hex, octal), a UTF-16 unit,
 * a code point, or any other character as itself (a control letter for b, f, n, r, t).
 */
const BACKSLASH_ESCAPE = /\\(?:x([0-9a-fA-F]{1,2})|([0-7]{1,3})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([\s\S]))/g;
const CONTROL_LETTERS: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
/** The characters UESCAPE may not name (and `\`, the default, tried anyway). */
const NOT_AN_ESCAPE_CHARACTER = /[0-9a-fA-F+'"\s]/;
const UNICODE_PREFIX = /u&/i;

function codePoint(hex: string): string {
  const value = Number.parseInt(hex, 16);
  return value <= 0x10ffff ? String.fromCodePoint(value) : '';
}

/** `text` with every E'' escape decoded, wherever it stands; bytes next to one another decoded together, as UTF-8. */
function decodeBackslashEscapes(text: string): string {
  const parts: string[] = [];
  let bytes: number[] = [];
  let last = 0;
  const flush = (): void => {
    if (bytes.length > 0) parts.push(Buffer.from(bytes).toString('utf8'));
    bytes = [];
  };
  for (const match of text.matchAll(BACKSLASH_ESCAPE)) {
    const [whole, hex, octal, unit, point, other] = match;
    if (match.index > last) {
      flush();
      parts.push(text.slice(last, match.index));
    }
    last = match.index + whole.length;
    if (hex !== undefined || octal !== undefined) {
      bytes.push(Number.parseInt(hex ?? octal ?? '0', hex === undefined ? 8 : 16) & 0xff);
      continue;
    }
    flush();
    if (unit !== undefined) parts.push(String.fromCharCode(Number.parseInt(unit, 16)));
    else if (point !== undefined) parts.push(codePoint(point));
    else parts.push(CONTROL_LETTERS[other ?? ''] ?? other ?? '');
  }
  flush();
  parts.push(text.slice(last));
  return parts.join('');
}

function escapeForRegExp(character: string): string {
  return character.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** `text` with every Unicode escape introduced by `escape` decoded, wherever it stands. */
function decodeUnicodeEscapes(text: string, escape: string): string {
  const e = escapeForRegExp(escape);
  const pattern = new RegExp(`${e}(?:([0-9a-fA-F]{4})|\\+([0-9a-fA-F]{6})|${e})`, 'g');
  // UTF-16 units stay as units: a surrogate pair written as two escapes makes one character again.
  return text.replace(pattern, (_whole, unit?: string, point?: string) => {
    if (unit !== undefined) return String.fromCharCode(Number.parseInt(unit, 16));
    if (point !== undefined) return codePoint(point);
    return escape;
  });
}

/**
 * The characters of `text` that may introduce a Unicode escape: each one followed by four hex
 * digits or by `+` and six (`\` always, whatever UESCAPE the text names or hides).
 */
function unicodeEscapeCharacters(text: string): Set<string> {
  const characters = new Set<string>(['\\']);
  for (const match of text.matchAll(/([\s\S])(?=[0-9a-fA-F]{4}|\+[0-9a-fA-F]{6})/g)) {
    const character = match[1] as string;
    if (!NOT_AN_ESCAPE_CHARACTER.test(character)) characters.add(character);
  }
  return characters;
}

/**
 * The readings of `text` other than itself that its escapes may give: E'' escapes decoded; then
 * Unicode escapes decoded (in the text and in that reading) with each character that may
 * introduce one; then E'' escapes decoded again in those (a body nested in a body). Empty for a
 * text with neither a backslash nor `U&`.
 */
export function escapedSpellings(text: string): string[] {
  const readings = new Set<string>([text]);
  const bases = text.includes('\\') ? [text, decodeBackslashEscapes(text)] : [text];
  for (const base of bases) {
    readings.add(base);
    if (!UNICODE_PREFIX.test(base)) continue;
    for (const escape of unicodeEscapeCharacters(base)) {
      const decoded = decodeUnicodeEscapes(base, escape);
      readings.add(decoded);
      if (decoded.includes('\\')) readings.add(decodeBackslashEscapes(decoded));
    }
  }
  readings.delete(text);
  return [...readings];
}

/** Whether `text` may hold an escape that `escapedSpellings` decodes (a quick test, before the work). */
export function mayHoldEscapes(text: string): boolean {
  return text.includes('\\') || UNICODE_PREFIX.test(text);
}
