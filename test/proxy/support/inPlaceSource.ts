/**
 * For tests of a pump reading in place: a source that reads into one buffer of its own, as the
 * native socket addon does, and scribbles over it as soon as each call returns, so that a view of
 * it kept past the call shows garbage; and a frame builder.
 */
import { EventEmitter } from 'node:events';
import type { InPlaceReader } from '../../../src/proxy/session/relaySocket.js';

/** A protocol message of `type` with `body`. */
export function message(type: string, body: Buffer): Buffer {
  const bytes = Buffer.alloc(5 + body.length);
  bytes.write(type, 0, 'latin1');
  bytes.writeInt32BE(4 + body.length, 1);
  body.copy(bytes, 5);
  return bytes;
}

/** A turn of the event loop and a millisecond: hooks that answer "later" answer after one. */
export const later = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

export class InPlaceSource extends EventEmitter {
  destroyed = false;
  writable = true;
  reader: InPlaceReader | undefined;
  readonly reading = Buffer.alloc(128 * 1024);
  /** Runs after each in-place call returns, before the buffer is scribbled over. */
  afterCall: (() => void) | undefined;
  private paused = false;
  private readonly held: Buffer[] = [];

  readInPlace(reader: InPlaceReader | undefined): void {
    this.reader = reader;
  }

  /** One read: in place while flowing, else kept (a copy) until resume, as NativeSocket does. */
  read(bytes: Buffer): void {
    if (this.paused || this.held.length > 0) {
      this.held.push(Buffer.from(bytes));
      return;
    }
    bytes.copy(this.reading);
    this.reader?.(this.reading.subarray(0, bytes.length), false);
    this.afterCall?.();
    this.reading.fill(0xee);
  }

  /**
   * Reads `input` cut into pieces of the sizes `cuts` gives in turn, letting a turn pass every third
   * read of the first few hundred (a long input cut into bytes would otherwise wait minutes on timers).
   */
  async feed(input: Buffer, cuts: readonly number[]): Promise<void> {
    let at = 0;
    for (let i = 0; at < input.length; i++) {
      const size = cuts[i % cuts.length] as number;
      this.read(input.subarray(at, at + size));
      at += size;
      if (i % 3 === 2 && i < 600) await later();
    }
  }

  pause(): void {
    this.paused = true;
  }

  /** What was held is handed over (owned) on the next tick, as NativeSocket's flow does. */
  resume(): void {
    this.paused = false;
    process.nextTick(() => {
      while (!this.paused && this.held.length > 0) this.reader?.(this.held.shift() as Buffer, true);
    });
  }

  write(): boolean { return true; }
  end(): void {}
  destroy(): void {}
  cork(): void {}
  uncork(): void {}
}
