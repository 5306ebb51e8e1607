/**
 * Merges the engine calls that sessions make in the same turn of the event loop. Under load one
 * poll of the loop brings the Binds (or result rows) of several sessions, each with a value or
 * three per column; one engine call per (operation, kind, options) over all of them costs far
 * less than one per session, because FF1 runs each AES round across the whole batch and
 * node:crypto charges per call (a 9-digit fpe value: ~10 µs alone, ~2 µs in a batch of 8).
 *
 * The calls wait at most until the check phase of the current loop turn (setImmediate), so a lone
 * session loses no measurable latency. A merged call that fails is retried once per caller, so a
 * session's bad value refuses only its own statement, with its own error and indexes.
 */
import type { Discrepancy, Engine, ProtectionResponse, ProtectOptions } from '../../../engine/index.js';

type Operation = 'protect' | 'unprotect';

interface Caller {
  readonly data: readonly unknown[];
  resolve(response: ProtectionResponse): void;
  reject(error: unknown): void;
}

interface PendingCall {
  readonly operation: Operation;
  readonly kind: string;
  readonly options: ProtectOptions | undefined;
  readonly callers: Caller[];
}

/** An Engine whose calls with the same operation, kind and options object are merged per loop turn. */
export function coalesceEngineCalls(engine: Engine): Engine {
  // Keyed by the options object itself: policies hand the same object on every call.
  let pending = new Map<ProtectOptions | undefined, Map<string, PendingCall>>();
  let scheduled = false;

  const flush = (): void => {
    const calls = pending;
    pending = new Map();
    scheduled = false;
    for (const byKind of calls.values()) for (const call of byKind.values()) void run(engine, call);
  };

  const enqueue = (operation: Operation, kind: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> =>
    new Promise((resolve, reject) => {
      let byKind = pending.get(options);
      if (byKind === undefined) {
        byKind = new Map();
        pending.set(options, byKind);
      }
      const key = `${operation}\u0000${kind}`;
      let call = byKind.get(key);
      if (call === undefined) {
        call = { operation, kind, options, callers: [] };
        byKind.set(key, call);
      }
      call.callers.push({ data, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  return {
    protect: (kind, data, options) => enqueue('protect', kind, data, options),
    unprotect: (kind, data, options) => enqueue('unprotect', kind, data, options),
  };
}

async function run(engine: Engine, call: PendingCall): Promise<void> {
  const { operation, kind, options, callers } = call;
  if (callers.length > 1) {
    let merged: ProtectionResponse | undefined;
    try {
      merged = await engine[operation](kind, callers.flatMap((caller) => caller.data), options);
    } catch {
      // Someone's value was refused: each caller gets its own answer (and its own error indexes).
    }
    if (merged !== undefined) {
      let start = 0;
      for (const caller of callers) {
        const end = start + caller.data.length;
        caller.resolve(sliceResponse(merged, start, end));
        start = end;
      }
      return;
    }
  }
  for (const caller of callers) {
    try {
      caller.resolve(await engine[operation](kind, caller.data, options));
    } catch (error) {
      caller.reject(error);
    }
  }
}

/** The part of a merged response that answers the elements [start, end). */
function sliceResponse(merged: ProtectionResponse, start: number, end: number): ProtectionResponse {
  const { discrepancy, ...rest } = merged;
  const response: ProtectionResponse = { ...rest, result: merged.result.slice(start, end) };
  if (discrepancy !== undefined) {
    const part: Discrepancy = {};
    const within = (indexes: number[] | undefined): number[] | undefined => {
      const local = (indexes ?? []).filter((i) => i >= start && i < end).map((i) => i - start);
      return local.length > 0 ? local : undefined;
    };
    const invalidToken = within(discrepancy.invalid_token);
    const invalidScope = within(discrepancy.invalid_scope);
    if (invalidToken) part.invalid_token = invalidToken;
    if (invalidScope) part.invalid_scope = invalidScope;
    if (invalidToken || invalidScope) response.discrepancy = part;
  }
  return response;
}
