/**
 * A batch of DataRows of one result set, read once: where each planned field of each row lies,
 * in flat typed arrays (no array per row or field), and the batch written back with the changed
 * fields as one buffer (one allocation for the whole batch, unchanged bytes copied as runs).
 */
import type { ByteFields } from '../../../engine/index.js';

/** A field's new value: text (UTF-8), bytes (binary format), NULL, or undefined (as stored). */
export type FieldChange = string | Buffer | null | undefined;

/** Length of a planned field that is NULL, or that the row does not have. */
export const ABSENT = -1;

export class DataRowBatch {
  /** Per row and planned slot (row * slots + slot): offset of the field's bytes in its row. */
  private readonly starts: Int32Array;
  /** Per row and planned slot: the field's byte length, or ABSENT. */
  private readonly lengths: Int32Array;
  /** Per row: where its last field ends (trailing bytes past it are not sent on a changed row). */
  private readonly fieldsEnd: Int32Array;
  /** Per row and planned slot: the new value (undefined: as stored). */
  private readonly changes: FieldChange[];
  private readonly changed: Uint8Array;
  /** Upper bound of the bytes the changes add. */
  private addedBound = 0;

  /** `fieldIndexes`: the planned fields' indexes, ascending. */
  constructor(readonly rows: readonly Buffer[], private readonly fieldIndexes: readonly number[]) {
    const slots = fieldIndexes.length;
    const count = rows.length;
    this.starts = new Int32Array(count * slots);
    this.lengths = new Int32Array(count * slots).fill(ABSENT);
    this.fieldsEnd = new Int32Array(count);
    this.changes = new Array<FieldChange>(count * slots);
    this.changed = new Uint8Array(count);
    for (let row = 0; row < count; row++) this.locate(row);
  }

  get slots(): number {
    return this.fieldIndexes.length;
  }

  /** The field's length in bytes, or ABSENT. */
  length(row: number, slot: number): number {
    return this.lengths[row * this.fieldIndexes.length + slot] as number;
  }

  /** The field's bytes as UTF-8 text (the field is present). */
  text(row: number, slot: number): string {
    const at = row * this.fieldIndexes.length + slot;
    const start = this.starts[at] as number;
    return (this.rows[row] as Buffer).toString('utf8', start, start + (this.lengths[at] as number));
  }

  /** The field's bytes, sharing the row's memory (the field is present). */
  bytes(row: number, slot: number): Buffer {
    const at = row * this.fieldIndexes.length + slot;
    const start = this.starts[at] as number;
    return (this.rows[row] as Buffer).subarray(start, start + (this.lengths[at] as number));
  }

  /**
   * The slot's present (not NULL) fields as byte ranges of their rows, for a rewrite in place
   * (the rows' own memory: write() then copies what was written there), and each one's row.
   */
  presentFields(slot: number): { fields: ByteFields; rowOf: Int32Array } {
    const slots = this.fieldIndexes.length;
    const count = this.rows.length;
    const buffers: Buffer[] = [];
    const starts = new Int32Array(count);
    const lengths = new Int32Array(count);
    const rowOf = new Int32Array(count);
    for (let row = 0, at = slot; row < count; row++, at += slots) {
      const length = this.lengths[at] as number;
      if (length === ABSENT) continue;
      const frame = this.rows[row] as Buffer;
      // A field said longer than its frame (a malformed upstream message) stays on the string way.
      if ((this.starts[at] as number) + length > frame.length) continue;
      const k = buffers.length;
      starts[k] = this.starts[at] as number;
      lengths[k] = length;
      rowOf[k] = row;
      buffers.push(frame);
    }
    return { fields: { count: buffers.length, buffers, starts, lengths }, rowOf };
  }

  change(row: number, slot: number, value: string | Buffer | null): void {
    this.changes[row * this.fieldIndexes.length + slot] = value;
    this.changed[row] = 1;
    // A UTF-16 code unit is at most three UTF-8 bytes.
    if (value !== null) this.addedBound += typeof value === 'string' ? value.length * 3 : value.length;
  }

  /** Every row, in order, as wire bytes: unchanged rows as they came, changed ones rebuilt. */
  write(): Buffer {
    const rows = this.rows;
    let bound = this.addedBound;
    for (const row of rows) bound += row.length;
    const out = Buffer.allocUnsafe(bound);
    let pos = 0;
    for (let row = 0; row < rows.length; row++) {
      const frame = rows[row] as Buffer;
      pos = this.changed[row] === 1 ? this.writeChanged(out, pos, row, frame) : pos + frame.copy(out, pos);
    }
    return pos === bound ? out : out.subarray(0, pos);
  }

  private writeChanged(out: Buffer, at: number, row: number, frame: Buffer): number {
    const slots = this.fieldIndexes.length;
    let pos = copyRun(frame, 0, 7, out, at); // type, length (set below), field count
    let cursor = 7;
    for (let slot = 0; slot < slots; slot++) {
      const index = row * slots + slot;
      const value = this.changes[index];
      if (value === undefined) continue;
      const headerAt = (this.starts[index] as number) - 4;
      pos = copyRun(frame, cursor, headerAt, out, pos);
      if (value === null) {
        out.writeInt32BE(-1, pos);
        pos += 4;
      } else if (typeof value === 'string') {
        const written = writeUtf8(value, out, pos + 4);
        out.writeInt32BE(written, pos);
        pos += 4 + written;
      } else {
        out.writeInt32BE(value.length, pos);
        pos += 4 + value.copy(out, pos + 4);
      }
      cursor = headerAt + 4 + Math.max(0, this.lengths[index] as number);
    }
    pos = copyRun(frame, cursor, this.fieldsEnd[row] as number, out, pos);
    out.writeInt32BE(pos - at - 1, at + 1);
    return pos;
  }

  /** Walks one row's fields, noting the planned ones (a row shorter than planned lacks some). */
  private locate(row: number): void {
    const frame = this.rows[row] as Buffer;
    const indexes = this.fieldIndexes;
    const base = row * indexes.length;
    const count = frame.readInt16BE(5);
    let pos = 7;
    let slot = 0;
    for (let field = 0; field < count; field++) {
      const length = frame.readInt32BE(pos);
      pos += 4;
      if (field === indexes[slot]) {
        if (length >= 0) {
          this.starts[base + slot] = pos;
          this.lengths[base + slot] = length;
        }
        slot++;
      }
      if (length > 0) pos += length;
    }
    this.fieldsEnd[row] = Math.min(pos, frame.length);
  }
}

/** Copies source[start, end) to out at `pos`; returns the position after it. */
function copyRun(source: Buffer, start: number, end: number, out: Buffer, pos: number): number {
  // Buffer.copy of part of a buffer allocates a view: short runs (most, between fields) go byte by byte.
  if (end - start > 64) return pos + source.copy(out, pos, start, end);
  let to = pos;
  for (let from = start; from < end; from++) out[to++] = source[from] as number;
  return to;
}

/** Writes text as UTF-8 at `pos`; returns the bytes written (the buffer has room for them). */
function writeUtf8(text: string, out: Buffer, pos: number): number {
  // A short ASCII value (most revealed values) is cheaper to copy here than through a native call.
  const length = text.length;
  if (length <= 64) {
    let i = 0;
    for (; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      out[pos + i] = code;
    }
    if (i === length) return length;
  }
  return out.write(text, pos, 'utf8');
}
