/**
 * Which prepared statement a Bind or an SQL EXECUTE runs, from the statements the server
 * confirmed (ConfirmedNames): pgveil protects a Bind's values only with the plan of the statement
 * the server will run, and refuses when it cannot be sure which one that is.
 */
import type { PreparedNameUse } from '../../sql/index.js';
import { EVERY_NAME, type PendingChange } from './confirmedNames.js';
import { PolicyRefusal, unsupportedRefusal } from '../policyRefusal.js';
import type { PolicySessionState } from '../policySessionState.js';
import type { SettleChanges, StatementInfo } from '../expectedReplies.js';
import type { ParamPlan, PreparedText, StatementContext } from './statementRewriter.js';
import { executedStatementRefusal } from './statementMeaning.js';
import type { ExecutePlans } from './executeArguments.js';
import { paramsSignature } from './parameterSplit.js';

const INVALID_STATEMENT_NAME = '26000';

function planSignature(statement: StatementInfo): string {
  const entries = [...statement.params].sort(([a], [b]) => a - b);
  const plans = entries.map(([n, plan]: [number, ParamPlan]) => `${n}:${plan.policy.key}:${plan.array}:${plan.columnType}:${statement.paramTypes[n - 1] ?? 0}`);
  const extras = [...(statement.extraParams ?? [])].map(([k, n]) => `${k}<${n}`);
  return `${plans.join(',')}|${extras.join(',')}`;
}

/**
 * The statement a Bind sent now will run. A name the server never confirmed to pgveil is refused
 * (the server would refuse it too — unless code inside the database prepared it, which pgveil
 * cannot see). A name that may hold statements with different parameter plans (a replacing Parse
 * still unanswered in an earlier batch) is refused rather than guessed. When the candidates agree
 * on the plan but not on the statement, the result has no description, so that rows are planned
 * from the server's own description of the portal.
 */
export function statementForBind(state: PolicySessionState, name: string): StatementInfo | PolicyRefusal {
  const sure = state.statements.certain(name, state.batch);
  if (sure !== undefined) return sure; // the usual case
  const candidates = state.statements.candidates(name, state.batch);
  const defined = candidates.length === 1 ? candidates : candidates.filter((candidate) => candidate !== undefined);
  const first = defined[0];
  if (first === undefined) {
    return new PolicyRefusal(INVALID_STATEMENT_NAME, `pgveil refused the Bind: prepared statement "${name}" is not one the server confirmed; Parse it before binding it`);
  }
  if (candidates.length === 1) return first;
  const signature = planSignature(first);
  if (defined.some((candidate) => candidate !== undefined && planSignature(candidate) !== signature)) {
    return unsupportedRefusal(`pgveil refused the Bind: prepared statement "${name}" may be either of two statements with different column policies until the server answers the Parse that replaced it; send Sync and wait for its answer before binding it`);
  }
  return { ...first, fields: undefined, describeRequested: false };
}

/**
 * A statement made by SQL PREPARE, with the parameter plans of what it prepares and the PREPARE's
 * own text (its EXECUTE is checked again like a Bind; without it, an EXECUTE under any other
 * context than the PREPARE's is refused).
 */
function sqlPrepared(params: ReadonlyMap<number, ParamPlan> | undefined, text: PreparedText | undefined, schemaKey: string | undefined): StatementInfo {
  const origin = text ?? (schemaKey === undefined ? undefined : { schemaKey });
  return { params: params ?? new Map(), paramTypes: [], copies: [], fields: undefined, describeRequested: false, ...origin };
}

/**
 * The pending changes of SQL PREPARE / DEALLOCATE / DISCARD ALL, to settle once the command is
 * answered. `prepared`: the plans of the statement a PREPARE defines.
 */
export function preparedNameChanges(
  state: PolicySessionState, use: PreparedNameUse | undefined, batch: number, prepared?: ReadonlyMap<number, ParamPlan>,
  text?: PreparedText, schemaKey?: string,
): SettleChanges | undefined {
  if (use === undefined || use.effects.length === 0) return undefined;
  const changes: PendingChange<StatementInfo>[] = use.effects.map((effect) => {
    if (effect.kind === 'prepare') return state.statements.change(effect.name, sqlPrepared(prepared, text, schemaKey), batch);
    if (effect.kind === 'deallocate') return state.statements.change(effect.name, undefined, batch);
    return state.statements.change(EVERY_NAME, undefined, batch);
  });
  return (outcome) => {
    for (const change of changes) state.statements.settle(change, outcome);
  };
}

/**
 * The plans SQL EXECUTE uses for its arguments (executeArguments.ts): those of the statement the
 * server will run. Refused when the name may hold statements with different plans (an unanswered
 * PREPARE or Parse), when pgveil never saw it prepared and it has arguments (prepared in another
 * session, deallocated, or by code pgveil cannot see), and when pgveil gave it extra parameters.
 * With `context` (the text's): refused when a statement the name may hold now means something else
 * (executedStatementRefusal), whether or not the EXECUTE has arguments.
 */
export function executePlanLookup(state: PolicySessionState, batch: number, context?: StatementContext): ExecutePlans {
  return (name, argumentCount, unsettled) => {
    const defined = state.statements.candidates(name, batch).filter((c): c is StatementInfo => c !== undefined);
    const first = defined[0];
    if (first === undefined) {
      if (argumentCount === 0) return new Map();
      throw new PolicyRefusal(INVALID_STATEMENT_NAME, `pgveil refused the statement: EXECUTE ${name} runs a prepared statement the server never confirmed to pgveil, so pgveil cannot tell whether its arguments feed protected columns`);
    }
    if (context !== undefined) {
      for (const candidate of defined) {
        const refusal = executedStatementRefusal(state, candidate, context, unsettled);
        if (refusal !== undefined) throw refusal;
      }
    }
    if (defined.some((candidate) => planSignature(candidate) !== planSignature(first))) {
      throw unsupportedRefusal(`pgveil refused the statement: EXECUTE ${name} may run either of two statements with different column policies until the server answers the PREPARE or Parse that replaced it; wait for its answer first`);
    }
    if ((first.extraParams?.size ?? 0) > 0) {
      throw unsupportedRefusal(`pgveil refused the statement: EXECUTE ${name} runs a statement that uses one parameter under different column policies; bind its values with the extended protocol`);
    }
    return first.params;
  };
}

/**
 * A Bind of a statement whose text runs SQL EXECUTE: its constants were protected with the plans
 * the executed names had at Parse; if a name was prepared again since, they may be wrong.
 */
export function executedPlansRefusal(state: PolicySessionState, statement: StatementInfo, context: StatementContext): PolicyRefusal | undefined {
  if (statement.executedPlans === undefined || statement.executedPlans.size === 0) return undefined;
  const lookup = executePlanLookup(state, state.batch, context);
  // Whether a statement before the EXECUTE in the text may change the context: as at Parse.
  const unsettled = statement.analysis === undefined || statement.analysis.statements.length > 1;
  for (const [name, signature] of statement.executedPlans ?? []) {
    let now: string;
    try {
      now = paramsSignature(lookup(name, 0, unsettled));
    } catch (error) {
      if (error instanceof PolicyRefusal) return error;
      throw error;
    }
    if (now !== signature) {
      return unsupportedRefusal(`pgveil refused the Bind: its statement runs EXECUTE ${name}, which was prepared again with other column policies since it was parsed; parse it again`);
    }
  }
  return undefined;
}
