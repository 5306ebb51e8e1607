/**
 * The write path for SQL text (a Query message or a Parse message): analyse it, refuse what cannot
 * be mapped, protect the constants that feed protected columns and splice the tokens in at the
 * parser's byte offsets, and tell the caller which `$n` feeds which column policy (for Bind) and
 * which COPY streams the text opens.
 */
import { createHash } from 'node:crypto';
import type { ColumnPolicy } from '../../../policy/index.js';
import type { Engine } from '../../../engine/index.js';
import {
  quoteLiteral, spliceText, type ColumnRef, type LiteralTarget, type SqlAnalysis, type SqlAnalysisCache, type TextReplacement,
} from '../../sql/index.js';
import { splitParameters, type ParamPlan } from './parameterSplit.js';
import { protectExecuteArguments, type ExecutePlans } from './executeArguments.js';
import { columnName } from '../../sql/relationLookup.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { copyStreamOf, type CopyStream } from './copyTargets.js';
import { maskedColumnRefusal } from './maskedColumnGuard.js';
import { PolicyRefusal, unsupportedRefusal, valueRefusal } from '../policyRefusal.js';
import { formatTextArray, parseTextArray } from '../valueCodecs/arrayCodecs.js';
import type { ReadActions } from '../readPath/resultPlan.js';
import type { SessionRelations } from '../catalog/sessionRelations.js';
import { ProtectionBatch } from './valueProtector.js';
import { normaliseText } from './normaliseText.js';
import type { DateStyle } from '../valueCodecs/dateStyle.js';

export type { ParamPlan } from './parameterSplit.js';

export interface RewrittenStatement {
  /** The text to forward (the same string when nothing changed). */
  readonly sql: string;
  readonly params: ReadonlyMap<number, ParamPlan>;
  /** Parameters pgveil appended (→ the client's parameter they carry; see parameterSplit.ts). */
  readonly extraParams: ReadonlyMap<number, number>;
  readonly clientParamCount: number;
  /** Per statement: the parameter plans of the statement a SQL PREPARE defines (undefined for others). */
  readonly preparedPlans: readonly (ReadonlyMap<number, ParamPlan> | undefined)[];
  /** Per statement: a SQL PREPARE's own text and analysis, so that its EXECUTE can be checked again (undefined for others). */
  readonly preparedTexts: readonly (PreparedText | undefined)[];
  /** Prepared statements its EXECUTEs run, as known now → their plans' signature (checked again at Bind). */
  readonly executedPlans: ReadonlyMap<string, string>;
  /** The COPY data streams, in statement order. */
  readonly copies: readonly CopyStream[];
  /** Statement kinds that change the catalog (the caller refreshes it afterwards). */
  readonly changesCatalog: boolean;
  /** The analysis it was rewritten from (its statements' session effects, its plan). */
  readonly analysis: SqlAnalysis;
  /** What unqualified names resolved to (SessionRelations.resolutionKey). */
  readonly resolutionKey: string;
  /** Everything the analysis depended on (StatementContext.schemaKey): a Bind under another one analyses the text again. */
  readonly schemaKey: string;
  /** The policies and catalog names were resolved in. */
  readonly policies: ColumnPolicies;
}

/**
 * A digest of everything an analysis found (targets, columns, refusals): two analyses of one
 * text with equal digests need the same rewriting. A digest, so no literal value is kept.
 */
export function planSignature(analysis: SqlAnalysis): string {
  const found = analysis.statements.map(({ start: _start, end: _end, sessionEffects: _effects, ...rest }) => rest);
  return createHash('sha256').update(JSON.stringify(found)).digest('base64');
}

const READ_WRITE_KINDS = new Set([
  'SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CopyStmt', 'TransactionStmt',
  'VariableSetStmt', 'VariableShowStmt', 'ExplainStmt', 'ExecuteStmt', 'PrepareStmt', 'DeallocateStmt',
  'DeclareCursorStmt', 'FetchStmt', 'ClosePortalStmt', 'ListenStmt', 'NotifyStmt', 'UnlistenStmt',
  'LockStmt', 'DiscardStmt', 'Empty', 'Unparsed', 'CallStmt', 'CheckPointStmt', 'VacuumStmt',
]);
// DO is not among them: its body may run any DDL (migrations do conditional DDL that way).

