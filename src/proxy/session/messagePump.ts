/**
 * Relays one direction of a session (client → upstream or upstream → client), framing messages
 * over the raw bytes without decoding them.
 *
 * Speed: each incoming chunk is walked header by header and forwarded as contiguous runs of
 * untouched bytes (usually the whole chunk in one write); several runs of one chunk go out as one
 * write: copied into one buffer when they are small, else corked, as one writev. An intercepted
 * message the hook leaves as it is stays part of its run, so a chunk nothing rewrites still
 * leaves as one write. A message split across chunks streams through as it comes, so memory stays
 * flat whatever its size. Only types a hook intercepts are buffered whole (`intercepted[type]` 1),
 * or those it intercepts on demand (2) when `wantsWhole` says so as they come.
 * For a type in `runs` (DataRow), the whole messages of that type that follow one another in the
 * chunk go to the hook together, as one buffer: a result's rows cost one call per chunk, not per row.
 *
 * Backpressure: when the target's buffer is full the source is paused until 'drain'; while an
 * asynchronous hook works, the source is paused too and the rest of the chunk waits.
 *
 * In place: from a source that reads into one buffer of its own (the native sockets'
 * readInPlace), toward a target that keeps nothing past write(), a chunk is walked and forwarded
 * where it lies, with no copy; the moment a hook is to see a message of it (it may keep it, and
 * answer later) the chunk is copied first, and so is anything queued from it that must outlive the
 * call.
 */
import type { RelaySocket } from './relaySocket.js';
import { DROP_MESSAGE, INJECT_AFTER, type PumpFailure, type PumpHandler } from './pumpHandler.js';
import type { MessageVerdict } from './sessionHooks.js';

/** How an intercepted message was settled. */
const UNCHANGED = 0;   // forward the same bytes: left in place
const REPLACED = 1;    // what came before it and the verdict are queued
const SUSPENDED = 2;   // the hook went asynchronous, or failed: processing stopped here

const NO_RUNS = new Uint8Array(256);
/** Up to this many bytes in all, several pieces due at once are copied into one buffer and written once. */
const GATHER_BYTES = 16 * 1024;

export class MessagePump {
  /** Counts incoming chunks; the idle timer compares it between ticks. */
  activity = 0;
  private carry: Buffer | null = null;        // an incomplete header (under 6 bytes)
  private frame: Buffer | null = null;        // an intercepted message being collected
  private frameFilled = 0;
  private streamRemaining = 0;                // bytes of a message still to pass (or drop)
  private streamDropping = false;
  private streamInjectAfter = false;
  private readonly out: Buffer[] = [];
  private waitingForDrain = false;
  private hookBusy = false;
  private busyTurns = 0;                      // loop turns an asynchronous hook has been busy
  private readonly backlog: Buffer[] = [];
  private stopped = false;
  // Untouched bytes of the chunk being walked, not yet queued while a hook looks at the message after them.
  private runChunk: Buffer | null = null;
  private runFrom = 0;
  private runTo = 0;
  /** Chunks come in the source's reading buffer (readInPlace): copied before anything keeps them. */
  private readingInPlace = false;
  /** The chunk being walked while it lies in that buffer (null once copied, or when it does not). */
  private inPlaceChunk: Buffer | null = null;

  constructor(
    private readonly source: RelaySocket,
    private readonly target: RelaySocket,
    private readonly limits: Uint32Array,
    private readonly intercepted: Uint8Array,
    private readonly handler: PumpHandler,
    private readonly runs: Uint8Array = NO_RUNS,
  ) {}

  start(initialBytes?: Buffer): void {
    // In place only toward a target that keeps nothing it is given past write(): what the pump
    // forwards as it came is written from the reading buffer itself.
    if (this.source.readInPlace !== undefined && this.target.writesAtOnce === true) {
      this.readingInPlace = true;
      this.source.readInPlace(this.onChunk, this.target);
    } else {
      this.source.on('data', this.onData);
    }
    if (initialBytes && initialBytes.length > 0) this.onData(initialBytes);
    // A hook still at work on what came with the login (or a target that is full) keeps the source paused.
    if (!this.hookBusy && !this.waitingForDrain && !this.stopped) this.source.resume();
  }

