/**
 * The COPY TO STDOUT under way: its data rewritten in batches where this session sees a column
 * other than as stored, and checked against each policy reload. A COPY cannot change what it
 * does to a column mid-stream (a binary COPY's reader may be part way through a row), so a reload
 * that changes it ends the session before more leaves.
 */
import type { MessageVerdict } from '../../session/sessionHooks.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import type { PolicySessionState } from '../policySessionState.js';
import { endedByReload } from '../policyRefusal.js';
import { sameCopyOut, type CopyOutPlanned, type CopyOutStream } from '../writePath/copyTargets.js';
import { BinaryCopyOutRewriter } from './binaryCopyOutRewriter.js';
import { CopyOutRewriter } from './copyOutRewriter.js';
import type { HeldBatch, Rewrite } from './heldBatch.js';
import { plaintextColumns } from './resultPlan.js';

export class CopyOutData {
  private rewriter: CopyOutRewriter | BinaryCopyOutRewriter | undefined;
  /** The COPY's stream as planned, and the policies it was last found to hold under. */
  private check: { readonly stream: CopyOutStream; readonly planned: CopyOutPlanned; under: ColumnPolicies } | undefined;

  constructor(private readonly state: PolicySessionState, private readonly batch: HeldBatch) {}

  /**
   * CopyOutResponse of the COPY `planned` describes (undefined: one pgveil did not see coming),
   * `now` the policies in force. A COPY prepared before a reload starts under them: nothing of it
   * has left yet; one they refuse ends the session, since the server has begun it.
   */
  start(planned: CopyOutStream | undefined, now: ColumnPolicies | undefined): void {
    let stream = planned;
    if (planned?.planned !== undefined && now !== undefined && planned.planned.under !== now) {
      stream = planned.planned.planUnder(now);
      if (stream === undefined) throw endedByReload(`COPY ${planned.planned.table} TO STDOUT`, 'it waited to run', 'COPY');
    }
    this.check = stream?.planned === undefined ? undefined : { stream, planned: stream.planned, under: stream.planned.under };
    const services = this.state.services;
    this.rewriter = stream === undefined || stream.columns.length === 0
      ? undefined
      : stream.options?.format === 'binary'
        ? new BinaryCopyOutRewriter(stream, services.engine, services.metrics)
        : new CopyOutRewriter(stream, services.engine, services.metrics, this.state.settings.dateStyle);
  }

  end(): void {
    this.rewriter = undefined;
    this.check = undefined;
  }

  /** A COPY is under way whose data is rewritten, or checked against the policies (its batch is COPY data, not rows). */
  get running(): boolean {
    return this.check !== undefined || this.rewriter !== undefined;
  }

  /** Whether CopyData must be handed over whole: it is rewritten, or a reload since the last one must be checked. */
  wantsWhole(): boolean {
    return this.rewriter !== undefined || (this.check !== undefined && this.check.under !== this.state.policiesNow());
  }

  data(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const check = this.check;
    const now = check === undefined ? undefined : this.state.policiesNow();
    if (check !== undefined && check.under !== now) {
      // Like rows, COPY data follows the policies in force (a stale catalog is read first).
      if (now === undefined) return this.state.policies().then(() => this.data(frame));
      this.followPolicies(now);
    }
    const rewriter = this.rewriter;
    if (rewriter === undefined) return undefined;
    return this.batch.hold(frame, 1, rewriter, this.rewriteFor);
  }

  /** Throws (ending the session) when `now` changes what the COPY does to its columns. */
  followPolicies(now: ColumnPolicies): void {
    const check = this.check;
    if (check === undefined || check.under === now) return;
    if (!stillPlanned(check, now)) throw endedByReload(`COPY ${check.planned.table} TO STDOUT`, 'it ran', 'COPY');
    check.under = now;
  }

  /** The rewrite of a batch of COPY TO data (asked by the batch, once per batch). */
  private readonly rewriteFor = (planned: object): Rewrite => {
    const rewriter = planned as CopyOutRewriter | BinaryCopyOutRewriter;
    const revealed = plaintextColumns(rewriter.columns);
    const state = this.state;
    const check = this.check;
    return async (frames) => {
      const policySet = state.services.store.current;
      const rewritten = await rewriter.rewrite(frames);
      // A reload while the batch was rewritten: if it changes the COPY, the batch never leaves.
      if (check !== undefined && state.services.store.current !== policySet && !stillPlanned(check, await state.policies())) {
        throw endedByReload(`COPY ${check.planned.table} TO STDOUT`, 'it ran', 'COPY');
      }
      // Recorded before the batch can leave, counting rows rather than CopyData (a header line,
      // the binary header and trailer are none).
      if (revealed.length > 0 && rewritten.rows > 0) state.revealed(revealed, rewritten.rows);
      return Buffer.concat(rewritten.frames);
    };
  };
}

/** Whether `policies` plan the COPY under way as it was planned. */
function stillPlanned(check: { readonly stream: CopyOutStream; readonly planned: CopyOutPlanned }, policies: ColumnPolicies): boolean {
  const next = check.planned.planUnder(policies);
  return next !== undefined && sameCopyOut(next, check.stream);
}
