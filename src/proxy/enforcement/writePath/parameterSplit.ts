/**
 * One `$n` used where its value must be stored or compared differently — a protected column and a
 * plain one (`VALUES ($1, $1)`), or protected columns with different policies — cannot carry one
 * Bind value for both. Each further use gets a parameter of its own, appended after the client's
 * (`$k`), and the Bind then carries the client's value once per use, each protected for its own
 * column. The client never sees the extra parameters (ParameterDescription is cut back to its
 * count). Where one `$n` token itself feeds both (`$1 IN (ssn, name)`), nothing can be split and
 * the statement is refused.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import type { ColumnRef, SqlAnalysis, TextReplacement } from '../../sql/index.js';
import { columnName } from '../../sql/relationLookup.js';
import { unsupportedRefusal } from '../policyRefusal.js';

/** How to protect the Bind value of one `$n`. */
export interface ParamPlan {
  readonly policy: ColumnPolicy;
  /** `col = ANY($n)`: each element is a value. */
  readonly array: boolean;
  /** The column's type: how a binary value of an untyped parameter is read. */
  readonly columnType: number;
}

export interface ParameterSplit {
  readonly params: ReadonlyMap<number, ParamPlan>;
  /** Appended parameter → the client's parameter whose value it carries (empty: nothing split). */
  readonly extraParams: ReadonlyMap<number, number>;
  /** How many parameters the client's statement has (its highest `$n`, or its declared types). */
  readonly clientParamCount: number;
  /** `$n` tokens to renumber: byte range [start, end) of the text → the new token. */
  readonly renumbered: readonly TextReplacement[];
}

interface PlannedTarget {
  readonly plan: ParamPlan;
  readonly column: ColumnRef;
}

export interface PlanSource {
  policyOf(column: ColumnRef): ColumnPolicy;
  typeOf(column: ColumnRef): number;
  /** Two policies store equal values for equal plaintexts. */
  same(a: ColumnPolicy, b: ColumnPolicy): boolean;
}

function samePlan(a: ParamPlan | undefined, b: ParamPlan | undefined, source: PlanSource): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.array === b.array && (a.policy === b.policy || source.same(a.policy, b.policy));
}

/** The end of the `$n` token at `start` (a `$` and its digits). */
function tokenEnd(text: Buffer, start: number): number {
  let end = start + 1;
  while (end < text.length && (text[end] as number) >= 0x30 && (text[end] as number) <= 0x39) end++;
  return end;
}

function listAt<K, V>(map: Map<K, V[]>, key: K): V[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}

export function splitParameters(sqlBytes: Buffer, analysis: SqlAnalysis, declaredCount: number, source: PlanSource): ParameterSplit {
  const targetsAt = new Map<number, PlannedTarget[]>();
  const unplaced = new Map<number, PlannedTarget[]>();
  const plainCompared = new Set<number>();
  const uses: { param: number; location: number }[] = [];
  for (const statement of analysis.statements) {
    for (const use of statement.paramUses ?? []) uses.push(use);
    for (const location of statement.plainComparedValues ?? []) plainCompared.add(location);
    const all = [...statement.params.map((t) => ({ t, array: false })), ...statement.arrayParams.map((t) => ({ t, array: true }))];
    for (const { t, array } of all) {
      const planned = { plan: { policy: source.policyOf(t.column), array, columnType: source.typeOf(t.column) }, column: t.column };
      if (t.locations.length === 0) listAt(unplaced, t.param).push(planned);
      for (const location of t.locations) listAt(targetsAt, location).push(planned);
    }
  }
  let clientParamCount = declaredCount;
  for (const use of uses) clientParamCount = Math.max(clientParamCount, use.param);
  // The plan of each `$n` token: undefined for a use that keeps the client's value.
  const byParam = new Map<number, { location: number; plan: ParamPlan | undefined }[]>();
  for (const use of uses) {
    const targets = targetsAt.get(use.location) ?? [];
    const first = targets[0];
    for (const other of targets.slice(1)) {
      if (!samePlan(first?.plan, other.plan, source)) {
        throw unsupportedRefusal(`pgveil refused the statement: parameter $${use.param} feeds protected columns ${columnName(first?.column ?? other.column)} and ${columnName(other.column)} with different policies at one place; pass the value twice, as two parameters`);
      }
    }
    if (first !== undefined && plainCompared.has(use.location)) {
      throw unsupportedRefusal(`pgveil refused the statement: parameter $${use.param} is compared with protected column ${columnName(first.column)} and with other values at one place; pass the value twice, as two parameters`);
    }
    listAt(byParam, use.param).push({ location: use.location, plan: first?.plan });
  }
  const params = new Map<number, ParamPlan>();
  const extraParams = new Map<number, number>();
  const renumbered: TextReplacement[] = [];
  let next = clientParamCount + 1;
  for (const [param, placed] of byParam) {
    const classes: (ParamPlan | undefined)[] = [];
    const classOf = (plan: ParamPlan | undefined): number => {
      const index = classes.findIndex((known) => samePlan(known, plan, source));
      if (index >= 0) return index;
      classes.push(plan);
      return classes.length - 1;
    };
    const numbers: number[] = [];
    for (const use of placed) {
      const index = classOf(use.plan);
      if (numbers[index] === undefined) {
        numbers[index] = index === 0 ? param : next++;
        if (index > 0) extraParams.set(numbers[index] as number, param);
        if (use.plan !== undefined) params.set(numbers[index] as number, use.plan);
      }
      if (index > 0) renumbered.push({ start: use.location, end: tokenEnd(sqlBytes, use.location), token: `$${numbers[index]}` });
    }
  }
  // Targets the analyser could not place in the text (no location): one plan for all uses, as before.
  for (const [param, targets] of unplaced) {
    for (const { plan, column } of targets) {
      const known = params.get(param);
      if ((byParam.get(param)?.length ?? 0) > 1 || (known !== undefined && !samePlan(known, plan, source))) {
        throw unsupportedRefusal(`pgveil refused the statement: parameter $${param} feeds protected column ${columnName(column)} and is used elsewhere; pass the value twice, as two parameters`);
      }
      params.set(param, plan);
    }
  }
  return { params, extraParams, clientParamCount, renumbered };
}


/** A digest of a statement's parameter plans: equal for statements whose values are protected alike. */
export function paramsSignature(params: ReadonlyMap<number, ParamPlan>): string {
  return [...params].sort(([a], [b]) => a - b).map(([n, plan]) => `${n}:${plan.policy.key}:${plan.array}:${plan.columnType}`).join(',');
}

/** The parameter types to send in Parse: the client's, and each extra parameter with its source's type. */
export function splitParamTypes(declared: readonly number[], extraParams: ReadonlyMap<number, number>): number[] {
  const types = [...declared];
  for (const [extra, param] of extraParams) {
    while (types.length < extra - 1) types.push(0);
    types[extra - 1] = declared[param - 1] ?? 0;
  }
  return types;
}
