/**
 * The running phase of a session: two message pumps (client → upstream, upstream → client),
 * the protocol state they keep, the hooks they consult, the idle timer, and the closing rules:
 * whichever side goes away, the other is closed too and nothing is left open upstream.
 */
import type { Logger } from 'pino';
import type { WarningThrottle } from './warningThrottle.js';
import type { RelaySocket } from './relaySocket.js';
import { errorResponse, terminate, type ErrorFields } from '../protocol/messages.js';
import { MessagePump } from './messagePump.js';
import { DROP_MESSAGE, FORWARD, INJECT_AFTER, type PumpFailure, type PumpHandler } from './pumpHandler.js';
import { ProtocolState } from './protocolState.js';
import { SessionFatal } from './sessionFatal.js';
import { DROP, passThroughHooks, type SessionContext, type SessionHooks, type SessionHooksFactory } from './sessionHooks.js';
import { typeSet } from '../protocol/messageLimits.js';
import { forEachFrame, ProtocolViolation } from '../protocol/messageReaders.js';

/**
 * Backend types a hook may take on demand: those the column policies read in place. Each is
 * followed in the ProtocolState once, as the hook is asked about it (the hook reads `replies`
 * past it), whatever the hook answers.
 */
const ON_DEMAND_TYPES = 'DdNTC';

export interface SessionRelayOptions {
  client: RelaySocket;
  upstream: RelaySocket;
  /** Absent: every message passes as the same bytes. */
  hooksFactory: SessionHooksFactory | undefined;
  frontendLimits: Uint32Array;
  backendLimits: Uint32Array;
  idleTimeoutMs: number;
  logger: Logger;
  /** Concise, rate-limited warnings about malformed client messages. */
  warnings?: WarningThrottle;
  /** Cancels the query running upstream (used when the client vanishes mid-query). */
  cancelUpstream: () => void;
  onClosed: () => void;
}

export class SessionRelay {
  private readonly frontend: MessagePump;
  private readonly backend: MessagePump;
  private readonly state = new ProtocolState<unknown>();
  private readonly hooks: SessionHooks;
  private closed = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private idleSince = Date.now();
  private lastActivity = -1;