  stop(): void {
    this.stopped = true;
    if (this.readingInPlace) this.source.readInPlace?.(undefined);
    else this.source.off('data', this.onData);
    this.target.off('drain', this.onDrain);
    this.backlog.length = 0;
  }

  /** Sends bytes to the target now, outside the relayed stream (e.g. an immediate reply). */
  sendNow(bytes: Buffer): void {
    this.push(bytes);
    this.flush();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.activity++;
    if (this.stopped) return;
    if (this.hookBusy) this.backlog.push(chunk);
    else this.process(chunk, 0);
  };

  private readonly onChunk = (chunk: Buffer, owned: boolean): void => {
    if (owned) {
      this.onData(chunk);
      return;
    }
    this.activity++;
    if (this.stopped) return;
    if (this.hookBusy) {
      this.backlog.push(Buffer.from(chunk));
      return;
    }
    this.inPlaceChunk = chunk;
    this.process(chunk, 0);
    if (this.inPlaceChunk === null) return;
    this.inPlaceChunk = null;
    // A walk that returned with pieces of the read still queued must not leave them in the reading
    // buffer. (Today only a stopped pump does, and it writes nothing more: this keeps it so.)
    this.keepQueued(chunk.buffer);
  };

  /**
   * The chunk being walked, as one that may be kept: a copy, at the same offsets, of one that lies
   * in the source's reading buffer (pieces of it already queued are copied too).
   */
  private kept(chunk: Buffer): Buffer {
    if (chunk !== this.inPlaceChunk) return chunk;
    this.keepQueued(chunk.buffer);
    this.inPlaceChunk = null;
    return Buffer.from(chunk);
  }

  /** Replaces the queued pieces that lie in `reading` (the source's reading buffer) with copies. */
  private keepQueued(reading: ArrayBufferLike): void {
    const out = this.out;
    for (let i = 0; i < out.length; i++) if ((out[i] as Buffer).buffer === reading) out[i] = Buffer.from(out[i] as Buffer);
  }

  private readonly onDrain = (): void => {
    this.waitingForDrain = false;
    if (!this.hookBusy && !this.stopped) this.source.resume();
  };

