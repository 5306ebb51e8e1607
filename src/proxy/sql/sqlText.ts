/**
 * One SQL text seen as UTF-8 bytes, which is how the parser counts locations. The byte buffer and
 * the token list are built only when a statement needs them (literal ends, raw-text scans), so
 * the common case — parameters only — never scans.
 */
import { scanSql, type SqlToken } from './sqlParser.js';

export class SqlText {
  private bytes: Buffer | undefined;
  private tokenList: readonly SqlToken[] | undefined;

  constructor(readonly text: string) {}

  get buffer(): Buffer {
    this.bytes ??= Buffer.from(this.text, 'utf8');
    return this.bytes;
  }

  get byteLength(): number {
    return this.buffer.length;
  }

  /** The text between two byte offsets. */
  slice(start: number, end: number): string {
    return this.buffer.toString('utf8', start, end);
  }

  get tokens(): readonly SqlToken[] {
    // libpg-query 18's scanner emits control characters inside token text unescaped, which breaks
    // its JSON. Blanking them keeps every offset (one byte each) and every token boundary: after a
    // successful parse they can only sit inside strings, identifiers or comments — or be \v/\f
    // whitespace, which a space replaces exactly.
    this.tokenList ??= scanSql(this.text.replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f]/g, ' '));
    return this.tokenList;
  }

  /** Index of the token starting exactly at `start`, or -1. */
  private tokenIndexAt(start: number): number {
    const tokens = this.tokens;
    let low = 0;
    let high = tokens.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const token = tokens[middle] as SqlToken;
      if (token.start === start) return middle;
      if (token.start < start) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /**
   * End byte offset of the constant starting at `start`: one token, except a negative number
   * (the parser folds `-` into the constant and points at the `-`) and `U&'…' UESCAPE '…'`.
   * Undefined when no token starts there (the caller must then refuse to splice).
   */
  constantEnd(start: number): number | undefined {
    const index = this.tokenIndexAt(start);
    if (index < 0) return undefined;
    const tokens = this.tokens;
    const token = tokens[index] as SqlToken;
    if (token.text === '-') return tokens[index + 1]?.end;
    if (/^u&/i.test(token.text)) {
      const next = tokens[index + 1];
      if (next !== undefined && next.text.toUpperCase() === 'UESCAPE') return tokens[index + 2]?.end;
    }
    return token.end;
  }
}
