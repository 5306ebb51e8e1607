/**
 * What a Bind of one prepared statement needs to know about it, derived once per statement rather
 * than on every Bind: its protected scalar parameters in the statement's order, whether any
 * parameter is an array, and the parameters pgveil appended, in order.
 */
import type { ParamPlan } from './statementRewriter.js';

export interface BoundStatement {
  readonly params: ReadonlyMap<number, ParamPlan>;
  readonly paramTypes: readonly number[];
  readonly extraParams?: ReadonlyMap<number, number>;
  readonly clientParamCount?: number;
}

export interface ScalarParam {
  /** The parameter's index in the Bind (its number less one). */
  readonly index: number;
  readonly plan: ParamPlan;
}

export interface BindPlan {
  /** Every protected parameter, when none is an array; undefined when one is. */
  readonly scalars: readonly ScalarParam[] | undefined;
  /** Appended parameter → the client's parameter whose value it carries, by appended number. */
  readonly extras: readonly (readonly [param: number, source: number])[];
}

// Keyed by the statement's parameter plans (never changed once parsed, and shared by the statements
// parsed from one text alike), with the appended parameters they were split with.
const plans = new WeakMap<ReadonlyMap<number, ParamPlan>, { readonly extraParams: ReadonlyMap<number, number> | undefined; readonly plan: BindPlan }>();

export function bindPlanOf(statement: BoundStatement): BindPlan {
  const known = plans.get(statement.params);
  if (known !== undefined && known.extraParams === statement.extraParams) return known.plan;
  const plan = derive(statement);
  plans.set(statement.params, { extraParams: statement.extraParams, plan });
  return plan;
}

function derive(statement: BoundStatement): BindPlan {
  const scalars: ScalarParam[] = [];
  let arrays = false;
  for (const [param, plan] of statement.params) {
    if (plan.array) arrays = true;
    else scalars.push({ index: param - 1, plan });
  }
  const extras = [...(statement.extraParams ?? [])].sort(([a], [b]) => a - b);
  return { scalars: arrays ? undefined : scalars, extras };
}
