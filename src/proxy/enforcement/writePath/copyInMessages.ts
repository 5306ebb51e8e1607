/**
 * The client's side of COPY FROM STDIN: its CopyData rewritten for the COPY the server opened, and
 * a Sync that arrives while a COPY may be opening or runs.
 */
import { DROP, type MessageVerdict } from '../../session/sessionHooks.js';
import { copyData } from '../../protocol/messageReaders.js';
import { copyDataMessage, copyFailMessage } from '../../protocol/messages.js';
import { PolicyRefusal, syncDuringCopyIn, unsupportedRefusal } from '../policyRefusal.js';
import type { PolicySessionState } from '../policySessionState.js';
import { mayOpenCopyIn } from '../expectedReplies.js';

export class CopyInMessages {
  constructor(private readonly state: PolicySessionState) {}

  /** Whether a Sync arriving now must wait for the server, or ends the session (see `sync`). */
  syncWaits(): boolean {
    const state = this.state;
    return state.copyIn !== undefined || state.replies.inCopyIn || state.replies.someOwed(mayOpenCopyIn);
  }

  /**
   * PostgreSQL ignores a Sync in COPY IN mode, and answers it once the COPY failed or if it never
   * started: pgveil must count every answer. Sent while a COPY FROM STDIN may start (libpq's and
   * tokio-postgres' Execute, Sync before CopyData), the Sync waits, and what follows it too, until
   * the server has either opened the COPY (flushed at once) — then PostgreSQL is never sent it, so
   * that no error before or during the COPY can make it count — or answered otherwise (then
   * `endBatch` follows it and it goes on). Sent while the COPY runs, it would be read before or
   * after a failure that depends on the rows: the session ends.
   */
  sync(upstreamSkipping: boolean, endBatch: () => void): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    // The server opened the COPY (its CopyInResponse may still wait for a catalog reading before
    // `copyIn` is set, BackendPolicy.copyStart): the Sync is one during the COPY.
    if (state.copyIn !== undefined || state.replies.inCopyIn) throw syncDuringCopyIn();
    if (!state.replies.someOwed(mayOpenCopyIn)) {
      endBatch();
      return undefined;
    }
    // After a refusal or an error the batch is already being skipped: no COPY statement pgveil
    // forwarded may then run, unless the skipping ends at this very Sync; not worth the doubt.
    if (state.discarding || upstreamSkipping) throw syncDuringCopyIn();
    return this.syncOnceCopyDecided(endBatch);
  }

  private async syncOnceCopyDecided(endBatch: () => void): Promise<MessageVerdict> {
    const state = this.state;
    // Opened is what the session's ProtocolState saw (`inCopyIn`), not only `copyIn`: the
    // CopyInResponse takes its COPY off the reply at once, and may wait for a catalog reading
    // before `copyIn` is set. Forwarded then, the Sync would get no entry of its own, and an answer
    // after an early failure of the COPY would be taken for a later message's.
    while (state.copyIn === undefined && !state.replies.inCopyIn && state.replies.someOwed(mayOpenCopyIn)) await state.nextBackendEvent();
    if (state.copyIn !== undefined || state.replies.inCopyIn) return DROP;
    endBatch();
    return undefined;
  }

  /**
   * CopyData, CopyDone or CopyFail goes to the COPY the server has opened. Data that arrives before
   * the server's CopyInResponse waits for it; data no COPY will take is dropped (PostgreSQL ignores
   * it too).
   */
  async message(type: string, frame: Buffer): Promise<MessageVerdict> {
    const state = this.state;
    while (state.copyIn === undefined) {
      // Opened, its CopyInResponse waiting for a catalog reading (`inCopyIn`): the data waits too.
      if (state.discarding || (!state.replies.inCopyIn && !state.replies.someOwed(mayOpenCopyIn))) return DROP;
      await state.nextBackendEvent();
    }
    const copyIn = state.copyIn;
    if (type !== 'd') state.copyIn = undefined;
    if (copyIn.failed) {
      if (copyIn.failSent) return DROP;
      copyIn.failSent = true;
      return this.failCopy(copyIn.refusal ?? unsupportedRefusal('pgveil refused the COPY: pgveil did not expect it and cannot check its rows'));
    }
    const rewriter = copyIn.rewriter;
    if (rewriter === undefined) return undefined;
    try {
      if (type === 'd') {
        const rewritten = await rewriter.data(copyData(frame));
        return rewritten.length === 0 ? DROP : copyDataMessage(rewritten);
      }
      if (type === 'c') {
        const rest = await rewriter.end();
        return rest.length === 0 ? frame : Buffer.concat([copyDataMessage(rest), frame]);
      }
      return undefined;
    } catch (error) {
      if (!(error instanceof PolicyRefusal)) throw error;
      copyIn.failed = true;
      copyIn.failSent = true;
      return this.failCopy(error);
    }
  }

  /** Fails the COPY upstream; the server's error is replaced by pgveil's. */
  private failCopy(refusal: PolicyRefusal): MessageVerdict {
    this.state.refused(refusal);
    const head = this.state.replies.head;
    if (head !== undefined) head.refusal = refusal.toErrorResponse();
    return copyFailMessage('pgveil refused the COPY data');
  }
}