/** True when a statement of the analysis may change the catalog (DDL and the like). */
export function changesCatalog(analysis: SqlAnalysis): boolean {
  for (const statement of analysis.statements) if (!READ_WRITE_KINDS.has(statement.type)) return true;
  return false;
}

/** Two policies give equal stored values for equal plaintexts (so tokens compare as values do). */
export function sameProtection(a: ColumnPolicy, b: ColumnPolicy): boolean {
  const deterministic = (policy: ColumnPolicy): boolean => policy.method !== 'tokenise' || policy.noise === 0;
  return a.kind === b.kind && a.method === b.method && a.scope === b.scope && a.lang === b.lang
    && a.noise === b.noise && deterministic(a) && deterministic(b);
}

function policyFor(policies: ColumnPolicies, column: ColumnRef): ColumnPolicy {
  const policy = policies.policyOfColumn(column);
  if (policy === undefined) throw unsupportedRefusal(`pgveil refused the statement: no policy found for protected column ${columnName(column)}`);
  return policy;
}

/** An array constant (`unnest('{a,b}'::text[])`): each element protected, the array spliced back whole. */
function protectArrayConstant(
  literal: LiteralTarget, policy: ColumnPolicy, type: number, style: DateStyle, batch: ProtectionBatch, replacements: TextReplacement[],
): void {
  const elements = parseTextArray(literal.value);
  if (elements === undefined) throw valueRefusal(policy, 'an array constant feeding it is not a one-dimensional array');
  const out = [...elements];
  const replacement = { start: literal.start, end: literal.end };
  let pending = elements.filter((element) => element !== null).length;
  elements.forEach((element, index) => {
    if (element === null) return;
    batch.add(policy, normaliseText(type, element, style), (protectedText) => {
      out[index] = protectedText;
      if (--pending === 0) replacements.push({ ...replacement, token: quoteLiteral(formatTextArray(out)) });
    });
  });
}

function columnType(policies: ColumnPolicies, column: ColumnRef): number {
  const relation = policies.relationOf(column);
  return relation?.columns.find((candidate) => candidate.name === column.column)?.typeOid ?? 0;
}

/**
 * The text of a SQL PREPARE statement, its analysis and the context key it was analysed under: an
 * EXECUTE of it under another key analyses it again (preparedStatementPath.ts). An empty key: the
 * text changed the search_path, role or catalog before it, so the analysis may not be the one it ran under.
 */
export interface PreparedText {
  readonly sql: string;
  readonly analysis: SqlAnalysis;
  readonly schemaKey: string;
}

/**
 * Per statement of the analysis: an earlier statement of the same text may have changed what names
 * denote (search_path, role, catalog), so an EXECUTE there runs under another context than the text's.
 */
export function unsettledStatements(analysis: SqlAnalysis): boolean[] {
  let changed = false;
  return analysis.statements.map((statement) => {
    const before = changed;
    const effects = (statement.sessionEffects ?? []).filter((effect) => !(effect.kind === 'transaction' && effect.action === 'begin'));
    if (effects.length > 0 || !READ_WRITE_KINDS.has(statement.type)) changed = true;
    return before;
  });
}

export interface StatementContext {
  readonly policies: ColumnPolicies;
  /** The session's view of the schema: unqualified names resolved on its search_path. */
  readonly schema: SessionRelations;
  readonly cache: SqlAnalysisCache;
  readonly schemaKey: string;
  readonly engine: Engine;
  readonly actions: ReadActions;
  readonly dateStyle: DateStyle;
}

function refuseExecute(name: string): never {
  throw unsupportedRefusal(`pgveil refused the statement: EXECUTE ${name} cannot be checked here; bind the values with the extended protocol`);
}

