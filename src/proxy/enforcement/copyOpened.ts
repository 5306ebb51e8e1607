/**
 * The server opened a COPY (CopyInResponse or CopyOutResponse): the stream the statement announced
 * for it is taken from its reply, and the session rewrites the client's rows into it (COPY FROM
 * STDIN: protected, or the COPY failed when pgveil cannot check them) or the server's rows out of it
 * (COPY TO STDOUT: revealed or masked), under the policies in force as it opens.
 */
import type { MessageVerdict } from '../session/sessionHooks.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';
import type { ExpectedReply } from './expectedReplies.js';
import type { PolicySessionState } from './policySessionState.js';
import type { CopyOutData } from './readPath/copyOutData.js';
import { BinaryCopyInRewriter } from './writePath/binaryCopyInRewriter.js';
import { CopyInRewriter } from './writePath/copyInRewriter.js';
import type { CopyStream } from './writePath/copyTargets.js';

export function copyOpened(state: PolicySessionState, copyOut: CopyOutData, direction: 'in' | 'out', head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
  let stream: CopyStream | undefined;
  if (head?.kind === 'query' || head?.kind === 'execute') {
    const at = head.copies.findIndex((copy) => copy.direction === direction);
    if (at >= 0) stream = head.copies.splice(0, at + 1)[at];
  }
  const start = (policies: ColumnPolicies | undefined): MessageVerdict => {
    if (stream?.direction === 'in' && stream.refusal !== undefined) {
      state.copyIn = { rewriter: undefined, failed: true, failSent: false, refusal: stream.refusal };
    } else if (stream?.direction === 'in') {
      const target = stream.target;
      const rewriter = target === undefined || policies === undefined
        ? undefined
        : target.options.format === 'binary'
          ? new BinaryCopyInRewriter(target, policies, state.services.engine, state.services.maxValueBytes)
          : new CopyInRewriter(target, policies, state.services.engine, state.settings.dateStyle);
      state.copyIn = { rewriter, failed: false, failSent: false };
    } else if (direction === 'in') {
      // A COPY pgveil did not see coming: its rows cannot be checked, so the COPY is failed.
      state.copyIn = { rewriter: undefined, failed: true, failSent: false };
    } else if (direction === 'out') {
      copyOut.start(stream?.direction === 'out' ? stream : undefined, policies);
    }
    state.backendEvent();
    return undefined;
  };
  if ((stream?.direction === 'in' && stream.target !== undefined) || (stream?.direction === 'out' && stream.planned !== undefined)) {
    const now = state.policiesNow();
    if (now !== undefined) return start(now);
    return state.policies().then(start);
  }
  return start(undefined);
}
