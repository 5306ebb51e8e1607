/**
 * What PostgreSQL tracks about one session, followed from the relayed message headers:
 * transaction status (from ReadyForQuery), which frontend messages still await their replies,
 * discard-until-Sync after an error in the extended protocol, and COPY mode.
 *
 * This is what lets a later interceptor answer a message itself and stay consistent: a reply it
 * queues with `replyInOrder` reaches the client after the replies to everything forwarded before.
 * The model is kept from headers only (type byte and first body byte), so it costs a switch and a
 * queue operation per message. ReadyForQuery is the resynchronisation point: whatever was still
 * queued before the Sync or Query it answers is dropped there.
 *
 * It is the session's one record of the replies owed: a hook that needs its own data per reply
 * (the enforcement's statement and portal plans) attaches it to the entry of the message it forwards
 * (`expect`), and reads it back as the server answers (`current`, `answered`, `ReplyListener`).
 */

// Kinds of pending replies, in the order the upstream will answer them.
const PARSE = 1;
const BIND = 2;
const DESCRIBE = 3;
const EXECUTE = 4;
const CLOSE = 5;
const SYNC = 6;          // answered by ReadyForQuery
const SIMPLE_QUERY = 7;  // Query or FunctionCall: answered by everything up to ReadyForQuery
const INJECTED = 8;      // bytes the proxy itself sends the client once the replies before it are out
const COPY_END = 9;      // CopyDone/CopyFail: no reply, a marker only

export type TransactionStatus = 'I' | 'T' | 'E';
export type CopyMode = 'none' | 'in' | 'out';

/** The parts of the state an interceptor may read. */
export interface ProtocolStateView {
  readonly transactionStatus: TransactionStatus;
  /** Frontend messages forwarded whose replies have not all come back yet. */
  readonly pendingReplies: number;
  /** The upstream is skipping frontend messages until the next Sync after an extended-protocol error. */
  readonly upstreamSkippingUntilSync: boolean;
  /** The proxy drops frontend messages until the next Sync (after `discardUntilSync`). */
  readonly proxyDiscardingUntilSync: boolean;
  readonly copyMode: CopyMode;
}

/** How an entry left without its reply: the error it got, or skipped by the server after an error. */
export type UnansweredOutcome = 'failed' | 'skipped';

/** Told of entries whose payload leaves the queue without a reply completing it. */
export type ReplyListener<P> = (payload: P, outcome: UnansweredOutcome) => void;

/** What a hook reads and writes of the replies owed: its payloads, one per entry that carries one. */
export interface ReplyTracker<P> {
  /**
   * Attaches `payload` to the next forwarded frontend message of `type` that awaits a reply. Staged
   * payloads match forwarded messages in order; those left unmatched when the forwarded bytes have
   * been followed are dropped.
   */
  expect(type: number, payload: P): void;
  /** The payload of the first entry still owed a reply, if it carries one. */
  readonly head: P | undefined;
  /** The payload of the entry the last backend message belongs to (read before it completed anything). */
  readonly current: P | undefined;
  /** The payload of the entry the last backend message completed (a ReadyForQuery: its Sync or Query). */
  readonly answered: P | undefined;
  /** Frontend messages forwarded whose replies have not all come back yet. */
  readonly pendingReplies: number;
  /**
   * The server sent a CopyInResponse and the frontend has not left that COPY (CopyDone, CopyFail,
   * another message) nor has the server failed it: a Sync forwarded now gets no reply of its own.
   * Followed as the server's messages arrive, before any hook has seen the CopyInResponse.
   */
  readonly inCopyIn: boolean;
  /** True when some payload still owed a reply satisfies `test`. */
  someOwed(test: (payload: P) => boolean): boolean;
  /** Receives the payloads of entries dropped unanswered (an error, a ReadyForQuery past them). */
  onUnanswered(listener: ReplyListener<P>): void;
}

const CODE_I = 0x49;
const CODE_T = 0x54;

export class ProtocolState<P = never> implements ProtocolStateView, ReplyTracker<P> {
  private kinds: number[] = [];
  /** Per entry: a hook's payload, or the bytes of an INJECTED entry. */
  private payloads: (P | Buffer | undefined)[] = [];
  private first = 0;
  /** Entries are kinds[first..end); the arrays keep their capacity between round trips. */
  private end = 0;
  /** Payloads staged for the next forwarded messages: [stagedNext..stagedCount) of these arrays. */
  private readonly stagedTypes: number[] = [];
  private readonly stagedPayloads: (P | undefined)[] = [];
  private stagedCount = 0;
  private stagedNext = 0;
  private listener: ReplyListener<P> | undefined;
  private currentPayload: P | undefined;
  private answeredPayload: P | undefined;
  private status = CODE_I;
  private frontendInCopyIn = false;
  upstreamSkippingUntilSync = false;
  proxyDiscardingUntilSync = false;
  copyMode: CopyMode = 'none';

