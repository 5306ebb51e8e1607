/**
 * SQL `EXECUTE name(args)`: each argument is the value of one parameter of the prepared statement.
 * Constants for parameters that feed protected columns are protected with that parameter's plan
 * and spliced in at their byte offsets, as constants in INSERT … VALUES are; any other argument
 * for such a parameter (an expression, a column, a parameter of the text) is refused.
 */
import type { ExecuteArgument, SqlAnalysis } from '../../sql/index.js';
import { quoteLiteral } from '../../sql/index.js';
import { formatTextArray, parseTextArray } from '../valueCodecs/arrayCodecs.js';
import type { DateStyle } from '../valueCodecs/dateStyle.js';
import { columnLabel, unsupportedRefusal, valueRefusal } from '../policyRefusal.js';
import { normaliseText } from './normaliseText.js';
import { paramsSignature, type ParamPlan } from './parameterSplit.js';
import type { ProtectionBatch } from './valueProtector.js';

/**
 * The parameter plans of the prepared statement `name` as the session holds it; throws PolicyRefusal
 * when unsure, or when its names may now denote other tables. `unsettled`: an earlier statement of
 * the same text may have changed the search_path, role or catalog.
 */
export type ExecutePlans = (name: string, argumentCount: number, unsettled: boolean) => ReadonlyMap<number, ParamPlan>;

const NO_PLANS: ReadonlyMap<number, ParamPlan> = new Map();

interface Replacement {
  start: number;
  end: number;
  token: string;
}

/**
 * Adds the protection of every EXECUTE argument of the text to `batch` (their replacements land in
 * `replacements`). `preparedPlans`: per statement, the plans of what its PREPARE defines, so that a
 * later EXECUTE of the same text uses them. Returns the names looked up in the session → their
 * plans' signature, for the check at Bind (the name may be prepared again before then).
 */
export function protectExecuteArguments(
  analysis: SqlAnalysis, preparedPlans: readonly (ReadonlyMap<number, ParamPlan> | undefined)[], executePlans: ExecutePlans,
  batch: ProtectionBatch, replacements: Replacement[], style: DateStyle, unsettled: readonly boolean[] = [],
): Map<string, string> {
  const definedHere = new Map<string, ReadonlyMap<number, ParamPlan>>();
  let allRemoved = false;
  const looked = new Map<string, string>();
  analysis.statements.forEach((statement, index) => {
    const use = statement.preparedNames;
    if (use === undefined) return;
    for (const execute of use.executes) {
      let plans = definedHere.get(execute.name);
      if (plans === undefined) {
        // Removed earlier in this text: the server fails the EXECUTE itself.
        plans = allRemoved ? NO_PLANS : executePlans(execute.name, execute.argumentCount, unsettled[index] === true);
        if (!allRemoved) looked.set(execute.name, paramsSignature(plans));
      }
      for (const [param, plan] of plans) protectArgument(execute.name, param, execute.arguments[param - 1], plan, batch, replacements, style);
    }
    for (const effect of use.effects) {
      if (effect.kind === 'prepare') definedHere.set(effect.name, preparedPlans[index] ?? NO_PLANS);
      else if (effect.kind === 'deallocate') definedHere.set(effect.name, NO_PLANS);
      else {
        definedHere.clear();
        allRemoved = true;
      }
    }
  });
  return looked;
}

function protectArgument(
  name: string, param: number, argument: ExecuteArgument | undefined, plan: ParamPlan, batch: ProtectionBatch, replacements: Replacement[], style: DateStyle,
): void {
  if (argument === undefined || argument.kind === 'null') return; // a missing argument: the server refuses the EXECUTE
  if (argument.kind === 'other') {
    throw unsupportedRefusal(`pgveil refused the statement: EXECUTE ${name}: argument ${param} feeds protected column ${columnLabel(plan.policy)} and is not a constant pgveil can protect; pass a constant, or bind the value with the extended protocol`);
  }
  const { start, end } = argument;
  if (!plan.array) {
    batch.add(plan.policy, normaliseText(plan.columnType, argument.value, style), (value) => replacements.push({ start, end, token: quoteLiteral(value) }));
    return;
  }
  const elements = parseTextArray(argument.value);
  if (elements === undefined) throw valueRefusal(plan.policy, `EXECUTE ${name}: argument ${param} is not a one-dimensional array`);
  const out = [...elements];
  let pending = elements.filter((element) => element !== null).length;
  if (pending === 0) return;
  elements.forEach((element, i) => {
    if (element === null) return;
    batch.add(plan.policy, normaliseText(plan.columnType, element, style), (value) => {
      out[i] = value;
      if (--pending === 0) replacements.push({ start, end, token: quoteLiteral(formatTextArray(out)) });
    });
  });
}
