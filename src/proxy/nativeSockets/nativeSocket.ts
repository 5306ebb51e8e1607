/**
 * A connection read and written by the native addon, behaving towards the relay as a net.Socket
 * does (the session's RelaySocket): 'data' while flowing; chunks kept in order while paused
 * (reading stops past HIGH_WATER_BYTES); 'end' once the peer's FIN is read and nothing read before
 * it waits (paused or not), then this side closed too (as allowHalfOpen: false does); 'drain'
 * after a write that returned false; 'error' then 'close'. A reader that asked for it
 * (`readInPlace`: the relay's message pump) gets each read in the addon's shared buffer itself,
 * while flowing with nothing held, and copies what it keeps; otherwise each read is copied out
 * into one of Node's pooled buffers, since a listener may keep a chunk.
 *
 * Forwarding: when that reader writes the read it was handed, whole, to the socket it named
 * (`readInPlace`'s target), the write is not made: its length goes in the addon's forward slot and
 * the addon sends those bytes on once the read's callback is done, one crossing into C per read
 * instead of two. Anything written to the target, or its end or destroy, before then (in the
 * callback's nextTicks and promise reactions too) sends them first, from here, and clears the slot.
 */
import { EventEmitter } from 'node:events';
import { getSystemErrorName } from 'node:util';
import type { InPlaceReader, RelaySocket } from '../session/relaySocket.js';
import { DRAIN_EVENT, END_EVENT, ERROR_EVENT, type NativeHandle, type SocketAddon } from './socketAddon.js';

/** Bytes kept while paused before reading stops (a net.Socket's default high-water mark). */
const HIGH_WATER_BYTES = 64 * 1024;
/** Corked bytes past which write() says to wait for 'drain' (a Writable's default high-water mark). */
const WRITE_HIGH_WATER_BYTES = 16 * 1024;

/** What an addon's sockets share: one object per addon (per Node environment). */
interface AddonShared {
  /** The reading buffer: every socket's in-place reads are views of its ArrayBuffer, which is how the pump tells them from buffers of its own. */
  readonly readBuffer: Buffer;
  /** The forward slot: bytes of the read being handed over that the addon sends on after its callback. */
  readonly forward: Int32Array;
  /** The socket whose read the slot's count is of. */
  forwarder: NativeSocket | null;
}

const shared = new WeakMap<SocketAddon, AddonShared>();

function sharedOf(addon: SocketAddon): AddonShared {
  let found = shared.get(addon);
  if (found === undefined) {
    const slot = addon.forwardSlot();
    found = { readBuffer: addon.readBuffer(), forward: new Int32Array(slot.buffer, slot.byteOffset, 1), forwarder: null };
    shared.set(addon, found);
  }
  return found;
}

/** An error as Node's sockets give one: code and syscall-free message. */
function socketError(errno: number): NodeJS.ErrnoException {
  let code: string;
  try {
    code = getSystemErrorName(errno);
  } catch {
    code = `E${-errno}`;
  }
  const error: NodeJS.ErrnoException = new Error(`socket ${code}`);
  error.code = code;
  error.errno = errno;
  return error;
}

export class NativeSocket extends EventEmitter {
  destroyed = false;
  /** write() sends what the kernel takes and copies the rest before it returns. */
  readonly writesAtOnce = true;
  /** 'data' listeners registered now. */
  private dataListeners = 0;
  /** Takes each chunk before the 'data' listeners, reads in place (see RelaySocket.readInPlace). */
  private inPlaceReader: InPlaceReader | undefined;
  private readonly handle: NativeHandle;
  private readonly shared: AddonShared;
  private readonly readBuffer: Buffer;
  private flowing = false;
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  private flowScheduled = false;
  /** Reading was stopped because what was held reached the high-water mark: flow() starts it again. */
  private readingStopped = false;
  /** The peer's FIN was read; 'end' follows once what was held before it has been delivered. */
  private readEnded = false;
  private endEmitted = false;
  private writeEnded = false;
  private corks = 0;
  private corked: Buffer[] = [];
  private corkedBytes = 0;
  /** A write returned false: 'drain' is due once everything has gone out. */
  private needDrain = false;
  /** Where the addon forwards what the in-place reader writes of a read there (readInPlace's target). */
  private forwardTarget: NativeSocket | null = null;
  /** The socket forwarding its reads here, if any. */
  private forwardSource: NativeSocket | null = null;
  /** The read being handed to the in-place reader, while it is. */
  private inPlaceChunk: Buffer | null = null;

