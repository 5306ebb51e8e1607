/**
 * Reading and writing the few protocol messages the policy hooks look inside: Query, Parse, Bind,
 * Describe, Execute, Close, CopyData/CopyFail on the way in; RowDescription, DataRow,
 * ParameterDescription, CommandComplete, ParameterStatus and COPY responses on the way out.
 * Every function takes or returns a whole frame (type byte and length included).
 */

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

  int16(): number {
    const value = this.frame.readInt16BE(this.pos);
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

/** Builds one frame from parts, writing the length last. */
class FrameWriter {
  private readonly parts: Buffer[] = [];
  private length = 4;

  constructor(private readonly type: string) {}

  cString(text: string): this {
    return this.raw(Buffer.from(`${text}\0`, 'utf8'));
  }

  int16(value: number): this {
    const bytes = Buffer.allocUnsafe(2);
    bytes.writeInt16BE(value, 0);
    return this.raw(bytes);
  }

  int32(value: number): this {
    const bytes = Buffer.allocUnsafe(4);
    bytes.writeInt32BE(value, 0);
    return this.raw(bytes);
  }

  raw(bytes: Buffer): this {
    this.parts.push(bytes);
    this.length += bytes.length;
    return this;
  }

  build(): Buffer {
    const header = Buffer.allocUnsafe(5);
    header[0] = this.type.charCodeAt(0);
    header.writeInt32BE(this.length, 1);
    return Buffer.concat([header, ...this.parts], this.length + 1);
  }
}

export function queryMessage(sql: string): Buffer {
  return new FrameWriter('Q').cString(sql).build();
}

export interface ParseMessage {
  readonly name: string;
  readonly sql: string;
  readonly paramTypes: readonly number[];
}

export function readParse(frame: Buffer): ParseMessage {
  const reader = new FrameReader(frame);
  const name = reader.cString();
  const sql = reader.cString();
  const count = reader.int16();
  const paramTypes: number[] = [];
  for (let i = 0; i < count; i++) paramTypes.push(reader.int32() >>> 0);
  return { name, sql, paramTypes };
}

export function parseMessage(message: ParseMessage): Buffer {
  const writer = new FrameWriter('P').cString(message.name).cString(message.sql).int16(message.paramTypes.length);
  for (const oid of message.paramTypes) writer.int32(oid | 0);
  return writer.build();
}

export interface BindMessage {
  readonly portal: string;
  readonly statement: string;
  /** As sent: empty (all text), one code (all), or one per parameter. */
  readonly paramFormats: readonly number[];
  /** null for SQL NULL. */
  readonly values: (Buffer | null)[];
  readonly resultFormats: readonly number[];
}

export function readBind(frame: Buffer): BindMessage {
  const reader = new FrameReader(frame);
  const portal = reader.cString();
  const statement = reader.cString();
  const formatCount = reader.int16();
  const paramFormats: number[] = [];
  for (let i = 0; i < formatCount; i++) paramFormats.push(reader.int16());
  const valueCount = reader.int16();
  const values: (Buffer | null)[] = [];
  for (let i = 0; i < valueCount; i++) {
    const length = reader.int32();
    values.push(length < 0 ? null : reader.bytes(length));
  }
  const resultCount = reader.int16();
  const resultFormats: number[] = [];
  for (let i = 0; i < resultCount; i++) resultFormats.push(reader.int16());
  return { portal, statement, paramFormats, values, resultFormats };
}

export function bindMessage(message: BindMessage): Buffer {
  const writer = new FrameWriter('B').cString(message.portal).cString(message.statement);
  writer.int16(message.paramFormats.length);
  for (const format of message.paramFormats) writer.int16(format);
  writer.int16(message.values.length);
  for (const value of message.values) {
    if (value === null) writer.int32(-1);
    else writer.int32(value.length).raw(value);
  }
  writer.int16(message.resultFormats.length);
  for (const format of message.resultFormats) writer.int16(format);
  return writer.build();
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
  return { target, name: reader.cString() };
}

export function describeMessage(target: 'S' | 'P', name: string): Buffer {
  return new FrameWriter('D').raw(Buffer.from(target)).cString(name).build();
}

export function readExecutePortal(frame: Buffer): string {
  return new FrameReader(frame).cString();
}

export function copyDataMessage(data: Buffer): Buffer {
  return new FrameWriter('d').raw(data).build();
}

export function copyFailMessage(reason: string): Buffer {
  return new FrameWriter('f').cString(reason).build();
}

/** A FunctionCall of a function that does not exist: fails upstream like a refused call would. */
export function failingFunctionCall(): Buffer {
  return new FrameWriter('F').int32(0).int16(0).int16(0).int16(0).build();
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
  const count = reader.int16();
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
  const count = reader.int16();
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

/** A DataRow from field values (null for NULL). */
export function dataRowMessage(values: readonly (Buffer | null)[]): Buffer {
  let length = 6;
  for (const value of values) length += 4 + (value === null ? 0 : value.length);
  const frame = Buffer.allocUnsafe(length + 1);
  frame[0] = 0x44;
  frame.writeInt32BE(length, 1);
  frame.writeInt16BE(values.length, 5);
  let pos = 7;
  for (const value of values) {
    if (value === null) {
      frame.writeInt32BE(-1, pos);
      pos += 4;
    } else {
      frame.writeInt32BE(value.length, pos);
      pos += 4;
      value.copy(frame, pos);
      pos += value.length;
    }
  }
  return frame;
}

export function commandTag(frame: Buffer): string {
  return new FrameReader(frame).cString();
}

export function readParameterStatus(frame: Buffer): { name: string; value: string } {
  const reader = new FrameReader(frame);
  return { name: reader.cString(), value: reader.cString() };
}

/** The body of a CopyData frame. */
export function copyData(frame: Buffer): Buffer {
  return frame.subarray(5);
}