  get transactionStatus(): TransactionStatus {
    return this.status === CODE_I ? 'I' : this.status === CODE_T ? 'T' : 'E';
  }

  get pendingReplies(): number {
    return this.end - this.first;
  }

  get inCopyIn(): boolean {
    return this.frontendInCopyIn;
  }

  expect(type: number, payload: P): void {
    this.stagedTypes[this.stagedCount] = type;
    this.stagedPayloads[this.stagedCount] = payload;
    this.stagedCount++;
  }

  /** Payloads staged and not yet emptied, matched or not (for tests and diagnostics). */
  get stagedSlots(): number {
    return this.stagedCount;
  }

  /** Drops payloads staged for messages that were not forwarded after all. */
  clearExpected(): void {
    if (this.stagedCount === 0) return;
    // The arrays keep their length (resetting it costs more than the message); their slots are emptied.
    for (let i = 0; i < this.stagedCount; i++) this.stagedPayloads[i] = undefined;
    if (this.stagedCount > 64) {
      this.stagedTypes.length = 0;
      this.stagedPayloads.length = 0;
    }
    this.stagedCount = 0;
    this.stagedNext = 0;
  }

  get current(): P | undefined {
    return this.currentPayload;
  }

  get answered(): P | undefined {
    return this.answeredPayload;
  }

  get head(): P | undefined {
    for (let i = this.first; i < this.end; i++) {
      const kind = this.kinds[i] as number;
      if (kind !== INJECTED && kind !== COPY_END) return this.payloads[i] as P | undefined;
    }
    return undefined;
  }

  someOwed(test: (payload: P) => boolean): boolean {
    for (let i = this.first; i < this.end; i++) {
      const kind = this.kinds[i] as number;
      const payload = this.payloads[i];
      if (kind !== INJECTED && payload !== undefined && test(payload as P)) return true;
    }
    return false;
  }

  onUnanswered(listener: ReplyListener<P>): void {
    this.listener = listener;
  }

  /**
   * Records a frontend message about to be forwarded. Returns false when the proxy must drop it
   * instead (it is discarding until Sync on an interceptor's request).
   */
  frontendMessage(type: number): boolean {
    // A payload staged for this message goes with its entry, or is dropped with the message.
    const payload = this.stagedNext < this.stagedCount && this.stagedTypes[this.stagedNext] === type
      ? this.stagedPayloads[this.stagedNext++] : undefined;
    // All matched: the slots are emptied now, not at the next message a hook reads whole (a
    // pipeline of messages let through unread, without Sync, would otherwise keep every payload).
    if (this.stagedNext === this.stagedCount && this.stagedCount > 0) this.clearExpected();
    const endsDiscard = type === 0x53 /* S */ || type === 0x58 /* X */;
    if (this.proxyDiscardingUntilSync) {
      if (!endsDiscard) return false;
      this.proxyDiscardingUntilSync = false;
    }
    if (this.upstreamSkippingUntilSync) {
      // PostgreSQL reads and ignores these; they will get no reply.
      if (!endsDiscard) return true;
      this.upstreamSkippingUntilSync = false;
    }
    // In COPY IN, PostgreSQL fails the COPY on any message but CopyData, Flush and Sync: a Sync
    // after such a message is answered.
    if (this.frontendInCopyIn && type !== 0x64 /* d */ && type !== 0x48 /* H */ && type !== 0x53 /* S */) this.frontendInCopyIn = false;
    switch (type) {
      case 0x50: this.push(PARSE, payload); break;                     // P
      case 0x42: this.push(BIND, payload); break;                      // B
      case 0x44: this.push(DESCRIBE, payload); break;                  // D (statement or portal)
      case 0x45: this.push(EXECUTE, payload); break;                   // E
      case 0x43: this.push(CLOSE, payload); break;                     // C
      case 0x51: case 0x46: this.push(SIMPLE_QUERY, payload); break;   // Q, F
      case 0x53:                                                       // S
        // PostgreSQL ignores Sync while in COPY IN (clients send one after CopyDone).
        if (!this.frontendInCopyIn) this.push(SYNC, payload);
        break;
      case 0x63: case 0x66:                                   // c, f
        this.frontendInCopyIn = false;
        if (this.pendingReplies > 0) this.push(COPY_END);
        break;
      default: break;                                         // H, d, X: no reply of their own
    }
    return true;
  }

