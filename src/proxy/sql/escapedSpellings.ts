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
 * A character a `UESCAPE` clause may name (one byte, not a hex digit, `+`, a quote or a space), where
 * it stands before what a Unicode escape needs: 4 hex digits, or `+` and 6.
 */
const ESCAPE_CANDIDATE = /([\x00-\x7f])(?=[0-9a-fA-F]{4}|\+[0-9a-fA-F]{6})/g;
const NOT_AN_ESCAPE_CHARACTER = /[0-9a-fA-F+'" \t\n\r\f]/;
const UESCAPE = /uescape/i;
/** More candidate escape characters than this in one text: not decoded, the text is taken as naming anything. */
const MAX_ESCAPE_CHARACTERS = 8;

/**
 * The characters that may introduce a Unicode escape in `text`: `\`, and, when it holds a
 * `UESCAPE`, every character that stands before what an escape needs (what the clause names is not
 * read: PostgreSQL nests comments and continues a string across lines, `UESCAPE /* /* *\/ '!' *\/ '#'`,
 * `UESCAPE ''⏎'#'`); undefined when there are more than MAX_ESCAPE_CHARACTERS of them. One
 * decoding per character keeps the scan linear in the text.
 */
function unicodeEscapeCharacters(text: string): Set<string> | undefined {
  const characters = new Set<string>(['\\']);
  if (!UESCAPE.test(text)) return characters;
  for (const [, character] of text.matchAll(ESCAPE_CANDIDATE)) {
    if (character === undefined || NOT_AN_ESCAPE_CHARACTER.test(character)) continue;
    characters.add(character);
    if (characters.size > MAX_ESCAPE_CHARACTERS + 1) return undefined;
  }
  return characters;
}

/** The readings of a text's escapes (escapedSpellings), or undecodable: take the text as naming anything. */
export type EscapedSpellings = { readonly readings: readonly string[]; readonly undecodable: boolean };

/** Decodings applied one after another: a body in a body in a body. */
const MAX_DECODINGS = 3;
/** More readings than this: the text is taken as naming anything rather than read so many times. */
const MAX_READINGS = 12;
/**
 * A longer text with escapes is taken as naming anything rather than decoded: its readings are
 * scanned on the event loop (about 3 ms per 64 KiB each, up to MAX_READINGS of them).
 */
const MAX_DECODED_LENGTH = 64 * 1024;

/**
 * The readings of `text` other than itself that its escapes may give: E'' escapes decoded, and
 * Unicode escapes decoded with each character that may introduce one, one after another up to
 * MAX_DECODINGS deep (a body nested in a body). Undecodable when a reading cannot be read (an
 * unreadable UESCAPE, too many readings) or would still decode further after the last decoding:
 * the caller then takes the text as naming every table, as it does a text with escapes longer than
 * MAX_DECODED_LENGTH. Empty for a text with neither a backslash nor `U&`.
 */
export function escapedSpellings(text: string): EscapedSpellings {
  if (!mayHoldEscapes(text)) return { readings: [], undecodable: false };
  if (text.length > MAX_DECODED_LENGTH) return { readings: [], undecodable: true };
  const readings = new Set<string>([text]);
  let layer = [text];
  for (let depth = 0; depth <= MAX_DECODINGS && layer.length > 0; depth++) {
    const next: string[] = [];
    for (const reading of layer) {
      const decoded = decodingsOf(reading);
      if (decoded === undefined) return { readings: [], undecodable: true };
      for (const other of decoded) {
        if (readings.has(other)) continue;
        if (depth === MAX_DECODINGS || readings.size >= MAX_READINGS) return { readings: [], undecodable: true };
        readings.add(other);
        next.push(other);
      }
    }
    layer = next;
  }
  readings.delete(text);
  return { readings: [...readings], undecodable: false };
}

/** The text once its E'' escapes are decoded, and once its Unicode escapes are, with each character that may introduce them. */
function decodingsOf(text: string): string[] | undefined {
  const decoded: string[] = [];
  if (text.includes('\\')) decoded.push(decodeBackslashEscapes(text));
  if (!UNICODE_PREFIX.test(text)) return decoded;
  const characters = unicodeEscapeCharacters(text);
  if (characters === undefined) return undefined;
  for (const escape of characters) decoded.push(decodeUnicodeEscapes(text, escape));
  return decoded;
}

/** Whether `text` may hold an escape that `escapedSpellings` decodes (a quick test, before the work). */
export function mayHoldEscapes(text: string): boolean {
  return text.includes('\\') || UNICODE_PREFIX.test(text);
}
