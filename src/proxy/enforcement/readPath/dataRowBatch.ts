/**
 * A batch of DataRows of one result set, read once: where each row and each planned field of it
 * lies, in flat typed arrays (no array or view per row or field: rows arrive several to a
 * frame), and the batch written back with the changed fields as one buffer (one allocation for
 * the whole batch, unchanged bytes copied as runs).
 */
import type { ByteFields } from '../../../engine/index.js';
import { frameCount, ProtocolViolation } from '../../protocol/messageReaders.js';

/** A field's new value: text (UTF-8), bytes (binary format), NULL, or undefined (as stored). */
export type FieldChange = string | Buffer | null | undefined;

/** Length of a planned field that is NULL, or that the row does not have. */
export const ABSENT = -1;

export class DataRowBatch {
  /** How many DataRows the batch holds. */
  readonly rowCount: number;
  /** Per row: the frame it lies in, and where it starts and ends there (a frame may hold several rows back to back). */
  private readonly rowFrames: Buffer[];
  private readonly rowStarts: Int32Array;
  private readonly rowEnds: Int32Array;
  /** Per row and planned slot (row * slots + slot): offset of the field's bytes in its frame. */
  private readonly starts: Int32Array;
  /** Per row and planned slot: the field's byte length, or ABSENT. */
  private readonly lengths: Int32Array;
  /** Per row: where its last field ends (trailing bytes past it are not sent on a changed row). */
  private readonly fieldsEnd: Int32Array;
  /** Per row and planned slot: the new value (undefined: as stored); made for the first change. */
  private changes: FieldChange[] | undefined;
  private readonly changed: Uint8Array;
  /** Upper bound of the bytes the changes add. */
  private addedBound = 0;

  /**
   * `frames`: whole DataRow messages, one or more back to back in each; `fieldIndexes`: the
   * planned fields' indexes, ascending; `rows`: how many messages the frames hold, where the
   * caller has counted them (frameCount), else counted here. A count that does not match, or a
   * message cut short, is a ProtocolViolation.
   */
  constructor(private readonly frames: readonly Buffer[], private readonly fieldIndexes: readonly number[], rows?: number) {
    const slots = fieldIndexes.length;
    let count = 0;
    if (rows !== undefined) count = rows;
    else for (const frame of frames) count += frameCount(frame);
    this.rowCount = count;
    this.rowFrames = new Array<Buffer>(count);
    this.rowStarts = new Int32Array(count);
    this.rowEnds = new Int32Array(count);
    this.starts = new Int32Array(count * slots);
    this.lengths = new Int32Array(count * slots).fill(ABSENT);
    this.fieldsEnd = new Int32Array(count);
    this.changed = new Uint8Array(count);
    let row = 0;
    for (const frame of frames) {
      for (let pos = 0; pos < frame.length; row++) {
        const length = pos + 5 <= frame.length ? frame.readInt32BE(pos + 1) : -1;
        if (length < 4 || pos + 1 + length > frame.length) throw new ProtocolViolation('messages cut short');
        if (row >= count) throw new ProtocolViolation('more DataRows than counted');
        const end = pos + 1 + length;
        this.rowFrames[row] = frame;
        this.rowStarts[row] = pos;
        this.rowEnds[row] = end;
        this.locate(row);
        pos = end;
      }
    }
    if (row !== count) throw new ProtocolViolation('fewer DataRows than counted');
  }

  get slots(): number {
    return this.fieldIndexes.length;
  }

  /** The field's length in bytes, or ABSENT. */
  length(row: number, slot: number): number {
    return this.lengths[row * this.fieldIndexes.length + slot] as number;
  }

  /** The field's bytes as UTF-8 text (the field is present; one said longer than its row stops at the row's end). */
  text(row: number, slot: number): string {
    const at = row * this.fieldIndexes.length + slot;
    const start = this.starts[at] as number;
    return (this.rowFrames[row] as Buffer).toString('utf8', start, Math.min(start + (this.lengths[at] as number), this.rowEnds[row] as number));
  }

