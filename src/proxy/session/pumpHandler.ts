/**
 * What a message pump (messagePump.ts) asks of the one who runs it: a look at each message's
 * header, whole messages of the types it intercepts, bytes due after a message, and what to do
 * when the stream cannot be relayed.
 */
import type { MessageVerdict } from './sessionHooks.js';

/** `observe` results: forward the message, or drop it; either may ask for injected bytes after it. */
export const FORWARD = 0;
export const DROP_MESSAGE = 1;
export const INJECT_AFTER = 2;

export interface PumpHandler {
  /** Sees the header of each message that is not intercepted (type and first body byte, 0 if none). */
  observe(type: number, firstBodyByte: number): number;
  /**
   * For a type the pump intercepts on demand (2 in its table): whether to take this message whole.
   * chunk[start..end) is the whole message when it is all in this chunk (end -1: it is not), to be
   * read in place, not kept.
   */
  wantsWhole?(type: number, chunk: Buffer, start: number, end: number): boolean;
  /**
   * A whole intercepted message (for a type in `runs`: one or more whole messages of that type,
   * back to back); returns what to forward instead (undefined: the same bytes).
   */
  intercept(message: Buffer): MessageVerdict | Promise<MessageVerdict>;
  /** Bytes due right after the current message (replies the proxy queued in order). */
  takeAfter(): Buffer[];
  /** A malformed or oversized message, or a failing hook: the session answers and closes. */
  onFailure(reason: PumpFailure): void;
}

export type PumpFailure =
  | { kind: 'invalid-type'; type: number }
  | { kind: 'invalid-length'; type: number; length: number }
  | { kind: 'hook-failed'; error: unknown };