  /**
   * Follows a backend message. Returns true when injected replies became due: take them with
   * `takeDueInjections()` and send them right after this message.
   */
  backendMessage(type: number, firstBodyByte: number): boolean {
    const first = this.first;
    this.currentPayload = first < this.end && this.kinds[first] !== INJECTED ? this.payloads[first] as P | undefined : undefined;
    this.answeredPayload = undefined;
    switch (type) {
      case 0x31: return this.complete(PARSE);                 // 1 ParseComplete
      case 0x32: return this.complete(BIND);                  // 2 BindComplete
      case 0x33: return this.complete(CLOSE);                 // 3 CloseComplete
      case 0x6e: return this.complete(DESCRIBE);              // n NoData
      case 0x54: return this.complete(DESCRIBE);              // T RowDescription (else part of a result)
      case 0x43: case 0x49: case 0x73:                        // C, I, s
        this.copyMode = 'none';
        return this.complete(EXECUTE);
      case 0x45: return this.onError();                       // E
      case 0x5a: return this.onReadyForQuery(firstBodyByte);  // Z
      case 0x47: this.copyMode = 'in'; this.frontendInCopyIn = true; return false; // G
      case 0x48: this.copyMode = 'out'; return false;         // H
      case 0x57: this.copyMode = 'in'; this.frontendInCopyIn = true; return false; // W
      default: return false;                                  // D, t, N, A, S, V, d, c...
    }
  }

  /**
   * Queues bytes for the client behind the replies still due. Returns false when nothing is due:
   * the caller sends them right away.
   */
  replyInOrder(messages: Buffer): boolean {
    if (this.pendingReplies === 0) return false;
    this.append(INJECTED, messages);
    return true;
  }

  /** Drops frontend messages until the next Sync, as PostgreSQL does after an error. */
  discardUntilSync(): void {
    this.proxyDiscardingUntilSync = true;
  }

  takeDueInjections(): Buffer[] {
    const due: Buffer[] = [];
    while (this.first < this.end) {
      const kind = this.kinds[this.first];
      if (kind === INJECTED) due.push(this.payloads[this.first] as Buffer);
      else if (kind !== COPY_END) break;
      this.shift();
    }
    return due;
  }

  private headKind(): number {
    return this.first < this.end ? (this.kinds[this.first] as number) : 0;
  }

  private complete(kind: number): boolean {
    if (this.headKind() !== kind) return false;
    this.answeredPayload = this.payloads[this.first] as P | undefined;
    this.shift();
    return this.dueAfterShift();
  }

  /** Shifts the head entry, telling the listener its payload left unanswered. */
  private drop(outcome: UnansweredOutcome): void {
    const kind = this.kinds[this.first] as number;
    const payload = this.payloads[this.first];
    this.shift();
    if (payload !== undefined && kind !== INJECTED) this.listener?.(payload as P, outcome);
  }

  private onError(): boolean {
    const kind = this.headKind();
    this.copyMode = 'none';
    this.frontendInCopyIn = false;
    if (kind === 0 || kind === SYNC || kind === SIMPLE_QUERY) { // ReadyForQuery follows
      if (this.currentPayload !== undefined) this.listener?.(this.currentPayload, 'failed');
      return false;
    }
    // Extended protocol: PostgreSQL skips everything up to the next Sync, injected replies included.
    this.drop('failed');
    while (this.first < this.end && this.kinds[this.first] !== SYNC) this.drop('skipped');
    if (this.first === this.end) this.upstreamSkippingUntilSync = true;
    return false;
  }

  private onReadyForQuery(status: number): boolean {
    this.status = status;
    this.copyMode = 'none';
    this.frontendInCopyIn = false;
    this.upstreamSkippingUntilSync = false;
    while (this.first < this.end) {
      const kind = this.kinds[this.first];
      if (kind === SYNC || kind === SIMPLE_QUERY) {
        this.answeredPayload = this.payloads[this.first] as P | undefined;
        this.shift();
        break;
      }
      this.drop('skipped');
    }
    return this.dueAfterShift();
  }

  private dueAfterShift(): boolean {
    while (this.headKind() === COPY_END) this.shift();
    return this.headKind() === INJECTED;
  }

  private push(kind: number, payload?: P): void {
    this.append(kind, payload);
  }

  private append(kind: number, payload: P | Buffer | undefined): void {
    this.kinds[this.end] = kind;
    this.payloads[this.end] = payload;
    this.end++;
  }

  private shift(): void {
    this.payloads[this.first] = undefined;
    this.first++;
    if (this.first === this.end) {
      this.first = 0;
      this.end = 0;
      // Small arrays are reused as they are; one grown by a long pipeline is given back.
      if (this.kinds.length > 1024) {
        this.kinds = [];
        this.payloads = [];
      }
    } else if (this.first >= 1024 && this.first * 2 >= this.end) {
      this.kinds = this.kinds.slice(this.first, this.end);
      this.payloads = this.payloads.slice(this.first, this.end);
      this.end -= this.first;
      this.first = 0;
    }
  }
}