  private process(input: Buffer, start: number): void {
    let chunk = input;
    let pos = start;
    if (this.carry !== null) {
      chunk = Buffer.concat([this.carry, chunk.subarray(pos)]);
      this.carry = null;
      pos = 0;
    }
    const len = chunk.length;
    const out = this.out;
    if (this.frame !== null) {
      const frame = this.frame;
      const n = Math.min(frame.length - this.frameFilled, len - pos);
      chunk.copy(frame, this.frameFilled, pos, pos + n);
      this.frameFilled += n;
      pos += n;
      if (this.frameFilled < frame.length) return;
      this.frame = null;
      // A hook that answers later resumes the walk on the chunk: kept.
      chunk = this.kept(chunk);
      const outcome = this.deliverIntercepted(frame, chunk, pos);
      if (outcome === SUSPENDED) return;
      if (outcome === UNCHANGED) this.push(frame);
    }
    let runStart = pos;
    if (this.streamRemaining > 0) {
      const n = Math.min(this.streamRemaining, len - pos);
      pos += n;
      this.streamRemaining -= n;
      if (this.streamDropping) runStart = pos;
      if (this.streamRemaining > 0) {
        if (pos > runStart) out.push(chunk.subarray(runStart, pos));
        this.flush();
        return;
      }
      if (this.streamInjectAfter) {
        this.streamInjectAfter = false;
        if (pos > runStart) out.push(chunk.subarray(runStart, pos));
        for (const bytes of this.handler.takeAfter()) out.push(bytes);
        runStart = pos;
      }
    }
    while (pos < len) {
      const available = len - pos;
      if (available < 5) break;
      const type = chunk[pos] as number;
      const length = chunk.readInt32BE(pos + 1);
      const limit = this.limits[type] as number;
      if (!isAllowedLength(length, limit)) {
        if (pos > runStart) out.push(chunk.subarray(runStart, pos));
        this.flush();
        this.fail(limit === 0 ? { kind: 'invalid-type', type } : { kind: 'invalid-length', type, length });
        return;
      }
      const total = length + 1;
      const whole = this.intercepted[type] as number;
      // A hook asks about a message once, with its first body byte here (the state follows it as it asks).
      if (whole === 2 && length > 4 && available < 6) break;
      if (whole === 1 || (whole === 2 && this.handler.wantsWhole?.(type, chunk, pos, total <= available ? pos + total : -1) !== false)) {
        if (total <= available) {
          // The hook may keep the message, and resume the walk later: both from a kept chunk.
          chunk = this.kept(chunk);
          const end = this.runs[type] === 1 ? wholeRunEnd(chunk, pos + total, type, limit) : pos + total;
          const frame = chunk.subarray(pos, end);
          this.runChunk = chunk;
          this.runFrom = runStart;
          this.runTo = pos;
          const outcome = this.deliverIntercepted(frame, chunk, end);
          if (outcome === SUSPENDED) return;
          if (outcome === REPLACED) runStart = end;
          else if (this.runChunk === null) runStart = pos; // something was queued meanwhile: the message starts a new run
          else this.runChunk = null;                        // unchanged: it stays part of the run
          pos = end;
          continue;
        }
        if (pos > runStart) out.push(chunk.subarray(runStart, pos));
        const frame = Buffer.allocUnsafe(total);
        chunk.copy(frame, 0, pos, len);
        this.frame = frame;
        this.frameFilled = available;
        pos = len;
        runStart = len;
        break;
      }
      if (length > 4 && available < 6) break;
      const action = this.handler.observe(type, length > 4 ? (chunk[pos + 5] as number) : 0);
      if (this.stopped) return; // the handler ended the session (a header hook failed)
      if ((action & DROP_MESSAGE) !== 0) {
        if (pos > runStart) out.push(chunk.subarray(runStart, pos));
        if (total <= available) {
          pos += total;
        } else {
          this.streamRemaining = total - available;
          this.streamDropping = true;
          this.streamInjectAfter = false;
          pos = len;
        }
        runStart = pos;
        continue;
      }
      if (total <= available) {
        pos += total;
        if ((action & INJECT_AFTER) !== 0) {
          out.push(chunk.subarray(runStart, pos));
          for (const bytes of this.handler.takeAfter()) out.push(bytes);
          runStart = pos;
        }
      } else {
        this.streamRemaining = total - available;
        this.streamDropping = false;
        this.streamInjectAfter = (action & INJECT_AFTER) !== 0;
        pos = len;
      }
    }
    if (runStart === 0 && pos === len) out.push(chunk); // the usual case: the whole chunk as it came
    else if (pos > runStart) out.push(chunk.subarray(runStart, pos));
    if (pos < len) this.carry = Buffer.from(chunk.subarray(pos));
    this.flush();
  }

