/**
 * COPY's text and CSV row layouts, at the byte level: finding where rows end in a stream (CSV
 * fields may hold newlines inside quotes), splitting a row into fields, reading a field's value
 * and writing one back. Only fields that change are re-encoded; the rest keep their bytes.
 */
import type { CopyOptions } from '../../sql/index.js';

const NL = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

export interface CopyField {
  readonly start: number;
  readonly end: number;
  /** CSV: the field was quoted (a quoted null string is a value). */
  readonly quoted: boolean;
}

/** Scans a byte stream for complete rows, keeping the CSV quote state across calls. */
export class RowScanner {
  private inQuotes = false;
  private scanned = 0;
  private readonly csv: boolean;
  private readonly quote: number;
  private readonly escape: number;

  constructor(options: CopyOptions) {
    this.csv = options.format === 'csv';
    this.quote = options.quote.charCodeAt(0);
    this.escape = options.escape.charCodeAt(0);
  }

  /**
   * The end (after the newline) of the first complete row of `bytes`, or -1. After -1, call again
   * with the same bytes grown; after a row, with the bytes that follow it.
   */
  nextRowEnd(bytes: Buffer): number {
    let i = this.scanned;
    if (!this.csv) {
      const at = bytes.indexOf(NL, i);
      if (at < 0) {
        this.scanned = bytes.length;
        return -1;
      }
      this.scanned = 0;
      return at + 1;
    }
    for (; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      if (this.inQuotes) {
        if (byte === this.escape && i + 1 >= bytes.length) {
          // An escape (or doubled quote) may straddle the chunk: decide when more bytes come.
          this.scanned = i;
          return -1;
        }
        const next = bytes[i + 1];
        if (byte === this.escape && (next === this.quote || next === this.escape)) i++;
        else if (byte === this.quote) this.inQuotes = false;
      } else if (byte === this.quote) {
        this.inQuotes = true;
      } else if (byte === NL) {
        this.scanned = 0;
        return i + 1;
      }
    }
    this.scanned = i;
    return -1;
  }
}

/**
 * Whether a row's content (without its line ending) holds a carriage return outside a quoted CSV
 * field. PostgreSQL takes a file's line ending from its first line, a bare CR included, and would
 * end a row there where pgveil, which ends rows at LF, does not; in text format it refuses such a
 * CR anyway, and in CSV only a quoted field may hold one.
 */
export function hasBareCarriageReturn(content: Buffer, options: CopyOptions): boolean {
  if (content.indexOf(CR) < 0) return false;
  if (options.format !== 'csv') return true;
  const quote = options.quote.charCodeAt(0);
  const escape = options.escape.charCodeAt(0);
  let inQuotes = false;
  for (let i = 0; i < content.length; i++) {
    const byte = content[i] as number;
    if (inQuotes) {
      const next = content[i + 1];
      if (byte === escape && (next === quote || next === escape)) i++;
      else if (byte === quote) inQuotes = false;
    } else if (byte === quote) inQuotes = true;
    else if (byte === CR) return true;
  }
  return false;
}

/** The row's content without its line ending: [start, end). */
export function rowContentEnd(bytes: Buffer, start: number, end: number): number {
  let stop = end;
  if (stop > start && bytes[stop - 1] === NL) stop--;
  if (stop > start && bytes[stop - 1] === CR) stop--;
  return stop;
}

export function splitFields(row: Buffer, options: CopyOptions): CopyField[] {
  const delimiter = options.delimiter.charCodeAt(0);
  const fields: CopyField[] = [];
  let start = 0;
  let quoted = false;
  if (options.format !== 'csv') {
    for (let i = 0; i < row.length; i++) {
      const byte = row[i] as number;
      if (byte === BACKSLASH) i++;
      else if (byte === delimiter) {
        fields.push({ start, end: i, quoted: false });
        start = i + 1;
      }
    }
    fields.push({ start, end: row.length, quoted: false });
    return fields;
  }
  const quote = options.quote.charCodeAt(0);
  const escape = options.escape.charCodeAt(0);
  let inQuotes = false;
  for (let i = 0; i < row.length; i++) {
    const byte = row[i] as number;
    if (inQuotes) {
      if (byte === escape && (row[i + 1] === quote || row[i + 1] === escape)) {
        i++;
      } else if (byte === quote) {
        inQuotes = false;
      }
    } else if (byte === quote) {
      inQuotes = true;
      quoted = true;
    } else if (byte === delimiter) {
      fields.push({ start, end: i, quoted });
      start = i + 1;
      quoted = false;
    }
  }
  fields.push({ start, end: row.length, quoted });
  return fields;
}