  constructor(private readonly addon: SocketAddon, fd: number) {
    super();
    // Counted as they come and go: asking the emitter on every read costs a megamorphic lookup.
    this.on('newListener', (event: string | symbol) => { if (event === 'data') this.dataListeners++; });
    this.on('removeListener', (event: string | symbol) => { if (event === 'data') this.dataListeners--; });
    this.shared = sharedOf(addon);
    this.readBuffer = this.shared.readBuffer;
    this.handle = addon.adopt(fd, this.onEvent);
    addon.setReading(this.handle, true);
  }

  get writable(): boolean {
    return !this.destroyed && !this.writeEnded;
  }

  /** Bytes written but not yet taken by the kernel. */
  get writableLength(): number {
    if (this.destroyed) return 0;
    const forwarded = this.shared.forwarder !== null && this.shared.forwarder === this.forwardSource ? this.shared.forward[0] as number : 0;
    return this.addon.pendingBytes(this.handle) + forwarded;
  }

  write(bytes: Buffer): boolean {
    if (this.destroyed || this.writeEnded) return false;
    const source = this.forwardSource;
    if (source !== null) {
      const forward = this.shared.forward;
      // The read its source is handing over, whole, with nothing forwarded yet: left to the addon.
      if (bytes === source.inPlaceChunk && forward[0] === 0 && this.corks === 0 && !source.destroyed) {
        forward[0] = bytes.length;
        this.shared.forwarder = source;
        return !this.needDrain;
      }
      if (forward[0] !== 0) source.sendForwardDue();
    }
    if (this.corks > 0) {
      // As a corked Writable: kept, and past the high-water mark the writer is told to wait.
      this.corked.push(bytes);
      this.corkedBytes += bytes.length;
      if (this.corkedBytes + this.addon.pendingBytes(this.handle) < WRITE_HIGH_WATER_BYTES) return true;
      this.needDrain = true;
      return false;
    }
    if (this.send(bytes)) return !this.needDrain;
    this.needDrain = true;
    return false;
  }

  cork(): void {
    this.corks++;
  }