/** Analyses `sql` through the cache (keyed by the session's schema answers). */
export function analyse(sql: string, context: StatementContext): SqlAnalysis {
  return context.cache.analyse(sql, context.schema, context.schemaKey);
}

/**
 * The text to forward, with its parameter plans; a promise only when constants wait for the
 * engine. Throws PolicyRefusal (or rejects with it, after the engine) when the text must not be
 * forwarded. `declaredParamCount`: the parameter types a Parse declared; `executePlans`: the
 * parameter plans of the session's prepared statements, for the arguments of SQL EXECUTE
 * (without it, an EXECUTE of a statement with arguments is refused).
 */
export function rewriteStatement(
  sql: string, analysis: SqlAnalysis, context: StatementContext, declaredParamCount = 0, executePlans: ExecutePlans = refuseExecute,
): RewrittenStatement | Promise<RewrittenStatement> {
  const kept = rewrites.get(analysis);
  const known = kept?.get(context);
  // The text too: texts of one literal shape may share an analysis (sqlAnalysisCache.ts).
  if (known !== undefined && known.declaredParamCount === declaredParamCount && known.sql === sql) return known.rewritten;
  const rewritten = rewriteAfresh(sql, analysis, context, declaredParamCount, executePlans);
  if (!(rewritten instanceof Promise) && reusable(rewritten)) {
    if (kept === undefined) rewrites.set(analysis, new WeakMap([[context, { sql, declaredParamCount, rewritten }]]));
    else kept.set(context, { sql, declaredParamCount, rewritten });
  }
  return rewritten;
}

/**
 * A rewrite that is the same for every run of its text under the same context: no constant
 * protected, no SQL EXECUTE (whose plans are the session's), no COPY (whose stream is the run's own),
 * no DDL (which the caller follows per run).
 */
function reusable(rewritten: RewrittenStatement): boolean {
  return rewritten.executedPlans.size === 0 && rewritten.copies.length === 0 && !rewritten.changesCatalog
    && rewritten.analysis.statements.every((statement) => statement.literals.length === 0 && statement.type !== 'ExecuteStmt');
}

/**
 * Rewrites kept with their analysis (the analysis cache hands one to every session with the same
 * schema answers), one per session context: a Parse of the same text again is answered from here,
 * and a context no session uses any more is let go with its entries.
 */
interface KeptRewrite {
  readonly sql: string;
  readonly declaredParamCount: number;
  readonly rewritten: RewrittenStatement;
}
const rewrites = new WeakMap<SqlAnalysis, WeakMap<StatementContext, KeptRewrite>>();