  /** The field's bytes, sharing the row's memory (the field is present; as text() at the row's end). */
  bytes(row: number, slot: number): Buffer {
    const at = row * this.fieldIndexes.length + slot;
    const start = this.starts[at] as number;
    return (this.rowFrames[row] as Buffer).subarray(start, Math.min(start + (this.lengths[at] as number), this.rowEnds[row] as number));
  }

  /**
   * The slot's present (not NULL) fields as byte ranges of their frames, for a rewrite in place
   * (the frames' own memory: write() then copies what was written there), each one's row, and
   * how many present fields were left out (said longer than their row: the string way's).
   */
  presentFields(slot: number): { fields: ByteFields; rowOf: Int32Array; leftOut: number } {
    const slots = this.fieldIndexes.length;
    const count = this.rowCount;
    const buffers: Buffer[] = [];
    const starts = new Int32Array(count);
    const lengths = new Int32Array(count);
    const rowOf = new Int32Array(count);
    let leftOut = 0;
    for (let row = 0, at = slot; row < count; row++, at += slots) {
      const length = this.lengths[at] as number;
      if (length === ABSENT) continue;
      // A field said longer than its row (a malformed upstream message) stays on the string way.
      if ((this.starts[at] as number) + length > (this.rowEnds[row] as number)) {
        leftOut++;
        continue;
      }
      const k = buffers.length;
      starts[k] = this.starts[at] as number;
      lengths[k] = length;
      rowOf[k] = row;
      buffers.push(this.rowFrames[row] as Buffer);
    }
    return { fields: { count: buffers.length, buffers, starts, lengths }, rowOf, leftOut };
  }

  change(row: number, slot: number, value: string | Buffer | null): void {
    this.changes ??= new Array<FieldChange>(this.rowCount * this.fieldIndexes.length);
    this.changes[row * this.fieldIndexes.length + slot] = value;
    this.changed[row] = 1;
    // A UTF-16 code unit is at most three UTF-8 bytes.
    if (value !== null) this.addedBound += typeof value === 'string' ? value.length * 3 : value.length;
  }

  /** Every row, in order, as wire bytes: unchanged rows as they came (runs of them in one copy), changed ones rebuilt. */
  write(): Buffer {
    let bound = this.addedBound;
    for (const frame of this.frames) bound += frame.length;
    const out = Buffer.allocUnsafe(bound);
    let pos = 0;
    let row = 0;
    while (row < this.rowCount) {
      if (this.changed[row] === 1) {
        pos = this.writeChanged(out, pos, row);
        row++;
        continue;
      }
      // Unchanged rows that follow one another in one frame: one copy.
      const frame = this.rowFrames[row] as Buffer;
      const from = this.rowStarts[row] as number;
      let to = this.rowEnds[row] as number;
      for (row++; row < this.rowCount && this.changed[row] !== 1 && this.rowFrames[row] === frame && this.rowStarts[row] === to; row++) {
        to = this.rowEnds[row] as number;
      }
      pos = copyRun(frame, from, to, out, pos);
    }
    return pos === bound ? out : out.subarray(0, pos);
  }

  private writeChanged(out: Buffer, at: number, row: number): number {
    const slots = this.fieldIndexes.length;
    const frame = this.rowFrames[row] as Buffer;
    const base = this.rowStarts[row] as number;
    const changes = this.changes as FieldChange[];
    let pos = copyRun(frame, base, base + 7, out, at); // type, length (set below), field count
    let cursor = base + 7;
    for (let slot = 0; slot < slots; slot++) {
      const index = row * slots + slot;
      const value = changes[index];
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

  /** Walks one row's fields, noting the planned ones (a row shorter than planned lacks some); nothing past the row's end is read. */
  private locate(row: number): void {
    const frame = this.rowFrames[row] as Buffer;
    const end = this.rowEnds[row] as number;
    const indexes = this.fieldIndexes;
    const base = row * indexes.length;
    let pos = (this.rowStarts[row] as number) + 7;
    if (pos > end) throw new RangeError('a DataRow without its field count');
    const count = frame.readInt16BE(pos - 2);
    let slot = 0;
    for (let field = 0; field < count; field++) {
      if (pos + 4 > end) throw new RangeError('a DataRow shorter than its fields');
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
    this.fieldsEnd[row] = Math.min(pos, end);
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
