import { ProtectionError, type Engine } from '../../engine/index.js';
import type { ColumnEngineOptions, ColumnPolicy } from '../../policy/index.js';
import { quoteIdentifier } from '../../policy/index.js';

/** Why a value was left as it is and reported (by its row's primary key, never by value). */
export type ProblemReason =
  | 'not_of_kind'        // plaintext that is not a value of the column's kind
  | 'domain_too_small'   // too short for fpe
  | 'other_scope'        // a token, but of another scope: protecting it again would nest tokens
  | 'not_a_token'        // rekey: no token of any key version held
  | 'not_decryptable';   // rekey: not an fpe value of the --from-version key

export interface ValueProblem {
  /** Index into the values given to `run`. */
  readonly index: number;
  readonly reason: ProblemReason;
}

/** What one column step decided for one batch of (non-NULL) values. */
export interface StepResult {
  /** Index → value to store. */
  readonly changes: ReadonlyMap<number, string>;
  /** Values found already protected (or already at the target key version). */
  readonly alreadyDone: number;
  readonly problems: readonly ValueProblem[];
}

/** The work a backfill does on one column, one batch at a time. */
export interface ColumnStep {
  readonly policy: ColumnPolicy;
  /**
   * The column's entry in the progress table's column_set: `email tokenise`, `ssn fpe from v1`.
   * Names are quoted as in the policy file, so the method is always the second word.
   */
  readonly entry: string;
  /**
   * True when the step recognises values it has already transformed (tokens, masks), so walking
   * rows again is harmless. fpe values carry no mark: only the progress table says they are done.
   */
  readonly recognisesOwnOutput: boolean;
  run(values: readonly string[]): Promise<StepResult>;
}

/** `email tokenise`: a column and the method it is stored with. */
export function stepEntry(policy: ColumnPolicy, suffix = ''): string {
  return `${quoteIdentifier(policy.column)} ${policy.method}${suffix}`;
}

/** The entry without a `from vN` suffix: which column, under which method, whatever the source version. */
export function entryColumnMethod(entry: string): string {
  return entry.replace(/ from v\d+$/, '');
}

const PROBLEM_OF_CODE: Readonly<Partial<Record<string, ProblemReason>>> = {
  invalid_value: 'not_of_kind',
  domain_too_small: 'domain_too_small',
};

export interface ProtectedValues {
  /** Index → protected value, for the values the engine accepted. */
  readonly outputs: Map<number, string>;
  readonly problems: ValueProblem[];
}

/**
 * engine.protect is all or nothing: it names the elements it refuses. Those are reported and the
 * call repeated without them, so one bad value does not hold back its whole batch.
 */
export async function protectEach(
  engine: Engine, policy: ColumnPolicy, values: readonly string[], indexes: readonly number[],
  options: ColumnEngineOptions = policy.engineOptions,
): Promise<ProtectedValues> {
  const outputs = new Map<number, string>();
  const problems: ValueProblem[] = [];
  let pending = [...indexes];
  while (pending.length > 0) {
    try {
      const { result } = await engine.protect(policy.kind, pending.map((i) => values[i] as string), options);
      pending.forEach((index, n) => outputs.set(index, result[n] as string));
      break;
    } catch (err) {
      if (!(err instanceof ProtectionError)) throw err;
      const reason = PROBLEM_OF_CODE[err.code];
      if (reason === undefined || !err.indexes?.length) throw err;
      const refused = new Set<number>(err.indexes);
      for (const n of refused) problems.push({ index: pending[n] as number, reason });
      pending = pending.filter((_, n) => !refused.has(n));
    }
  }
  return { outputs, problems };
}

/** How engine.unprotect sorted a batch: the values that came back, the ones it did not take. */
export interface UnprotectSorting {
  /** Index → unprotected value. */
  readonly plain: Map<number, string>;
  readonly invalidToken: number[];
  readonly invalidScope: number[];
}

export async function unprotectEach(
  engine: Engine, policy: ColumnPolicy, values: readonly string[], indexes: readonly number[],
): Promise<UnprotectSorting> {
  const sorting: UnprotectSorting = { plain: new Map(), invalidToken: [], invalidScope: [] };
  if (indexes.length === 0) return sorting;
  const response = await engine.unprotect(policy.kind, indexes.map((i) => values[i] as string), policy.engineOptions);
  const badToken = new Set(response.discrepancy?.invalid_token ?? []);
  const badScope = new Set(response.discrepancy?.invalid_scope ?? []);
  indexes.forEach((index, n) => {
    if (badToken.has(n)) sorting.invalidToken.push(index);
    else if (badScope.has(n)) sorting.invalidScope.push(index);
    else sorting.plain.set(index, response.result[n] as string);
  });
  return sorting;
}

/** 0, 1, ..., n-1. */
export function allIndexes(values: readonly unknown[]): number[] {
  return values.map((_, i) => i);
}