const TEXT_ESCAPES: Readonly<Record<string, number>> = { b: 8, f: 12, n: 10, r: 13, t: 9, v: 11 };

/** The value of a text-format field (escapes decoded), or null for the null string. */
export function readTextField(raw: Buffer, options: CopyOptions): string | null {
  const text = raw.toString('utf8');
  if (text === options.null) return null;
  if (!text.includes('\\')) return text;
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte !== BACKSLASH || i + 1 >= raw.length) {
      out.push(byte);
      continue;
    }
    const next = String.fromCharCode(raw[++i] as number);
    if (next >= '0' && next <= '7') {
      let digits = next;
      while (digits.length < 3 && /[0-7]/.test(String.fromCharCode(raw[i + 1] ?? 0))) digits += String.fromCharCode(raw[++i] as number);
      out.push(parseInt(digits, 8) & 0xff);
    } else if (next === 'x' && /[0-9a-fA-F]/.test(String.fromCharCode(raw[i + 1] ?? 0))) {
      let digits = String.fromCharCode(raw[++i] as number);
      if (/[0-9a-fA-F]/.test(String.fromCharCode(raw[i + 1] ?? 0))) digits += String.fromCharCode(raw[++i] as number);
      out.push(parseInt(digits, 16));
    } else {
      out.push(TEXT_ESCAPES[next] ?? (raw[i] as number));
    }
  }
  return Buffer.from(out).toString('utf8');
}

export function writeTextField(value: string, options: CopyOptions): string {
  const delimiter = options.delimiter;
  let out = '';
  for (const ch of value) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (ch === delimiter) out += `\\${ch}`;
    else out += ch;
  }
  return out;
}

/** The value of a CSV field, or null when PostgreSQL reads it as NULL for this column. */
export function readCsvField(raw: Buffer, field: CopyField, options: CopyOptions, forceNull: boolean, forceNotNull: boolean): string | null {
  const text = raw.toString('utf8');
  if (!field.quoted) {
    if (text === options.null && !forceNotNull) return null;
    return text;
  }
  const quote = options.quote;
  const escape = options.escape;
  let out = '';
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inQuotes) {
      if (ch === escape && (text[i + 1] === quote || text[i + 1] === escape)) {
        out += text[++i] as string;
      } else if (ch === quote) {
        inQuotes = false;
      } else {
        out += ch;
      }
    } else if (ch === quote) {
      inQuotes = true;
    } else {
      out += ch;
    }
  }
  if (forceNull && out === options.null) return null;
  return out;
}

/**
 * A CSV field for `value`: quoted when `always`, else as PostgreSQL writes it (quoted only when
 * it must be: it holds the delimiter, a quote, a line break, or reads as the null string).
 */
export function writeCsvField(value: string, options: CopyOptions, always = true): string {
  const quote = options.quote;
  const escape = options.escape;
  const needsQuotes = always || value === options.null || value.includes(options.delimiter) || value.includes(quote)
    || value.includes('\n') || value.includes('\r') || (escape !== quote && value.includes(escape));
  if (!needsQuotes) return value;
  let out = quote;
  for (const ch of value) {
    if (ch === quote || ch === escape) out += escape;
    out += ch;
  }
  return out + quote;
}

/** True for the `\.` end-of-data line. */
export function isEndMarker(row: Buffer): boolean {
  return row.length === 2 && row[0] === BACKSLASH && row[1] === 0x2e;
}
