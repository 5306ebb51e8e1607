/**
 * COPY binary format at the byte level, read as a stream: the header (signature, flags, extension
 * area), tuples (an int16 field count, then per field an int32 length, -1 for NULL, and the
 * bytes), and the trailer (a field count of -1). Chunks may split it anywhere. Bytes pass through
 * as they arrive, except the fields the caller holds (protected columns): those come out whole,
 * without their length, so that they can be replaced. Memory stays bounded by the held fields'
 * limit, whatever the size of the other fields.
 */

export const BINARY_COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_FIXED_BYTES = BINARY_COPY_SIGNATURE.length + 8;

export type BinaryCopyPiece =
  | { readonly kind: 'raw'; readonly bytes: Buffer }
  /** A held field, complete: its value without the length prefix (NULLs pass as raw). */
  | { readonly kind: 'field'; readonly row: number; readonly index: number; readonly value: Buffer };

/** Data that is not a valid binary COPY stream, or a held field over its limit (`tooLong`). */
export class BinaryCopyError extends Error {
  constructor(message: string, readonly tooLong = false) {
    super(message);
    this.name = 'BinaryCopyError';
  }
}

type State = 'header' | 'extension' | 'count' | 'length' | 'plain' | 'held' | 'done';

export class BinaryCopyReader {
  private state: State = 'header';
  /** Bytes of a fixed-size item (header, count, length) or of a held field, so far. */
  private partial: Buffer[] = [];
  private partialLength = 0;
  private remaining = 0;
  private fieldCount = 0;
  private index = 0;
  private row = 0;

  /**
   * `columnCount`: fields per tuple; `holdLimit(index)`: the most bytes a field of that column
   * may have when it is to be held, undefined for a field that passes through.
   */
  constructor(private readonly columnCount: number, private readonly holdLimit: (index: number) => number | undefined) {}

  /** The tuples begun so far (the header and the trailer are none). */
  get rows(): number {
    return this.row;
  }

  push(chunk: Buffer): BinaryCopyPiece[] {
    const pieces: BinaryCopyPiece[] = [];
    let at = 0;
    const raw = (bytes: Buffer): void => {
      if (bytes.length > 0) pieces.push({ kind: 'raw', bytes });
    };
    while (at < chunk.length) {
      switch (this.state) {
        case 'header': {
          const header = this.take(chunk, at, HEADER_FIXED_BYTES);
          at = header.at;
          if (header.bytes === undefined) break;
          if (!header.bytes.subarray(0, BINARY_COPY_SIGNATURE.length).equals(BINARY_COPY_SIGNATURE)) throw new BinaryCopyError('the binary COPY signature is missing');
          const flags = header.bytes.readUInt32BE(BINARY_COPY_SIGNATURE.length);
          if (flags !== 0) throw new BinaryCopyError('the binary COPY header has flags pgveil does not read (OIDs or a later format)');
          const extension = header.bytes.readInt32BE(BINARY_COPY_SIGNATURE.length + 4);
          if (extension < 0) throw new BinaryCopyError('the binary COPY header extension has a negative length');
          raw(header.bytes);
          this.remaining = extension;
          this.state = extension > 0 ? 'extension' : 'count';
          break;
        }
        case 'extension':
        case 'plain': {
          const n = Math.min(this.remaining, chunk.length - at);
          raw(chunk.subarray(at, at + n));
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state === 'extension' ? (this.state = 'count') : this.nextField();
          break;
        }
        case 'count': {
          const count = this.take(chunk, at, 2);
          at = count.at;
          if (count.bytes === undefined) break;
          const fields = count.bytes.readInt16BE(0);
          raw(count.bytes);
          if (fields === -1) {
            this.state = 'done';
            break;
          }
          this.row++;
          if (fields !== this.columnCount) throw new BinaryCopyError(`row ${this.row} has ${fields} fields where ${this.columnCount} columns were listed`);
          this.fieldCount = fields;
          this.index = 0;
          this.state = fields === 0 ? 'count' : 'length';
          break;
        }
        case 'length': {
          const prefix = this.take(chunk, at, 4);
          at = prefix.at;
          if (prefix.bytes === undefined) break;
          const length = prefix.bytes.readInt32BE(0);
          if (length < -1) throw new BinaryCopyError(`row ${this.row} has a field with a negative length`);
          const limit = length === -1 ? undefined : this.holdLimit(this.index);
          if (limit === undefined) {
            raw(prefix.bytes);
            this.remaining = Math.max(length, 0);
            if (this.remaining === 0) this.nextField();
            else this.state = 'plain';
            break;
          }
          if (length > limit) throw new BinaryCopyError(`row ${this.row}: a value is longer than ${limit} bytes, the most pgveil protects (proxy.maxProtectedValueBytes raises it)`, true);
          this.remaining = length;
          if (length === 0) {
            pieces.push({ kind: 'field', row: this.row, index: this.index, value: Buffer.alloc(0) });
            this.nextField();
          } else {
            this.state = 'held';
          }
          break;
        }
        case 'held': {
          const value = this.take(chunk, at, this.remaining);
          at = value.at;
          if (value.bytes === undefined) break;
          pieces.push({ kind: 'field', row: this.row, index: this.index, value: value.bytes });
          this.nextField();
          break;
        }
        case 'done':
          throw new BinaryCopyError('binary COPY data continues after its end marker');
      }
    }
    return pieces;
  }

  /** The client's CopyDone: the stream may end at a row boundary (with or without the trailer). */
  end(): void {
    if (this.state === 'done' || (this.state === 'count' && this.partialLength === 0)) return;
    throw new BinaryCopyError(this.state === 'header' || this.state === 'extension' ? 'the binary COPY header is incomplete' : `the binary COPY data ends inside row ${this.row}`);
  }

  private nextField(): void {
    this.index++;
    this.state = this.index >= this.fieldCount ? 'count' : 'length';
  }

  /** Collects `size` bytes across chunks: the bytes once complete, else undefined. */
  private take(chunk: Buffer, at: number, size: number): { at: number; bytes: Buffer | undefined } {
    const n = Math.min(size - this.partialLength, chunk.length - at);
    if (this.partialLength === 0 && n === size) return { at: at + n, bytes: chunk.subarray(at, at + n) };
    this.partial.push(chunk.subarray(at, at + n));
    this.partialLength += n;
    if (this.partialLength < size) return { at: at + n, bytes: undefined };
    const bytes = Buffer.concat(this.partial, this.partialLength);
    this.partial = [];
    this.partialLength = 0;
    return { at: at + n, bytes };
  }
}

/** One field as the binary format writes it: its int32 length, then its bytes (-1 for NULL). */
export function binaryCopyField(value: Buffer | null): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(value === null ? -1 : value.length);
  return value === null ? prefix : Buffer.concat([prefix, value]);
}