  constructor(
    private readonly options: SessionRelayOptions,
    context: Omit<SessionContext, 'replyInOrder' | 'discardUntilSync' | 'end' | 'state' | 'replies'>,
  ) {
    const state = this.state;
    const sessionContext: SessionContext = {
      ...context,
      state,
      replies: state,
      replyInOrder: (messages) => {
        if (!state.replyInOrder(messages)) this.backend.sendNow(messages);
      },
      discardUntilSync: () => state.discardUntilSync(),
      end: (fields) => this.fatal(fields),
    };
    const hooks = options.hooksFactory ? options.hooksFactory(sessionContext) : passThroughHooks;
    this.hooks = hooks;
    const backendIntercepted = typeSet(hooks.backendTypes);
    for (const type of hooks.backendOnDemandTypes ?? '') {
      // Asking about a message follows it in the ProtocolState first: only types it merely reads may be asked about.
      if (!ON_DEMAND_TYPES.includes(type)) throw new Error(`session hooks cannot take backend type ${type} on demand`);
      backendIntercepted[type.charCodeAt(0)] = 2;
    }
    const backendRuns = typeSet(hooks.backendRunTypes ?? '');
    for (const type of hooks.backendRunTypes ?? '') {
      // A run is followed in the ProtocolState once: only DataRow leaves it as it was.
      if (type !== 'D') throw new Error(`session hooks cannot take backend type ${type} in runs`);
    }
    const frontendHeaders = typeSet(hooks.frontendHeaderTypes ?? '');
    const frontendIntercepted = typeSet(hooks.frontendTypes);
    for (const type of hooks.frontendOnDemandTypes ?? '') {
      const code = type.charCodeAt(0);
      if (frontendIntercepted[code] === 1 || frontendHeaders[code] === 1) throw new Error(`session hooks cannot take frontend type ${type} both on demand and otherwise`);
      frontendIntercepted[code] = 2;
    }
    const backendHeaders = typeSet(hooks.backendHeaderTypes ?? '');
    // An on-demand message is followed in the ProtocolState when the hook is asked about it; its
    // observe or intercept that follows takes that outcome instead of following it again.
    let followed = false;
    let followedDue = false;
    const followBackend = (type: number, firstBodyByte: number): boolean => {
      if (!followed) return state.backendMessage(type, firstBodyByte);
      followed = false;
      return followedDue;
    };
    const frontendHandler: PumpHandler = {
      observe: (type, firstBodyByte) => {
        if (frontendHeaders[type] !== 1) return state.frontendMessage(type) ? FORWARD : DROP_MESSAGE;
        try {
          hooks.onFrontendHeader?.(type, firstBodyByte, sessionContext);
        } catch (error) {
          this.frontend.stop();
          this.onFrontendFailure({ kind: 'hook-failed', error });
          return DROP_MESSAGE;
        }
        const forwarded = state.frontendMessage(type);
        state.clearExpected();
        return forwarded ? FORWARD : DROP_MESSAGE;
      },
      intercept: (message) => {
        const verdict = hooks.onFrontendMessage(message, sessionContext);
        if (verdict instanceof Promise) return verdict.then((bytes) => this.followForwarded(bytes ?? message, message));
        return this.followForwarded(verdict ?? message, message);
      },
      wantsWhole: (type, chunk, start, end) => {
        if (end < 0) return true; // not all here: the hook could not read it in place
        try {
          return hooks.wantsFrontendMessage?.(type, chunk, start, end, sessionContext) ?? true;
        } catch {
          return true; // the hook then sees the message whole, and fails there if it must
        }
      },
      takeAfter: () => [],
      onFailure: (reason) => this.onFrontendFailure(reason),
    };
    const backendHandler: PumpHandler = {
      observe: (type, firstBodyByte) => {
        const due = followBackend(type, firstBodyByte);
        if (backendHeaders[type] === 1) {
          try {
            hooks.onBackendHeader?.(type, firstBodyByte, sessionContext);
          } catch (error) {
            this.onBackendFailure({ kind: 'hook-failed', error });
            return DROP_MESSAGE;
          }
        }
        return due ? INJECT_AFTER : FORWARD;
      },
      intercept: (message) => {
        // The state follows PostgreSQL's own messages, whatever the hook makes of them.
        const due = followBackend(message[0] as number, message.length > 5 ? (message[5] as number) : 0);
        const verdict = hooks.onBackendMessage(message, sessionContext);
        if (!due) return verdict;
        if (verdict instanceof Promise) return verdict.then((bytes) => Buffer.concat([bytes ?? message, ...state.takeDueInjections()]));
        return Buffer.concat([verdict ?? message, ...state.takeDueInjections()]);
      },
      wantsWhole: (type, chunk, start, end) => {
        followedDue = state.backendMessage(type, 0);
        followed = true;
        try {
          return hooks.wantsBackendMessage?.(type, chunk, start, end, sessionContext) ?? true;
        } catch (error) {
          // It may have followed the message in part: seeing it whole could follow it twice.
          this.onBackendFailure({ kind: 'hook-failed', error });
          return false;
        }
      },
      takeAfter: () => state.takeDueInjections(),
      onFailure: (reason) => this.onBackendFailure(reason),
    };
    this.frontend = new MessagePump(options.client, options.upstream, options.frontendLimits, frontendIntercepted, frontendHandler);
    this.backend = new MessagePump(options.upstream, options.client, options.backendLimits, backendIntercepted, backendHandler, backendRuns);
  }

