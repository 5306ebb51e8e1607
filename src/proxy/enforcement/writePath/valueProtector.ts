/**
 * Engine calls for the proxy, batched per column policy: the engine is much faster on one call
 * with many values than on many calls (FF1 rounds run across the batch). Writes are all or
 * nothing (a value not of its kind refuses the statement); reads never fail mid-stream.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import { maskOptions } from '../../../policy/index.js';
import { isLongerThan, ProtectionError, type Engine } from '../../../engine/index.js';
import { PolicyRefusal, columnLabel, valueRefusal } from '../policyRefusal.js';
import type { PolicyMetrics } from '../policyMetrics.js';

/** The write path's bound on a protected value, in UTF-8 bytes (proxy.maxProtectedValueBytes). */
export const DEFAULT_MAX_PROTECTED_VALUE_BYTES = 4096;

/** SQLSTATE program_limit_exceeded, as PostgreSQL answers a value past one of its own limits. */
const PROGRAM_LIMIT_EXCEEDED = '54000';

/**
 * The engine behind the proxy, refusing to protect a value longer than `maxBytes` before any
 * work is done on it (protection costs grow faster than the value): the error names the setting.
 */
export function boundValueLength(engine: Engine, maxBytes: number): Engine {
  return {
    protect(kind, data, options) {
      const method = options?.method ?? 'tokenise';
      if (method !== 'tokenise' && method !== 'fpe') return engine.protect(kind, data, options);
      let tooLong: number[] | undefined;
      for (let i = 0; i < data.length; i++) {
        const value = data[i];
        if (typeof value === 'string' && isLongerThan(value, maxBytes)) (tooLong ??= []).push(i);
      }
      if (tooLong !== undefined) return Promise.reject(valueTooLong(maxBytes, tooLong));
      return engine.protect(kind, data, options);
    },
    unprotect: (kind, data, options) => engine.unprotect(kind, data, options),
  };
}

/** The refusal of a value past the proxy's bound (`indexes`: which values of a batch). */
export function valueTooLong(maxBytes: number, indexes?: number[]): ProtectionError {
  return new ProtectionError('value_too_long', `a value is longer than ${maxBytes} bytes, the most pgveil protects (proxy.maxProtectedValueBytes raises it)`, indexes);
}

/** Collects values to protect, grouped by policy, each with where its result goes. */
export class ProtectionBatch {
  private readonly groups = new Map<ColumnPolicy, { values: string[]; sinks: ((value: string) => void)[] }>();

  get size(): number {
    let count = 0;
    for (const group of this.groups.values()) count += group.values.length;
    return count;
  }

  add(policy: ColumnPolicy, value: string, sink: (protectedValue: string) => void): void {
    let group = this.groups.get(policy);
    if (group === undefined) {
      group = { values: [], sinks: [] };
      this.groups.set(policy, group);
    }
    group.values.push(value);
    group.sinks.push(sink);
  }

  /**
   * Protects every value (one engine call per policy, all issued at once so that they can share
   * a loop turn with other sessions' calls); throws PolicyRefusal for a bad value.
   */
  async run(engine: Engine): Promise<void> {
    const groups = [...this.groups];
    const outcomes = await Promise.allSettled(groups.map(([policy, group]) => protectValues(engine, policy, group.values)));
    outcomes.forEach((outcome, g) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      const sinks = (groups[g] as (typeof groups)[number])[1].sinks;
      outcome.value.forEach((result, i) => (sinks[i] as (value: string) => void)(result));
    });
  }
}

export async function protectValues(engine: Engine, policy: ColumnPolicy, values: readonly string[]): Promise<string[]> {
  if (values.length === 0) return [];
  try {
    return (await engine.protect(policy.kind, values, policy.engineOptions)).result;
  } catch (error) {
    throw protectionRefusal(policy, error);
  }
}

/** What a failed protection of `policy`'s values refuses with: the engine's error as the client should read it. */
export function protectionRefusal(policy: ColumnPolicy, error: unknown): unknown {
  if (error instanceof ProtectionError && error.code === 'value_too_long') {
    return new PolicyRefusal(PROGRAM_LIMIT_EXCEEDED, `pgveil refused the statement: protected column ${columnLabel(policy)}: ${error.message}`);
  }
  if (error instanceof ProtectionError && (error.code === 'invalid_value' || error.code === 'domain_too_small' || error.code === 'not_a_string')) {
    return valueRefusal(policy, error.code === 'domain_too_small'
      ? `a value is too short to encrypt format-preserving as kind ${policy.kind}`
      : `a value is not of kind ${policy.kind}`);
  }
  return error;
}

/**
 * Unprotects stored values. A value that does not unprotect (a legacy plaintext row, a token of
 * another key or scope) comes back as null: the caller passes it as stored, and it is counted.
 */
export async function unprotectValues(
  engine: Engine, policy: ColumnPolicy, values: readonly string[], metrics: PolicyMetrics,
): Promise<(string | null)[]> {
  if (values.length === 0) return [];
  const response = await engine.unprotect(policy.kind, values, policy.engineOptions);
  const results: (string | null)[] = [...response.result];
  for (const index of [...(response.discrepancy?.invalid_token ?? []), ...(response.discrepancy?.invalid_scope ?? [])]) {
    results[index] = null;
    metrics.unprotectFailures++;
  }
  return results;
}

/**
 * Masks plaintext values. A value the kind cannot mask comes back as null, and the caller sends
 * NULL: the role may not see the plaintext, and there is no mask to show instead.
 */
export async function maskValues(
  engine: Engine, policy: ColumnPolicy, values: readonly string[], metrics: PolicyMetrics,
): Promise<(string | null)[]> {
  if (values.length === 0) return [];
  const options = maskOptions(policy);
  try {
    return (await engine.protect(policy.kind, values, options)).result;
  } catch (error) {
    if (!(error instanceof ProtectionError) || error.indexes === undefined) throw error;
    const bad = new Set(error.indexes);
    metrics.maskFailures += bad.size;
    const good = values.filter((_, i) => !bad.has(i));
    const masked = good.length === 0 ? [] : (await engine.protect(policy.kind, good, options)).result;
    let next = 0;
    return values.map((_, i) => (bad.has(i) ? null : (masked[next++] as string)));
  }
}
