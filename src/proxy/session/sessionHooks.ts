/**
 * The seam where column policies plug into a session. A session relays raw bytes; it hands a
 * message to a hook only for the message types the hook names, and only then buffers the whole
 * message. Everything else streams through as the bytes PostgreSQL or the client sent.
 */
import type { AuthenticatedAccount } from '../../auth/index.js';
import type { ErrorFields } from '../protocol/messages.js';
import type { ProtocolStateView, ReplyTracker } from './protocolState.js';

/**
 * What to do with an intercepted message:
 * - `undefined`: forward the same bytes, untouched;
 * - a Buffer: forward these bytes instead (zero or more whole messages; `DROP` forwards nothing).
 */
export type MessageVerdict = Buffer | undefined;

export const DROP: Buffer = Buffer.alloc(0);

export interface SessionContext {
  readonly account: AuthenticatedAccount;
  /** The database name the client asked for, and the upstream database it maps to. */
  readonly clientDatabase: string;
  readonly upstreamDatabase: string;
  /** The PostgreSQL role the session logged in upstream as (its account's mapped role, or the proxy's user). */
  readonly upstreamUser?: string;
  /** ParameterStatus values PostgreSQL reported at login (client_encoding, DateStyle…); later changes arrive as 'S' messages. */
  readonly serverParameters: ReadonlyMap<string, string>;
  /** The client's startup parameters passed on upstream (user and database excluded): search_path, options… */
  readonly startupParameters?: ReadonlyMap<string, string>;
  readonly state: ProtocolStateView;
  /**
   * The replies PostgreSQL still owes, with whatever the session's hooks attached to each: hooks
   * that keep data per reply attach it here rather than following the replies themselves.
   */
  readonly replies: ReplyTracker<unknown>;
  /**
   * Sends backend messages to the client after the replies to every frontend message forwarded
   * so far, as if PostgreSQL had answered at that point (e.g. an ErrorResponse for a refused Parse).
   */
  replyInOrder(messages: Buffer): void;
  /**
   * Drops frontend messages up to the next Sync, which is forwarded: what PostgreSQL does after an
   * extended-protocol error. Use it after refusing a message with `replyInOrder`. To keep the
   * transaction status right inside a transaction block, prefer forwarding a statement that fails
   * upstream over answering alone.
   */
  discardUntilSync(): void;
  /**
   * Ends the session at once with this FATAL, outside any message (a reload took away what the
   * session holds): nothing more is relayed either way.
   */
  end(fields: ErrorFields): void;
}

export interface SessionHooks {
  /** Frontend message types (one letter each, e.g. 'QPB') this hook wants to see whole. */
  readonly frontendTypes: string;
  /** Backend message types (e.g. 'TD') this hook wants to see whole. */
  readonly backendTypes: string;
  /**
   * Types the hook only needs to know arrived, by their type and first body byte (Sync,
   * ReadyForQuery and its status…): they stream through unbuffered, and the hook cannot change
   * them. Told in order with the other messages, synchronously; a throw ends the session.
   */
  readonly frontendHeaderTypes?: string;
  readonly backendHeaderTypes?: string;
  /**
   * DataRow, CopyData, NoticeResponse, RowDescription and CommandComplete ('D', 'd', 'N', 'T',
   * 'C'): seen whole only when `wantsBackendMessage` says so as each arrives (a row of a result the
   * hook rewrites, a notice behind rows it holds, a description it has not read before). It reads
   * the message in place, chunk[start..end), without keeping it, with `replies` already following
   * it; `end` is -1 when the message is not all in this chunk (the hook decides without reading
   * it). One it lets pass streams through as PostgreSQL sent it.
   */
  readonly backendOnDemandTypes?: string;
  wantsBackendMessage?(type: number, chunk: Buffer, start: number, end: number, context: SessionContext): boolean;
  /**
   * Frontend types seen whole only when `wantsFrontendMessage` says so. It reads the message in
   * place, chunk[start..end), without keeping it; a message not all in one chunk is taken whole
   * without asking. One it lets pass streams through as sent, with whatever payload the hook
   * attached to its reply (`replies.expect`) while answering.
   */
  readonly frontendOnDemandTypes?: string;
  wantsFrontendMessage?(type: number, chunk: Buffer, start: number, end: number, context: SessionContext): boolean;
  /**
   * DataRow ('D') only: the whole DataRows that follow one another in what arrived are handed to
   * onBackendMessage together, back to back in one buffer (after `wantsBackendMessage` said yes to
   * the first, when 'D' is on demand).
   */
  readonly backendRunTypes?: string;
  /** `message` is the whole frame, type byte and length included. */
  onFrontendMessage(message: Buffer, context: SessionContext): MessageVerdict | Promise<MessageVerdict>;
  /** As onFrontendMessage; for a type in `backendRunTypes`, one or more whole frames back to back. */
  onBackendMessage(message: Buffer, context: SessionContext): MessageVerdict | Promise<MessageVerdict>;
  /** A message of a header type; `firstBodyByte` is 0 for a message without a body. */
  onFrontendHeader?(type: number, firstBodyByte: number, context: SessionContext): void;
  onBackendHeader?(type: number, firstBodyByte: number, context: SessionContext): void;
  /** The session ended (either side closed). */
  onClose?(): void;
}

/** Creates the hooks of one session once its client is authenticated. */
export type SessionHooksFactory = (context: SessionContext) => SessionHooks;

/** The part-1 default: intercepts nothing, so every message goes on as the same bytes. */
export const passThroughHooks: SessionHooks = {
  frontendTypes: '',
  backendTypes: '',
  onFrontendMessage: () => undefined,
  onBackendMessage: () => undefined,
};
