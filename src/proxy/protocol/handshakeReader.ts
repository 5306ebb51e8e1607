/**
 * Pull-style message reader for the handshake phases (client startup/auth, upstream startup/auth),
 * where messages are few and small. Once the handshake is done, `detach()` hands the bytes that
 * arrived early to the relay, which frames everything after that.
 */
import type { Duplex } from 'node:stream';
import { ProtocolViolation } from './startupPacket.js';

export interface TypedMessage {
  type: string;
  body: Buffer;
}

export class ConnectionClosed extends Error {
  override readonly name = 'ConnectionClosed';
}

interface Waiter {
  kind: 'startup' | 'typed';
  resolve(frame: Buffer): void;
  reject(error: Error): void;
}

export class HandshakeReader {
  private buffer: Buffer = Buffer.alloc(0);
  private waiter: Waiter | null = null;
  private failure: Error | null = null;

  constructor(
    private readonly socket: Duplex,
    private readonly maxMessageBytes: number,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onEnd);
    socket.on('error', this.onError);
    socket.resume();
  }

  /** An untyped packet (length word first), e.g. the StartupMessage; returns it whole. */
  readStartupPacket(): Promise<Buffer> {
    return this.wait('startup');
  }

  async readMessage(): Promise<TypedMessage> {
    const frame = await this.wait('typed');
    return { type: String.fromCharCode(frame[0] ?? 0), body: frame.subarray(5) };
  }

  /**
   * Stops listening and returns the bytes received past the last message read. The socket is
   * paused (unless `pause` is false) so that nothing is lost before the next reader attaches.
   */
  detach(pause = true): Buffer {
    if (pause) this.socket.pause();
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    this.socket.off('error', this.onError);
    const rest = this.buffer;
    this.buffer = Buffer.alloc(0);
    return rest;
  }

  /** True when bytes arrived that no read has asked for yet. */
  hasBufferedBytes(): boolean {
    return this.buffer.length > 0;
  }

  private wait(kind: Waiter['kind']): Promise<Buffer> {
    if (this.waiter) throw new Error('HandshakeReader: one read at a time');
    return new Promise<Buffer>((resolve, reject) => {
      this.waiter = { kind, resolve, reject };
      this.deliver();
    });
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    this.deliver();
  };

  private readonly onEnd = (): void => {
    this.fail(new ConnectionClosed('connection closed during handshake'));
  };

  private readonly onError = (error: Error): void => {
    this.fail(error);
  };

  private fail(error: Error): void {
    this.failure ??= error;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(this.failure);
  }

  private deliver(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    let frame: Buffer | null;
    try {
      frame = this.takeFrame(waiter.kind);
    } catch (error) {
      this.waiter = null;
      waiter.reject(error as Error);
      return;
    }
    if (frame) {
      this.waiter = null;
      waiter.resolve(frame);
    } else if (this.failure) {
      this.waiter = null;
      waiter.reject(this.failure);
    }
  }

  private takeFrame(kind: Waiter['kind']): Buffer | null {
    const headerBytes = kind === 'startup' ? 4 : 5;
    if (this.buffer.length < headerBytes) return null;
    const length = this.buffer.readInt32BE(headerBytes - 4);
    if (length < 4 || length > this.maxMessageBytes) {
      throw kind === 'startup' ? new ProtocolViolation('invalid length of startup packet', true) : new ProtocolViolation('invalid message length');
    }
    const total = headerBytes - 4 + length;
    if (this.buffer.length < total) return null;
    const frame = this.buffer.subarray(0, total);
    this.buffer = this.buffer.subarray(total);
    return frame;
  }
}
