/**
 * One SQL text seen as UTF-8 bytes, which is how the parser counts locations. The byte buffer and
 * the token list are built only when a statement needs them (literal ends, raw-text scans), so
 * the common case — parameters only — never scans. A long text's tokens come from the worker
 * that parsed it (parseWorker), as offsets only.
 */
import { CONTROL_CHARACTERS, scannedAhead } from './parseWorker.js';
import { scanSql, SqlSyntaxError } from './sqlParser.js';

interface TokenOffsets {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

export class SqlText {
  private bytes: Buffer | undefined;
  private offsets: TokenOffsets | undefined;

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

  private get tokens(): TokenOffsets {
    if (this.offsets !== undefined) return this.offsets;
    const ahead = scannedAhead(this.text);
    if (ahead !== undefined) {
      if ('scanError' in ahead) throw new SqlSyntaxError(ahead.scanError);
      this.offsets = ahead;
      return ahead;
    }
    const tokens = scanSql(this.text.replace(CONTROL_CHARACTERS, ' '));
    this.offsets = { starts: Int32Array.from(tokens, (token) => token.start), ends: Int32Array.from(tokens, (token) => token.end) };
    return this.offsets;
  }

  private tokenText(index: number): string | undefined {
    const { starts, ends } = this.tokens;
    return index < starts.length ? this.slice(starts[index] as number, ends[index] as number) : undefined;
  }

  /** Index of the token starting exactly at `start`, or -1. */
  private tokenIndexAt(start: number): number {
    const { starts } = this.tokens;
    let low = 0;
    let high = starts.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = starts[middle] as number;
      if (at === start) return middle;
      if (at < start) low = middle + 1;
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
    const { ends } = this.tokens;
    const text = this.tokenText(index) as string;
    if (text === '-') return ends[index + 1];
    if (/^u&/i.test(text) && this.tokenText(index + 1)?.toUpperCase() === 'UESCAPE') return ends[index + 2];
    return ends[index];
  }
}
