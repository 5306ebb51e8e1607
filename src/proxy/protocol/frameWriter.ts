/**
 * Writes one protocol frame: a type byte (none for the untyped startup packets) and a length word,
 * then the body. The body is written into one buffer that grows by half when full, and the length is
 * filled in by `finish()`; a writer given the frame's exact size allocates once and copies nothing.
 */
export class FrameWriter {
  private buffer: Buffer;
  private offset: number;
  private readonly lengthAt: number;

  /**
   * `type`: the message's type letter, or null for an untyped packet (StartupMessage, SSLRequest,
   * CancelRequest). `capacity`: the expected size of the whole frame, header included.
   */
  constructor(type: string | null, capacity = 64) {
    this.buffer = Buffer.allocUnsafe(Math.max(capacity, 5));
    if (type === null) {
      this.lengthAt = 0;
      this.offset = 4;
    } else {
      this.buffer[0] = type.charCodeAt(0);
      this.lengthAt = 1;
      this.offset = 5;
    }
  }

  /** A count (0 to 65535), as PostgreSQL reads counts: unsigned. */
  count(value: number): this {
    this.ensure(2);
    this.offset = this.buffer.writeUInt16BE(value, this.offset);
    return this;
  }

  int16(value: number): this {
    this.ensure(2);
    this.offset = this.buffer.writeInt16BE(value, this.offset);
    return this;
  }

  int32(value: number): this {
    this.ensure(4);
    this.offset = this.buffer.writeInt32BE(value, this.offset);
    return this;
  }

  /** A NUL-terminated UTF-8 string. */
  cString(text: string): this {
    const length = Buffer.byteLength(text, 'utf8');
    this.ensure(length + 1);
    this.offset += this.buffer.write(text, this.offset, length, 'utf8');
    this.buffer[this.offset++] = 0;
    return this;
  }

  /** One byte, e.g. a status or a target letter. */
  byte(value: number): this {
    this.ensure(1);
    this.buffer[this.offset++] = value;
    return this;
  }

  bytes(data: Uint8Array): this {
    this.ensure(data.length);
    this.buffer.set(data, this.offset);
    this.offset += data.length;
    return this;
  }

  /** The frame, its length word filled in. The writer is spent. */
  finish(): Buffer {
    this.buffer.writeInt32BE(this.offset - this.lengthAt, this.lengthAt);
    return this.offset === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.offset);
  }

  private ensure(size: number): void {
    const buffer = this.buffer;
    if (buffer.length - this.offset >= size) return;
    const grown = Buffer.allocUnsafe(buffer.length + (buffer.length >> 1) + size);
    buffer.copy(grown, 0, 0, this.offset);
    this.buffer = grown;
  }
}
