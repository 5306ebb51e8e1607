/**
 * Reading the protocol messages the proxy looks inside: Query, Parse, Bind, Describe, Execute,
 * Close, CopyData on the way in; RowDescription, DataRow, ParameterDescription, CommandComplete,
 * ParameterStatus and ReadyForQuery on the way out. Every function takes a whole frame (type byte and
 * length included). Writing them is `messages.ts`.
 */

/**
 * A message pgveil cannot read faithfully: the session ends with 08P01 and this message, which
 * names the rule and never a value.
 */
export class ProtocolViolation extends Error {}

// ignoreBOM: a leading U+FEFF stays part of the text (by default it is dropped: two names would read alike).
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Statement and portal names are tracked by their decoded text, so two different byte strings
 * must never decode alike: lenient UTF-8 turns every invalid byte into U+FFFD, and a Bind could
 * then run a statement pgveil takes for another one.
 */
function decodeName(bytes: Buffer): string {
  for (let i = 0; i < bytes.length; i++) {
    if ((bytes[i] as number) >= 0x80) {
      try {
        return STRICT_UTF8.decode(bytes);
      } catch {
        throw new ProtocolViolation('prepared statement and portal names must be valid UTF-8: pgveil tells statements apart by their names');
      }
    }
  }
  return bytes.toString('latin1');
}

/**
 * PostgreSQL keys prepared statements and portals by their first 63 bytes (NAMEDATALEN - 1): two
 * longer names alike in those are one to the server, and pgveil, which tells them apart by name,
 * could apply one's plan to the other's values. Longer names are refused.
 */
const MAX_NAME_BYTES = 63;

/**
 * The last statement or portal name read, as bytes and as text: a client binds and executes the
 * same few names over and over, and the same string object keeps its hash for the maps it keys.
 */
let lastNameBytes: Buffer = Buffer.alloc(0);
let lastName = '';