  start(clientBytes: Buffer, upstreamBytes: Buffer): void {
    const { client, upstream } = this.options;
    client.on('end', this.onClientGone);
    client.on('close', this.onClientGone);
    client.on('error', this.onClientError);
    upstream.on('end', this.onUpstreamEnd);
    upstream.on('close', this.onUpstreamEnd);
    upstream.on('error', this.onUpstreamError);
    // Each pump lets its source flow unless what came with the login keeps it waiting.
    this.backend.start(upstreamBytes);
    this.frontend.start(clientBytes);
    if (this.options.idleTimeoutMs > 0) this.armIdleTimer();
  }

  /** Ends the session with a FATAL to the client (e.g. the proxy shuts down). */
  terminate(fields: ErrorFields): void {
    this.fatal(fields);
  }

  /**
   * Follows what is actually forwarded in place of a frontend message (`bytes`: the same frame, or
   * the hook's replacement); drops what the discard-until-Sync state says to drop.
   */
  private followForwarded(bytes: Buffer, message: Buffer): Buffer {
    const state = this.state;
    // One message: the frame itself, or the usual replacement.
    if (bytes === message || (bytes.length >= 5 && bytes.readInt32BE(1) + 1 === bytes.length)) {
      const forwarded = state.frontendMessage(bytes[0] as number);
      state.clearExpected();
      return forwarded ? bytes : DROP;
    }
    const kept: Buffer[] = [];
    forEachFrame(bytes, (type, _first, start, end) => {
      if (state.frontendMessage(type)) kept.push(bytes.subarray(start, end));
    });
    state.clearExpected();
    return kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept);
  }

  private busy(): boolean {
    return this.state.pendingReplies > 0 || this.state.copyMode !== 'none';
  }

  private readonly onClientGone = (): void => {
    if (this.closed) return;
    const { upstream } = this.options;
    if (this.busy()) {
      // PostgreSQL notices a vanished client only when it next writes: stop the query now.
      this.options.cancelUpstream();
      upstream.destroy();
    } else {
      upstream.end(terminate());
      setTimeout(() => upstream.destroy(), 5_000).unref();
    }
    // A client that half-closed with replies unread would keep its socket (and its slot) waiting for them.
    this.closeClientSoon();
    this.finish();
  };

  private readonly onClientError = (error: Error): void => {
    this.options.logger.debug({ err: { message: error.message } }, 'proxy: client socket error');
    this.onClientGone();
  };

  private readonly onUpstreamEnd = (): void => {
    if (this.closed) return;
    this.options.client.end();
    this.closeClientSoon();
    this.finish();
  };

  private readonly onUpstreamError = (error: Error): void => {
    if (this.closed) return;
    this.options.logger.warn({ err: { message: error.message } }, 'proxy: upstream connection failed');
    this.fatal({ severity: 'FATAL', code: '08006', message: 'pgveil lost its connection to the database server' });
  };

  private onFrontendFailure(reason: PumpFailure): void {
    if (reason.kind === 'hook-failed' && reason.error instanceof SessionFatal) {
      // A hook ending the session on purpose: at once, since it can no longer vouch for what follows.
      this.options.logger.warn({ code: reason.error.fields.code }, 'proxy: session ended by a hook');
      this.fatal(reason.error.fields);
    } else if (reason.kind === 'hook-failed' && reason.error instanceof ProtocolViolation) {
      this.options.warnings?.warn({ reason: reason.error.message }, 'proxy: unreadable frontend message; closing the session');
      this.fatalAfterPendingReplies({ severity: 'FATAL', code: '08P01', message: reason.error.message });
    } else if (reason.kind === 'hook-failed') {
      const error = reason.error as Error;
      this.options.logger.error({ errorName: error.name, reason: error.message }, 'proxy: frontend hook failed');
      this.options.logger.debug({ err: reason.error }, 'proxy: frontend hook failed (stack)');
      this.fatalAfterPendingReplies({ severity: 'FATAL', code: 'XX000', message: 'pgveil could not process a message' });
    } else if (reason.kind === 'invalid-type') {
      this.options.warnings?.warn({ type: reason.type }, 'proxy: invalid frontend message type; closing the session');
      this.fatalAfterPendingReplies({ severity: 'FATAL', code: '08P01', message: `invalid frontend message type ${reason.type}` });
    } else {
      this.options.warnings?.warn({ type: reason.type, length: reason.length }, 'proxy: invalid frontend message length; closing the session');
      this.fatalAfterPendingReplies({ severity: 'FATAL', code: '08P01', message: `invalid message length ${reason.length} for message type ${reason.type}` });
    }
  }

  /**
   * PostgreSQL answers the messages before a bad one, then sends its FATAL: the client stops being
   * read, the replies still due are relayed, then the FATAL goes out (after 5 s at most).
   */
  private fatalAfterPendingReplies(fields: ErrorFields): void {
    const { upstream } = this.options;
    const check = (): void => {
      if (this.state.pendingReplies > 0 && !this.closed) return;
      upstream.off('data', check);
      clearTimeout(timer);
      this.fatal(fields);
    };
    const timer = setTimeout(() => {
      upstream.off('data', check);
      this.fatal(fields);
    }, 5_000);
    timer.unref();
    // Registered after the backend pump, so it runs once each chunk has been relayed.
    upstream.on('data', check);
    check();
  }

  private onBackendFailure(reason: PumpFailure): void {
    if (reason.kind === 'hook-failed' && reason.error instanceof SessionFatal) {
      // A hook ending the session on purpose, with PostgreSQL's kind of message.
      this.options.logger.warn({ code: reason.error.fields.code }, 'proxy: session ended by a hook');
      this.fatal(reason.error.fields);
      return;
    }
    if (reason.kind === 'hook-failed') this.options.logger.error({ err: reason.error }, 'proxy: backend hook failed');
    else this.options.logger.error({ reason: reason.kind }, 'proxy: invalid message from the database server');
    this.fatal({ severity: 'FATAL', code: reason.kind === 'hook-failed' ? 'XX000' : '08P01', message: 'pgveil could not relay a message from the database server' });
  }

  private fatal(fields: ErrorFields): void {
    if (this.closed) return;
    const { client, upstream } = this.options;
    if (this.busy()) this.options.cancelUpstream();
    upstream.destroy();
    this.finish();
    if (!client.destroyed) {
      client.end(errorResponse(fields));
      this.closeClientSoon();
    }
  }

  /**
   * Closes the client's socket 2 s after the session ended: a client that never closes its side, or
   * never reads what is left to send, must not keep its socket, its slot or the proxy's shutdown.
   */
  private closeClientSoon(): void {
    const { client } = this.options;
    setTimeout(() => client.destroy(), 2_000).unref();
  }

  private armIdleTimer(): void {
    const timeout = this.options.idleTimeoutMs;
    const tick = Math.max(100, Math.min(timeout / 4, 5_000));
    this.idleTimer = setInterval(() => {
      const activity = this.frontend.activity + this.backend.activity;
      const now = Date.now();
      if (activity !== this.lastActivity || this.busy()) {
        this.lastActivity = activity;
        this.idleSince = now;
      } else if (now - this.idleSince >= timeout) {
        this.fatal({ severity: 'FATAL', code: '57P05', message: 'terminating connection due to idle-session timeout' });
      }
    }, tick);
    this.idleTimer.unref();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.frontend.stop();
    this.backend.stop();
    const { client, upstream } = this.options;
    client.off('end', this.onClientGone);
    client.off('close', this.onClientGone);
    upstream.off('end', this.onUpstreamEnd);
    upstream.off('close', this.onUpstreamEnd);
    // Keep error listeners: a late socket error must not crash the process.
    try {
      this.hooks.onClose?.();
    } finally {
      this.options.onClosed();
    }
  }
}