function rewriteAfresh(
  sql: string, analysis: SqlAnalysis, context: StatementContext, declaredParamCount: number, executePlans: ExecutePlans,
): RewrittenStatement | Promise<RewrittenStatement> {
  const { policies } = context;
  if (analysis.rejection !== undefined) throw new PolicyRefusal(analysis.rejection.sqlState, analysis.rejection.message);
  const masked = maskedColumnRefusal(analysis, policies, context.actions);
  if (masked !== undefined) throw masked;
  const copies: CopyStream[] = [];
  let changesCatalog = false;
  const textBytes = Buffer.from(sql, 'utf8');
  const planSource = {
    policyOf: (column: ColumnRef) => policyFor(policies, column), typeOf: (column: ColumnRef) => columnType(policies, column), same: sameProtection,
  };
  // `$n` inside PREPARE … AS are the prepared statement's parameters, not this text's.
  const split = splitParameters(textBytes, { ...analysis, statements: analysis.statements.filter((s) => s.type !== 'PrepareStmt') }, declaredParamCount, planSource);
  const preparedPlans = analysis.statements.map((statement) => {
    if (statement.type !== 'PrepareStmt') return undefined;
    const prepared = splitParameters(textBytes, { ...analysis, statements: [statement] }, 0, planSource);
    const [extra, source] = [...prepared.extraParams][0] ?? [];
    if (extra !== undefined) {
      throw unsupportedRefusal(`pgveil refused the statement: PREPARE parameter $${source} is used under different column policies (a protected column and another); pass the value twice, as two parameters`);
    }
    return prepared.params;
  });
  const unsettled = unsettledStatements(analysis);
  const preparedTexts = analysis.statements.map((statement, index): PreparedText | undefined => {
    if (statement.type !== 'PrepareStmt') return undefined;
    const text = textBytes.subarray(statement.start, statement.end).toString('utf8');
    return { sql: text, analysis: analyse(text, context), schemaKey: unsettled[index] === true ? '' : context.schemaKey };
  });
  let schemaAt = context.schema; // the search_path in force at each statement of the text
  for (const statement of analysis.statements) {
    if (!READ_WRITE_KINDS.has(statement.type)) changesCatalog = true;
    for (const comparison of statement.comparedColumns) {
      const left = policyFor(policies, comparison.left);
      const right = policyFor(policies, comparison.right);
      if (left !== right && !sameProtection(left, right)) {
        throw unsupportedRefusal(`pgveil refused the statement: protected columns ${columnName(comparison.left)} and ${columnName(comparison.right)} are compared, but their policies store different values for equal plaintexts`);
      }
      if (!sameProtection(left, left)) {
        throw unsupportedRefusal(`pgveil refused the statement: protected column ${columnName(comparison.left)} is compared with another column, but its tokens are randomised (noise)`);
      }
    }
    if (statement.type === 'CopyStmt') {
      const text = textBytes.subarray(statement.start, statement.end).toString('utf8');
      const stream = copyStreamOf(text, statement.copyFrom, policies, context.actions, schemaAt, statement.copy);
      if (stream !== undefined) copies.push(stream);
    }
    schemaAt = schemaAt.afterStatement(statement.sessionEffects ?? []);
  }
  const batch = new ProtectionBatch();
  const replacements = [...split.renumbered];
  for (const statement of analysis.statements) {
    const plainCompared = new Set(statement.plainComparedValues ?? []);
    const placed = new Map<number, ColumnRef>();
    for (const literal of statement.literals) {
      const policy = policyFor(policies, literal.column);
      // One constant compared with several columns (`'x' IN (ssn, name)`) can hold one value only.
      const seen = placed.get(literal.start);
      if (seen !== undefined) {
        const other = policyFor(policies, seen);
        if (other !== policy && !sameProtection(other, policy)) {
          throw unsupportedRefusal(`pgveil refused the statement: a constant is compared with protected columns ${columnName(seen)} and ${columnName(literal.column)} with different policies at one place; write the value twice`);
        }
        continue;
      }
      if (plainCompared.has(literal.start)) {
        throw unsupportedRefusal(`pgveil refused the statement: a constant is compared with protected column ${columnName(literal.column)} and with other values at one place; write the value twice`);
      }
      placed.set(literal.start, literal.column);
      if (literal.array === true) {
        protectArrayConstant(literal, policy, columnType(policies, literal.column), context.dateStyle, batch, replacements);
        continue;
      }
      batch.add(policy, normaliseText(columnType(policies, literal.column), literal.value, context.dateStyle), (value) => replacements.push({ start: literal.start, end: literal.end, token: quoteLiteral(value) }));
    }
  }
  const executedPlans = protectExecuteArguments(analysis, preparedPlans, executePlans, batch, replacements, context.dateStyle, unsettled);
  const finish = (): RewrittenStatement => ({
    sql: spliceText(sql, replacements),
    preparedPlans,
    preparedTexts,
    executedPlans,
    params: split.params,
    extraParams: split.extraParams,
    clientParamCount: split.clientParamCount,
    copies,
    changesCatalog,
    analysis,
    resolutionKey: context.schema.resolutionKey,
    schemaKey: context.schemaKey,
    policies: context.policies,
  });
  // Only constants to protect wait for the engine: a text with none is answered in this turn.
  return batch.size > 0 ? batch.run(context.engine).then(finish) : finish();
}