  uncork(): void {
    if (this.corks === 0 || --this.corks > 0 || this.corked.length === 0) return;
    const pieces = this.corked;
    this.corked = [];
    this.corkedBytes = 0;
    // All sent at once: a writer told to wait while corked hears 'drain' now (after this call, as Node's).
    if (this.send(pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces)) && this.needDrain) process.nextTick(this.drained);
  }

  /** This socket's read left to the addon to forward, sent now instead: something is to go out after it. */
  private sendForwardDue(): void {
    const { forward } = this.shared;
    const due = forward[0] as number;
    const target = this.forwardTarget;
    if (due === 0 || this.shared.forwarder !== this || target === null) return;
    forward[0] = 0;
    if (!target.destroyed && !target.send(this.readBuffer.subarray(0, due))) target.needDrain = true;
  }

  /** Hands bytes to the addon: true when the kernel took them all (else a DRAIN event follows, or a failure). */
  private send(bytes: Buffer): boolean {
    const result = this.addon.write(this.handle, bytes);
    if (result < 0) {
      // As on Node's sockets, a failed write is reported after the call returns.
      process.nextTick(() => this.fail(result));
      return false;
    }
    return result === 1;
  }

  private readonly drained = (): void => {
    if (this.destroyed || !this.needDrain || this.corks > 0 || this.addon.pendingBytes(this.handle) > 0) return;
    this.needDrain = false;
    this.emit('drain');
  };

  end(bytes?: Buffer): void {
    if (this.destroyed || this.writeEnded) return;
    this.forwardSource?.sendForwardDue();
    if (bytes !== undefined && bytes.length > 0) this.write(bytes);
    if (this.corks > 0) {
      this.corks = 1;
      this.uncork();
    }
    this.writeEnded = true;
    const result = this.addon.shutdown(this.handle);
    if (result < 0) this.fail(result);
    else this.closeWhenDone();
  }

  destroy(): void {
    if (this.destroyed) return;
    // Written before it went: sent, as a write made then would have been.
    this.sendForwardDue();
    this.forwardSource?.sendForwardDue();
    this.destroyed = true;
    this.held.length = 0;
    this.addon.close(this.handle);
    process.nextTick(() => this.emit('close'));
  }

  pause(): void {
    this.flowing = false;
  }

  resume(): void {
    if (this.destroyed || this.flowing) return;
    this.flowing = true;
    // Reading stopped for what was held: it starts again here even when a reader that paused at the
    // last held chunk has emptied the queue.
    if (this.held.length > 0 || this.readEnded || this.readingStopped) this.scheduleFlow();
  }

  /** The addon's events: a read (its length, no kind), END, DRAIN, ERROR. */
  private readonly onEvent = (value: number, kind?: number): void => {
    if (this.destroyed) return;
    if (kind === undefined) {
      this.read(value);
      return;
    }
    if (kind === END_EVENT) {
      this.readEnded = true;
      // As Node's sockets: 'end' at once when nothing read waits for the reader, even while paused
      // (a session held up by a hook still sees its client go).
      if (this.held.length === 0) this.emitEnd();
    } else if (kind === DRAIN_EVENT) {
      this.drained();
      this.closeWhenDone();
    } else if (kind === ERROR_EVENT) {
      this.fail(value);
    }
  };

  private read(bytes: number): void {
    if (this.inPlaceReader !== undefined && this.flowing && this.held.length === 0) {
      const chunk = this.readBuffer.subarray(0, bytes);
      this.inPlaceChunk = chunk;
      try {
        this.dispatch(chunk, false);
      } finally {
        this.inPlaceChunk = null;
      }
      return;
    }
    const chunk = Buffer.allocUnsafe(bytes);
    this.readBuffer.copy(chunk, 0, 0, bytes);
    this.deliver(chunk);
  }

  /** `target`: the socket the reader writes to, whose writes of a read as it lies the addon forwards (another NativeSocket of this addon). */
  readInPlace(reader: InPlaceReader | undefined, target?: RelaySocket): void {
    this.sendForwardDue();
    this.inPlaceReader = reader;
    const to = reader !== undefined && target instanceof NativeSocket && target.addon === this.addon && !target.destroyed ? target : null;
    if (to === this.forwardTarget || this.destroyed) return;
    if (this.forwardTarget !== null) this.forwardTarget.forwardSource = null;
    if (to !== null && to.forwardSource !== null) {
      // The target's former source may be within a read that wrote to it: sent before it loses the pairing.
      to.forwardSource.sendForwardDue();
      to.forwardSource.forwardTarget = null;
    }
    this.forwardTarget = to;
    if (to !== null) to.forwardSource = this;
    this.addon.pair(this.handle, to === null ? null : to.handle);
  }

  /** A chunk to the in-place reader, then to the 'data' listeners (a copy of one that is not `owned`). */
  private dispatch(chunk: Buffer, owned: boolean): void {
    this.inPlaceReader?.(chunk, owned);
    if (this.dataListeners > 0) this.emit('data', owned ? chunk : Buffer.from(chunk));
  }

  private deliver(chunk: Buffer): void {
    if (this.flowing && this.held.length === 0) {
      this.dispatch(chunk, true);
      return;
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes >= HIGH_WATER_BYTES) {
      this.readingStopped = true;
      this.addon.setReading(this.handle, false);
    }
  }

  private scheduleFlow(): void {
    if (this.flowScheduled) return;
    this.flowScheduled = true;
    process.nextTick(this.flow);
  }

  /** Delivers what was held while paused, in order, then 'end' if the FIN came after it. */
  private readonly flow = (): void => {
    this.flowScheduled = false;
    while (this.flowing && !this.destroyed && this.held.length > 0) {
      const chunk = this.held.shift() as Buffer;
      this.heldBytes -= chunk.length;
      this.dispatch(chunk, true);
    }
    if (!this.flowing || this.destroyed) return;
    if (this.readEnded) {
      this.emitEnd();
    } else if (this.readingStopped) {
      this.readingStopped = false;
      this.addon.setReading(this.handle, true);
    }
  };

  private emitEnd(): void {
    if (this.endEmitted) return;
    this.endEmitted = true;
    this.emit('end');
    // As a net.Socket without allowHalfOpen: the peer's FIN ends this side too.
    if (this.writeEnded) this.closeWhenDone();
    else if (!this.destroyed) this.end();
  }

  /** Both ways done (the FIN read and delivered, ours sent): closed, as Node's autoDestroy does. */
  private closeWhenDone(): void {
    if (this.writeEnded && this.endEmitted && !this.destroyed && this.addon.pendingBytes(this.handle) === 0) this.destroy();
  }

  private fail(errno: number): void {
    if (this.destroyed) return;
    // What the peer sent before the failure (a server's last words before a reset) comes first, paused
    // or not: at most the high-water mark, and the failure must not wait for a reader that may never read.
    while (this.held.length > 0 && !this.destroyed) this.dispatch(this.held.shift() as Buffer, true);
    this.heldBytes = 0;
    if (this.destroyed) return;
    const error = socketError(errno);
    // Reported only to a listener: a socket nobody watches any more must not bring the process down.
    if (this.listenerCount('error') > 0) this.emit('error', error);
    this.destroy();
  }
}
