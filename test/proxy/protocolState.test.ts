/** The replies-owed queue over many round trips and long pipelines: payloads come back in order. */
import { describe, expect, it } from 'vitest';
import { ProtocolState } from '../../src/proxy/session/protocolState.js';

const B = 0x42;
const E = 0x45;
const S = 0x53;

describe('ProtocolState queue', () => {
  it('pairs each reply with its message across round trips and pipelines of every length', () => {
    const state = new ProtocolState<number>();
    let next = 0;
    for (const depth of [1, 3, 1500, 1, 2, 5000, 1, 700]) {
      const sent: number[] = [];
      for (let i = 0; i < depth; i++) {
        state.expect(B, next);
        expect(state.frontendMessage(B)).toBe(true);
        expect(state.frontendMessage(E)).toBe(true);
        state.expect(S, -next);
        expect(state.frontendMessage(S)).toBe(true);
        sent.push(next++);
      }
      expect(state.pendingReplies).toBe(depth * 3);
      for (const id of sent) {
        state.backendMessage(0x32, 0); // BindComplete
        expect(state.answered).toBe(id);
        state.backendMessage(0x43, 0); // CommandComplete
        state.backendMessage(0x5a, 0x49); // ReadyForQuery
        expect(state.answered).toBe(-id);
      }
      expect(state.pendingReplies).toBe(0);
      expect(state.head).toBeUndefined();
    }
  });

  it('empties the staging slots as each staged payload goes with its message, without a Sync', () => {
    const state = new ProtocolState<number>();
    for (let i = 0; i < 1000; i++) {
      state.expect(E, i);
      expect(state.frontendMessage(E)).toBe(true);
      expect(state.stagedSlots).toBe(0);
    }
    state.expect(B, 1);
    state.expect(E, 2);
    expect(state.frontendMessage(B)).toBe(true);
    expect(state.stagedSlots).toBe(2); // the Execute's payload still waits for it
    expect(state.frontendMessage(E)).toBe(true);
    expect(state.stagedSlots).toBe(0);
    for (let i = 0; i < 1000; i++) state.backendMessage(0x43, 0);
    state.backendMessage(0x32, 0);
    expect(state.answered).toBe(1);
    state.backendMessage(0x43, 0);
    expect(state.answered).toBe(2);
  });

  it('keeps the order when a long pipeline is answered while more is sent', () => {
    const state = new ProtocolState<number>();
    let sent = 0;
    let answered = 0;
    for (let round = 0; round < 4000; round++) {
      for (let i = 0; i < 3; i++) {
        state.expect(S, sent++);
        state.frontendMessage(S);
      }
      for (let i = 0; i < 2; i++) {
        state.backendMessage(0x5a, 0x49);
        expect(state.answered).toBe(answered++);
      }
    }
    expect(state.pendingReplies).toBe(sent - answered);
    while (answered < sent) {
      state.backendMessage(0x5a, 0x49);
      expect(state.answered).toBe(answered++);
    }
    expect(state.pendingReplies).toBe(0);
  });
});

describe('ProtocolState in COPY IN', () => {
  const P = 0x50;
  it('ignores a Sync during COPY IN, but counts one after a message that fails the COPY', () => {
    const state = new ProtocolState<number>();
    state.frontendMessage(0x51); // Query: COPY … FROM STDIN
    state.backendMessage(0x47, 0); // CopyInResponse
    state.frontendMessage(0x64); // CopyData
    state.frontendMessage(S); // ignored by PostgreSQL in COPY IN
    expect(state.pendingReplies).toBe(1);
    state.frontendMessage(P); // PostgreSQL fails the COPY: "unexpected message type"
    state.expect(S, 7);
    state.frontendMessage(S); // answered, after the Query's ReadyForQuery
    expect(state.pendingReplies).toBe(3);
    state.backendMessage(0x45, 0); // the COPY's error
    state.backendMessage(0x5a, 0x49); // the Query's ReadyForQuery
    state.backendMessage(0x5a, 0x49); // the Sync's
    expect(state.answered).toBe(7);
    expect(state.pendingReplies).toBe(0);
  });
});

describe('ProtocolState inCopyIn', () => {
  it('is true from the CopyInResponse until the frontend leaves the COPY or the server fails it', () => {
    const state = new ProtocolState<number>();
    state.frontendMessage(E); // Execute: COPY … FROM STDIN
    expect(state.inCopyIn).toBe(false);
    state.backendMessage(0x47, 0); // CopyInResponse: seen before any hook reads it
    expect(state.inCopyIn).toBe(true);
    state.frontendMessage(0x64); // CopyData
    state.frontendMessage(0x48); // Flush
    expect(state.inCopyIn).toBe(true);
    state.frontendMessage(0x63); // CopyDone
    expect(state.inCopyIn).toBe(false);
    state.backendMessage(0x47, 0);
    state.backendMessage(0x45, 0); // the server fails the COPY
    expect(state.inCopyIn).toBe(false);
  });
});
