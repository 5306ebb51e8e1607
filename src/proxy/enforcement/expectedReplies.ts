/**
 * What the enforcement attaches to each reply PostgreSQL owes (the session's ProtocolState keeps
 * them in order), and what it knows about statements and portals. Following the replies is how a
 * DataRow is tied to the portal it belongs to (a statement described once and executed many times,
 * pipelined portals), how a CopyInResponse is tied to its COPY statement, and which ErrorResponse
 * answers a message pgveil refused (so it can carry pgveil's message).
 */
import type { PreparedNameUse, SessionEffect, SqlAnalysis, StatementSchemaFacts } from '../sql/index.js';
import type { ChangeOutcome } from './writePath/confirmedNames.js';
import type { CopyStream } from './writePath/copyTargets.js';
import type { PendingEffects } from './catalog/sessionSearchPath.js';
import type { ParamPlan, PreparedText } from './writePath/statementRewriter.js';
import type { FieldDescription } from '../protocol/messageReaders.js';
import type { ResultPlan } from './readPath/resultPlan.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';

export interface StatementInfo {
  readonly params: ReadonlyMap<number, ParamPlan>;
  /** What executing it does to search_path, role and transaction. */
  readonly sessionEffects?: readonly SessionEffect[];
  /** Prepared statements that executing it defines, removes or runs (SQL PREPARE, DEALLOCATE, EXECUTE). */
  readonly preparedNames?: PreparedNameUse;
  /**
   * The text as the client sent it, what unqualified names resolved to when it was parsed, and
   * its analysis then: the server re-resolves names at Bind under the path then in force.
   */
  readonly sql?: string;
  readonly resolutionKey?: string;
  readonly analysis?: SqlAnalysis;
  /** Everything that analysis depended on (StatementContext.schemaKey: policies, catalog, search_path). */
  readonly schemaKey?: string;
  /** A context key under which a Bind found the text analysed alike (preparedStatementPath.ts). */
  checkedUnder?: string;
  /** Its text's relations and schema changes, once a Bind or Execute needed them (schemaFactsOf). */
  schemaFacts?: readonly StatementSchemaFacts[];
  /** Running it may change the catalog (DDL): each Execute is followed like a Parse of DDL. */
  readonly changesCatalog?: boolean;
  /** For a text that is a SQL PREPARE: the plans of the statement it prepares. */
  readonly preparedPlan?: ReadonlyMap<number, ParamPlan>;
  /** For a text that is a SQL PREPARE: its text and analysis, for the checks of its EXECUTEs. */
  readonly preparedText?: PreparedText;
  /** Names its SQL EXECUTEs run → their plans' signature when it was parsed (checked at Bind). */
  readonly executedPlans?: ReadonlyMap<string, string>;
  /** Parameters pgveil appended → the client's parameter each carries (parameterSplit.ts). */
  readonly extraParams?: ReadonlyMap<number, number>;
  /** The client's parameter count, when pgveil appended some (ParameterDescription is cut back to it). */
  readonly clientParamCount?: number;
  /** Declared in Parse (and the appended ones'); zeros filled in from ParameterDescription when the client describes it. */
  paramTypes: number[];
  readonly copies: readonly CopyStream[];
  /** From Describe (statement): undefined until then; null for NoData. */
  fields: readonly FieldDescription[] | null | undefined;
  describeRequested: boolean;
}

export interface PortalInfo {
  readonly statement: StatementInfo | undefined;
  readonly resultFormats: readonly number[];
  /** From Describe (portal): undefined until then; null for NoData. */
  described: readonly FieldDescription[] | null | undefined;
  describeRequested: boolean;
  /** What the read path does with its rows, once derived (null: they pass as they are); cleared when it is described. */
  readPlan?: ResultPlan | null;
  /** The policies readPlan was derived under: after a reload or a catalog refresh it is derived again. */
  readPlanUnder?: ColumnPolicies;
}

/**
 * `domain`: the search_path failure domain the ReadyForQuery of a Query or Sync answers;
 * `effects`: the session effects each statement applies once it completes (SessionSearchPath).
 */
export type ExpectedReply =
  | { kind: 'parse' | 'bind' | 'close'; refusal?: Buffer; settle?: SettleChanges }
  | { kind: 'sync' | 'function'; refusal?: Buffer; domain?: number }
  | { kind: 'describe-statement'; statement: StatementInfo; internal: boolean; refusal?: Buffer }
  | { kind: 'describe-portal'; portal: PortalInfo; internal: boolean; refusal?: Buffer }
  | {
    kind: 'execute'; portal: PortalInfo | undefined; copies: CopyStream[]; refusal?: Buffer; effects?: PendingEffects;
    settle?: SettleChanges;
  }
  | {
    kind: 'query'; copies: CopyStream[]; refusal?: Buffer; domain?: number;
    effects?: readonly (PendingEffects | undefined)[]; completedCommands?: number;
    /** Per statement: its changes to prepared statements (PREPARE, DEALLOCATE). */
    settles?: readonly (SettleChanges | undefined)[];
    /** What the Query itself does once answered (it drops the unnamed statement and portal). */
    answered?: SettleChanges;
  };

/**
 * Applies (or forgets) the changes a message makes to the session's named statements and
 * portals once the server answered it: `done` on its completion, `failed` on its error,
 * `skipped` when the server skipped it (an earlier error in its batch).
 */
export type SettleChanges = (outcome: ChangeOutcome) => void;

/** The changes a reply leaves pending when it leaves the queue without completing. */
export function settleUnanswered(reply: ExpectedReply, outcome: ChangeOutcome): void {
  if (reply.kind === 'parse' || reply.kind === 'bind' || reply.kind === 'close' || reply.kind === 'execute') reply.settle?.(outcome);
  else if (reply.kind === 'query') {
    const failedAt = reply.completedCommands ?? 0;
    reply.settles?.forEach((settle, index) => settle?.(index === failedAt && outcome === 'failed' ? 'failed' : 'skipped'));
  }
}

/** The frontend message type whose entry carries each kind of expected reply (a switch: cheaper than a keyed lookup per message). */
export function messageTypeOf(reply: ExpectedReply): number {
  switch (reply.kind) {
    case 'parse': return 0x50;
    case 'bind': return 0x42;
    case 'close': return 0x43;
    case 'sync': return 0x53;
    case 'function': return 0x46;
    case 'describe-statement': case 'describe-portal': return 0x44;
    case 'execute': return 0x45;
    case 'query': return 0x51;
  }
}

/** True when the reply may still open a COPY FROM STDIN. */
export function mayOpenCopyIn(reply: ExpectedReply): boolean {
  return (reply.kind === 'query' || reply.kind === 'execute') && reply.copies.some((copy) => copy.direction === 'in');
}