  /**
   * Hands a message to the hook. UNCHANGED: nothing was queued for it (the caller keeps or queues
   * the same bytes); REPLACED: the pending run and the verdict are queued; SUSPENDED: the hook went
   * asynchronous (processing resumes from `resumeAt` later) or failed.
   */
  private deliverIntercepted(frame: Buffer, chunk: Buffer, resumeAt: number): number {
    let verdict: MessageVerdict | Promise<MessageVerdict>;
    try {
      verdict = this.handler.intercept(frame);
    } catch (error) {
      this.runChunk = null;
      this.fail({ kind: 'hook-failed', error });
      return SUSPENDED;
    }
    if (!(verdict instanceof Promise)) {
      if (verdict === undefined || verdict === frame) return UNCHANGED;
      this.push(verdict);
      return REPLACED;
    }
    this.queueRun();
    // What came before the message stays queued: a hook that answers within this loop turn or the
    // next (the engine answers in a setImmediate) sends it with the verdict and the rest of the
    // chunk in one write, a Parse with its rewritten Bind. A hook that waits longer (a catalog
    // read, a COPY waiting for the server) gets it flushed then, since the server may have to
    // answer it first.
    this.hookBusy = true;
    this.busyTurns = 0;
    this.source.pause();
    setImmediate(this.flushWhileBusy);
    verdict.then(
      (bytes) => {
        if (this.stopped) return;
        this.hookBusy = false;
        this.push(bytes ?? frame);
        this.process(chunk, resumeAt);
        while (!this.hookBusy && !this.stopped && this.backlog.length > 0) {
          this.process(this.backlog.shift() as Buffer, 0);
        }
        if (!this.hookBusy && !this.waitingForDrain && !this.stopped) this.source.resume();
      },
      (error: unknown) => this.fail({ kind: 'hook-failed', error }),
    );
    return SUSPENDED;
  }

  private readonly flushWhileBusy = (): void => {
    if (!this.hookBusy || this.stopped) return;
    // Immediates queued in this check phase (the engine's) run only after this one: wait a turn.
    if (this.busyTurns++ === 0) setImmediate(this.flushWhileBusy);
    else this.flush();
  };

  /** Queues bytes after whatever is pending before them. */
  private push(bytes: Buffer): void {
    this.queueRun();
    if (bytes.length > 0) this.out.push(bytes);
  }

  private queueRun(): void {
    const chunk = this.runChunk;
    if (chunk === null) return;
    this.runChunk = null;
    if (this.runTo > this.runFrom) this.out.push(chunk.subarray(this.runFrom, this.runTo));
  }

  private flush(): void {
    const out = this.out;
    const count = out.length;
    if (count === 0) return;
    if (this.stopped || this.target.destroyed) {
      out.length = 0;
      return;
    }
    let ok: boolean;
    if (count === 1) {
      ok = this.target.write(out.pop() as Buffer);
    } else {
      let total = 0;
      for (let i = 0; i < count; i++) total += (out[i] as Buffer).length;
      if (total <= GATHER_BYTES) {
        // A few small pieces (a rewritten Bind and what came around it): one copy costs less than a corked writev.
        ok = this.target.write(Buffer.concat(out, total));
      } else {
        this.target.cork();
        ok = true;
        for (let i = 0; i < count; i++) ok = this.target.write(out[i] as Buffer);
        this.target.uncork();
      }
      out.length = 0;
    }
    if (!ok && !this.waitingForDrain) {
      this.waitingForDrain = true;
      this.source.pause();
      this.target.once('drain', this.onDrain);
    }
  }

  private fail(reason: PumpFailure): void {
    if (this.stopped) return;
    this.stop();
    this.handler.onFailure(reason);
  }
}

/** A message's length field is at least its own 4 bytes and within its type's limit (0: a type never accepted). */
function isAllowedLength(length: number, limit: number): boolean {
  return limit !== 0 && length >= 4 && length <= limit;
}

/**
 * Where the whole messages of `type` that follow one another from `from` end: at the first byte
 * that is not one (another type, a message cut by the chunk's end, or a length the main loop
 * refuses, which it then does: the same isAllowedLength).
 */
function wholeRunEnd(chunk: Buffer, from: number, type: number, limit: number): number {
  let end = from;
  while (end + 5 <= chunk.length && chunk[end] === type) {
    const length = chunk.readInt32BE(end + 1);
    if (!isAllowedLength(length, limit) || end + 1 + length > chunk.length) break;
    end += 1 + length;
  }
  return end;
}
