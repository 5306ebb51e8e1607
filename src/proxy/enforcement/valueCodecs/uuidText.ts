/**
 * PostgreSQL's uuid input forms, read the way its uuid_in reads them: an optional `{`, 32 hex
 * digits in either case with at most one hyphen after any group of four (never after the last),
 * and the matching `}`. Nothing else, not even surrounding spaces. One pass, no regex.
 */
const HEX_DIGITS = 32;

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** The canonical lowercase 8-4-4-4-12 form of a uuid PostgreSQL accepts; undefined for anything else. */
export function canonicalUuidText(text: string): string | undefined {
  let at = 0;
  const braced = text.charCodeAt(0) === 123; // {
  if (braced) at++;
  let hex = '';
  for (let digit = 0; digit < HEX_DIGITS; digit++) {
    const code = text.charCodeAt(at);
    if (!isHexDigit(code)) return undefined;
    hex += text[at];
    at++;
    const afterGroupOfFour = digit % 4 === 3 && digit < HEX_DIGITS - 1;
    if (afterGroupOfFour && text.charCodeAt(at) === 45) at++; // -
  }
  if (braced) {
    if (text.charCodeAt(at) !== 125) return undefined; // }
    at++;
  }
  if (at !== text.length) return undefined;
  const lower = hex.toLowerCase();
  return `${lower.slice(0, 8)}-${lower.slice(8, 12)}-${lower.slice(12, 16)}-${lower.slice(16, 20)}-${lower.slice(20)}`;
}
