/**
 * A statement text without its quoted string constants and comments, as PostgreSQL's own scanner
 * splits it: what is left is the code (keywords, names, operators, $-quoted bodies). For word
 * checks that must not trip over a value such as `'password reset'`. Dollar-quoted strings stay:
 * they are often code (function bodies, DO blocks).
 */
import { scanSql, SqlSyntaxError } from './sqlParser.js';
import { CONTROL_CHARACTERS } from './parseWorker.js';

const QUOTED_CONSTANT = /^(?:[EeBbXxNn]|[Uu]&)?'/;

/** The code of `sql`, tokens joined by spaces; undefined when the scanner rejects the text. */
export function codeOutsideStrings(sql: string): string | undefined {
  try {
    return scanSql(sql.replace(CONTROL_CHARACTERS, ' '))
      .filter((token) => !QUOTED_CONSTANT.test(token.text))
      .map((token) => token.text)
      .join(' ');
  } catch (error) {
    if (error instanceof SqlSyntaxError) return undefined;
    throw error;
  }
}