function sameBytes(frame: Buffer, start: number, end: number, bytes: Buffer): boolean {
  if (end - start !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (frame[start + i] !== bytes[i]) return false;
  return true;
}

/** Reads NUL-terminated strings and integers from a frame body. */
class FrameReader {
  pos = 5;
  constructor(readonly frame: Buffer) {}

  cString(): string {
    const end = this.frame.indexOf(0, this.pos);
    if (end < 0) throw new RangeError('malformed message: unterminated string');
    const text = this.frame.toString('utf8', this.pos, end);
    this.pos = end + 1;
    return text;
  }

  /** A statement or portal name (see decodeName). */
  name(): string {
    if (this.frame[this.pos] === 0) { // the unnamed statement or portal, most clients' usual one
      this.pos++;
      return '';
    }
    const end = this.frame.indexOf(0, this.pos);
    if (end < 0) throw new RangeError('malformed message: unterminated string');
    if (end - this.pos > MAX_NAME_BYTES) {
      throw new ProtocolViolation(`prepared statement and portal names longer than ${MAX_NAME_BYTES} bytes are refused: PostgreSQL tells them apart by their first ${MAX_NAME_BYTES} bytes only, and pgveil by the whole name`);
    }
    if (!sameBytes(this.frame, this.pos, end, lastNameBytes)) {
      const bytes = this.frame.subarray(this.pos, end);
      lastName = decodeName(bytes);
      lastNameBytes = Buffer.from(bytes);
    }
    this.pos = end + 1;
    return lastName;
  }

  int16(): number {
    const value = this.frame.readInt16BE(this.pos);
    this.pos += 2;
    return value;
  }

  /** A count (of parameters, formats, values, fields): PostgreSQL reads these as unsigned, 0 to 65535. */
  count(): number {
    const value = this.frame.readUInt16BE(this.pos);
    this.pos += 2;
    return value;
  }

  int32(): number {
    const value = this.frame.readInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  byte(): number {
    const value = this.frame[this.pos];
    if (value === undefined) throw new RangeError('malformed message: truncated');
    this.pos += 1;
    return value;
  }

  bytes(length: number): Buffer {
    if (this.pos + length > this.frame.length) throw new RangeError('malformed message: truncated');
    const value = this.frame.subarray(this.pos, this.pos + length);
    this.pos += length;
    return value;
  }
}

/** The SQL text of a Query: the whole body but its final NUL (a NUL inside is the server's to reject). */
export function readQuery(frame: Buffer): string {
  return frame.toString('utf8', 5, frame.length - 1);
}

export interface ParseMessage {
  readonly name: string;
  readonly sql: string;
  readonly paramTypes: readonly number[];
}

export function readParse(frame: Buffer): ParseMessage {
  const reader = new FrameReader(frame);
  const name = reader.name();
  const sql = reader.cString();
  const count = reader.count();
  const paramTypes: number[] = [];
  for (let i = 0; i < count; i++) paramTypes.push(reader.int32() >>> 0);
  return { name, sql, paramTypes };
}

/** What a Bind names and asks for, without its values. */
export interface BindTarget {
  readonly portal: string;
  readonly statement: string;
  readonly resultFormats: readonly number[];
}

export interface BindMessage extends BindTarget {
  /** As sent: empty (all text), one code (all), or one per parameter. */
  readonly paramFormats: readonly number[];
  /** null for SQL NULL. */
  readonly values: (Buffer | null)[];
}

/** A Bind's names and result formats; its values are stepped over, not copied out. */
export function readBindTarget(frame: Buffer): BindTarget {
  const reader = new FrameReader(frame);
  const portal = reader.name();
  const statement = reader.name();
  const formatCount = reader.count(); // read before the position moves past the format codes
  reader.pos += 2 * formatCount;
  const valueCount = reader.count();
  for (let i = 0; i < valueCount; i++) {
    const length = reader.int32();
    if (length > 0) reader.pos += length;
  }
  if (reader.pos + 2 > frame.length) throw new RangeError('malformed message: truncated');
  const resultCount = reader.count();
  const resultFormats: number[] = [];
  for (let i = 0; i < resultCount; i++) resultFormats.push(reader.int16());
  return { portal, statement, resultFormats };
}

export function readBind(frame: Buffer): BindMessage {
  const reader = new FrameReader(frame);
  const portal = reader.name();
  const statement = reader.name();
  const formatCount = reader.count();
  const paramFormats: number[] = [];
  for (let i = 0; i < formatCount; i++) paramFormats.push(reader.int16());
  const valueCount = reader.count();
  const values: (Buffer | null)[] = [];
  for (let i = 0; i < valueCount; i++) {
    const length = reader.int32();
    values.push(length < 0 ? null : reader.bytes(length));
  }
  const resultCount = reader.count();
  const resultFormats: number[] = [];
  for (let i = 0; i < resultCount; i++) resultFormats.push(reader.int16());
  return { portal, statement, paramFormats, values, resultFormats };
}

/**
 * Where a Bind's values lie, without a view per value: what rewriting a few of them in place
 * needs. Reads and refuses exactly what readBind does.
 */
export interface BindValueLayout {
  readonly paramFormats: readonly number[];
  /** Per value: the offset of its bytes (after its length word), and its length (-1 for NULL). */
  readonly starts: readonly number[];
  readonly lengths: readonly number[];
  /** The offset of the value count; of the result format count (after the last value); of the end of the result formats. */
  readonly valuesAt: number;
  readonly valuesEnd: number;
  readonly resultsEnd: number;
}

export function readBindValueLayout(frame: Buffer): BindValueLayout {
  const reader = new FrameReader(frame);
  reader.name();
  reader.name();
  const formatCount = reader.count();
  // Sized up front: a first push onto an empty array reserves room for 17, per Bind.
  const paramFormats = new Array<number>(formatCount);
  for (let i = 0; i < formatCount; i++) paramFormats[i] = reader.int16();
  const valuesAt = reader.pos;
  const valueCount = reader.count();
  const starts = new Array<number>(valueCount);
  const lengths = new Array<number>(valueCount);
  for (let i = 0; i < valueCount; i++) {
    const length = reader.int32();
    if (length > 0 && reader.pos + length > frame.length) throw new RangeError('malformed message: truncated');
    starts[i] = reader.pos;
    lengths[i] = length < 0 ? -1 : length;
    if (length > 0) reader.pos += length;
  }
  const valuesEnd = reader.pos;
  const resultCount = reader.count();
  for (let i = 0; i < resultCount; i++) reader.int16();
  return { paramFormats, starts, lengths, valuesAt, valuesEnd, resultsEnd: reader.pos };
}

/** The format code of parameter or column `index` under PostgreSQL's 0/1/n rule. */
export function formatAt(formats: readonly number[], index: number): number {
  if (formats.length === 0) return 0;
  if (formats.length === 1) return formats[0] as number;
  return formats[index] ?? 0;
}

export interface TargetMessage {
  /** 'S' statement or 'P' portal. */
  readonly target: 'S' | 'P';
  readonly name: string;
}

/** Describe and Close share a layout. */
export function readTarget(frame: Buffer): TargetMessage {
  const reader = new FrameReader(frame);
  const target = reader.byte() === 0x53 ? 'S' : 'P';
  return { target, name: reader.name() };
}

export function readExecutePortal(frame: Buffer): string {
  return new FrameReader(frame).name();
}

/** The statement a Bind binds: its names only, the values left unread (readBindTarget reads the rest). */
export function readBindStatement(frame: Buffer): string {
  const reader = new FrameReader(frame);
  reader.name();
  return reader.name();
}

export interface FieldDescription {
  readonly name: string;
  readonly tableOid: number;
  readonly attnum: number;
  readonly typeOid: number;
  readonly typmod: number;
  readonly format: number;
}

export function readRowDescription(frame: Buffer): FieldDescription[] {
  const reader = new FrameReader(frame);
  const count = reader.count();
  const fields: FieldDescription[] = [];
  for (let i = 0; i < count; i++) {
    const name = reader.cString();
    const tableOid = reader.int32() >>> 0;
    const attnum = reader.int16();
    const typeOid = reader.int32() >>> 0;
    reader.int16(); // typlen
    const typmod = reader.int32();
    const format = reader.int16();
    fields.push({ name, tableOid, attnum, typeOid, typmod, format });
  }
  return fields;
}

export function readParameterDescription(frame: Buffer): number[] {
  const reader = new FrameReader(frame);
  const count = reader.count();
  const types: number[] = [];
  for (let i = 0; i < count; i++) types.push(reader.int32() >>> 0);
  return types;
}

/** Byte ranges of each DataRow field value: [start, end) into the frame, or null for NULL. */
export function dataRowFields(frame: Buffer): (readonly [number, number] | null)[] {
  const count = frame.readInt16BE(5);
  const fields: (readonly [number, number] | null)[] = new Array(count);
  let pos = 7;
  for (let i = 0; i < count; i++) {
    const length = frame.readInt32BE(pos);
    pos += 4;
    if (length < 0) {
      fields[i] = null;
    } else {
      fields[i] = [pos, pos + length];
      pos += length;
    }
  }
  return fields;
}

export function commandTag(frame: Buffer): string {
  return new FrameReader(frame).cString();
}

/**
 * True when a CommandComplete's tag starts with one of `words` (whole words, ASCII), read without
 * decoding it; the message is chunk[start..end) (default: the whole buffer).
 */
export function commandTagStartsWith(chunk: Buffer, words: readonly string[], start = 0, end = chunk.length): boolean {
  for (const word of words) {
    const after = start + 5 + word.length;
    if (end <= after) continue;
    let same = true;
    for (let i = 0; i < word.length && same; i++) same = chunk[start + 5 + i] === word.charCodeAt(i);
    if (!same) continue;
    const next = chunk[after] as number;
    // A word boundary: what follows is no letter, digit or underscore.
    if (!((next >= 0x30 && next <= 0x39) || (next >= 0x41 && next <= 0x5a) || (next >= 0x61 && next <= 0x7a) || next === 0x5f)) return true;
  }
  return false;
}

export function readParameterStatus(frame: Buffer): { name: string; value: string } {
  const reader = new FrameReader(frame);
  return { name: reader.cString(), value: reader.cString() };
}

/** The body of a CopyData frame. */
export function copyData(frame: Buffer): Buffer {
  return frame.subarray(5);
}

/** The transaction status a ReadyForQuery reports: 'I', 'T' or 'E'. */
export function readyForQueryStatus(frame: Buffer): string {
  return String.fromCharCode(frame[5] ?? 0x49);
}

/** Visits each whole frame of `bytes` (several messages written back to back). */
export function forEachFrame(bytes: Buffer, visit: (type: number, firstBodyByte: number, start: number, end: number) => void): void {
  let pos = 0;
  while (pos + 5 <= bytes.length) {
    const end = pos + 1 + bytes.readInt32BE(pos + 1);
    visit(bytes[pos] as number, end > pos + 5 ? (bytes[pos + 5] as number) : 0, pos, end);
    pos = end;
  }
}

/** How many messages `bytes` holds back to back; a ProtocolViolation when it does not end on a message's end. */
export function frameCount(bytes: Buffer): number {
  let count = 0;
  for (let pos = 0; pos < bytes.length; count++) {
    const length = pos + 5 <= bytes.length ? bytes.readInt32BE(pos + 1) : -1;
    if (length < 4 || pos + 1 + length > bytes.length) throw new ProtocolViolation('messages cut short');
    pos += 1 + length;
  }
  return count;
}
