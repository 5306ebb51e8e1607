/**
 * Replaces constants in SQL text with other values (the protected ones), working in UTF-8 bytes
 * because that is how the parser reports where each constant starts and ends.
 */

export interface LiteralReplacement {
  /** UTF-8 byte range [start, end) of the constant in the original text. */
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

/**
 * A standard string constant for `value` ('' doubling). Correct while the session keeps
 * standard_conforming_strings on (PostgreSQL's default since 9.1): backslashes stay literal.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new RangeError('a SQL string constant cannot contain NUL');
  return `'${value.replace(/'/g, "''")}'`;
}

/** A byte range of the text and the SQL text to put there (a quoted constant, a renumbered `$n`). */
export interface TextReplacement {
  readonly start: number;
  readonly end: number;
  readonly token: string;
}

/** Returns `sql` with each UTF-8 byte range [start, end) replaced by its token, in any order given. */
export function spliceText(sql: string, replacements: readonly TextReplacement[]): string {
  if (replacements.length === 0) return sql;
  const bytes = Buffer.from(sql, 'utf8');
  const ordered = [...replacements].sort((a, b) => a.start - b.start);
  const parts: Buffer[] = [];
  let cursor = 0;
  for (const { start, end, token } of ordered) {
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < cursor || end < start || end > bytes.length) {
      throw new RangeError(`replacement [${start}, ${end}) overlaps another or lies outside the text`);
    }
    parts.push(bytes.subarray(cursor, start), Buffer.from(token, 'utf8'));
    cursor = end;
  }
  parts.push(bytes.subarray(cursor));
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Returns `sql` with each byte range replaced by the quoted value. A number replaced this way
 * becomes a string constant, which PostgreSQL coerces to the column's type like any unknown literal.
 */
export function spliceLiterals(sql: string, replacements: readonly LiteralReplacement[]): string {
  return spliceText(sql, replacements.map(({ start, end, value }) => ({ start, end, token: quoteLiteral(value) })));
}
