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

const CODE_I = 0x49;
const CODE_T = 0x54;

export class ProtocolState implements ProtocolStateView {
  private kinds: number[] = [];
  private payloads: (Buffer | undefined)[] = [];
  private head = 0;
  private status = CODE_I;
  private frontendInCopyIn = false;
  upstreamSkippingUntilSync = false;
  proxyDiscardingUntilSync = false;
  copyMode: CopyMode = 'none';

  get transactionStatus(): TransactionStatus {
    return this.status === CODE_I ? 'I' : this.status === CODE_T ? 'T' : 'E';
  }

  get pendingReplies(): number {
    return this.kinds.length - this.head;
  }

  /**
   * Records a frontend message about to be forwarded. Returns false when the proxy must drop it
   * instead (it is discarding until Sync on an interceptor's request).
   */
  frontendMessage(type: number): boolean {
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
    switch (type) {
      case 0x50: this.push(PARSE); break;                     // P
      case 0x42: this.push(BIND); break;                      // B
      case 0x44: this.push(DESCRIBE); break;                  // D (statement or portal)
      case 0x45: this.push(EXECUTE); break;                   // E
      case 0x43: this.push(CLOSE); break;                     // C
      case 0x51: case 0x46: this.push(SIMPLE_QUERY); break;   // Q, F
      case 0x53:                                              // S
        // PostgreSQL ignores Sync while in COPY IN (clients send one after CopyDone).
        if (!this.frontendInCopyIn) this.push(SYNC);
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
    this.push(INJECTED, messages);
    return true;
  }

  /** Drops frontend messages until the next Sync, as PostgreSQL does after an error. */
  discardUntilSync(): void {
    this.proxyDiscardingUntilSync = true;
  }

  takeDueInjections(): Buffer[] {
    const due: Buffer[] = [];
    while (this.head < this.kinds.length) {
      const kind = this.kinds[this.head];
      if (kind === INJECTED) due.push(this.payloads[this.head] as Buffer);
      else if (kind !== COPY_END) break;
      this.shift();
    }
    return due;
  }

  private headKind(): number {
    return this.head < this.kinds.length ? (this.kinds[this.head] as number) : 0;
  }

  private complete(kind: number): boolean {
    if (this.headKind() !== kind) return false;
    this.shift();
    return this.dueAfterShift();
  }

  private onError(): boolean {
    const kind = this.headKind();
    this.copyMode = 'none';
    this.frontendInCopyIn = false;
    if (kind === 0 || kind === SYNC || kind === SIMPLE_QUERY) return false; // ReadyForQuery follows
    // Extended protocol: PostgreSQL skips everything up to the next Sync, injected replies included.
    while (this.head < this.kinds.length && this.kinds[this.head] !== SYNC) this.shift();
    if (this.head === this.kinds.length) this.upstreamSkippingUntilSync = true;
    return false;
  }

  private onReadyForQuery(status: number): boolean {
    this.status = status;
    this.copyMode = 'none';
    this.frontendInCopyIn = false;
    this.upstreamSkippingUntilSync = false;
    while (this.head < this.kinds.length) {
      const kind = this.kinds[this.head];
      this.shift();
      if (kind === SYNC || kind === SIMPLE_QUERY) break;
    }
    return this.dueAfterShift();
  }

  private dueAfterShift(): boolean {
    while (this.headKind() === COPY_END) this.shift();
    return this.headKind() === INJECTED;
  }

  private push(kind: number, payload?: Buffer): void {
    this.kinds.push(kind);
    this.payloads.push(payload);
  }

  private shift(): void {
    this.payloads[this.head] = undefined;
    this.head++;
    if (this.head === this.kinds.length) {
      this.kinds.length = 0;
      this.payloads.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.kinds.length) {
      this.kinds = this.kinds.slice(this.head);
      this.payloads = this.payloads.slice(this.head);
      this.head = 0;
    }
  }
}
