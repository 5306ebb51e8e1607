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
  // Keyed by the options object itself (policies hand the same object on every call), then a
  // short list of the operations and kinds called with it: no key string is built per call.
  let pending = new Map<ProtectOptions | undefined, PendingCall[]>();
  let scheduled = false;

  const flush = (): void => {
    const calls = pending;
    pending = new Map();
    scheduled = false;
    for (const sameOptions of calls.values()) for (const call of sameOptions) run(engine, call);
  };

  const enqueue = (operation: Operation, kind: string, data: readonly unknown[], options?: ProtectOptions): Promise<ProtectionResponse> =>
    new Promise((resolve, reject) => {
      let sameOptions = pending.get(options);
      if (sameOptions === undefined) {
        sameOptions = [];
        pending.set(options, sameOptions);
      }
      let call: PendingCall | undefined;
      for (const known of sameOptions) if (known.operation === operation && known.kind === kind) call = known;
      if (call === undefined) {
        call = { operation, kind, options, callers: [] };
        sameOptions.push(call);
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

function run(engine: Engine, call: PendingCall): void {
  const callers = call.callers;
  if (callers.length === 1) {
    callOnce(engine, call, callers[0] as Caller);
    return;
  }
  const data: unknown[] = [];
  for (const caller of callers) for (const value of caller.data) data.push(value);
  callOnce(engine, call, new MergedCallers(engine, call, data));
}

/** The callers of one merged call, answered each with its part of the merged response. */
class MergedCallers implements Caller {
  constructor(private readonly engine: Engine, private readonly call: PendingCall, readonly data: readonly unknown[]) {}

  resolve(merged: ProtectionResponse): void {
    let start = 0;
    for (const caller of this.call.callers) {
      const end = start + caller.data.length;
      caller.resolve(sliceResponse(merged, start, end));
      start = end;
    }
  }

  reject(): void {
    // Someone's value was refused: each caller gets its own answer (and its own error indexes).
    const { operation, kind, options, callers } = this.call;
    void alone(this.engine, operation, kind, options, callers);
  }
}

/** One engine call for `caller`; an engine that throws rather than rejecting rejects it alike. */
function callOnce(engine: Engine, call: PendingCall, caller: Caller): void {
  let answer: Promise<ProtectionResponse>;
  try {
    answer = engine[call.operation](call.kind, caller.data, call.options);
  } catch (error) {
    caller.reject(error);
    return;
  }
  answer.then((response) => caller.resolve(response), (error: unknown) => caller.reject(error));
}

async function alone(engine: Engine, operation: Operation, kind: string, options: ProtectOptions | undefined, callers: readonly Caller[]): Promise<void> {
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
  const response: ProtectionResponse = { ...merged, result: merged.result.slice(start, end) };
  const discrepancy = merged.discrepancy;
  if (discrepancy === undefined) return response;
  delete response.discrepancy;
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
  return response;
}
