/**
 * Client → server: the write path. Query and Parse texts are analysed and their constants
 * protected; Bind values are protected per parameter plan; COPY FROM STDIN rows are rewritten.
 * What cannot be mapped is refused by forwarding, in its place, a message that fails upstream
 * (so PostgreSQL itself leaves the transaction as it would: aborted inside a block, rolled back
 * in an implicit one) and whose ErrorResponse the backend side replaces with pgveil's.
 */
import { randomBytes } from 'node:crypto';
import { DROP, type MessageVerdict } from '../session/sessionHooks.js';
import { schemaFactsOf, unknownSessionEffects, type StatementAnalysis } from '../sql/index.js';
import { ConfirmedNames, type PendingChange } from './writePath/confirmedNames.js';
import { preparedNameChanges, statementForBind } from './writePath/preparedStatements.js';
import { splitParamTypes } from './writePath/parameterSplit.js';
import { rewriteBind, rewriteBindNow } from './writePath/bindRewriter.js';
import { PolicyRefusal, unsupportedRefusal } from './policyRefusal.js';
import type { PolicySessionState } from './policySessionState.js';
import { type PortalInfo, type SettleChanges, type StatementInfo } from './expectedReplies.js';
import { preparedCopyRefusal, preparedPathRefusal } from './writePath/preparedStatementPath.js';
import { CopyInMessages } from './writePath/copyInMessages.js';
import type { RewrittenStatement } from './writePath/statementRewriter.js';
import type { CopyStream } from './writePath/copyTargets.js';
import { analysedText } from './analysedText.js';
import { mayChangeSettingsUnseen } from './catalog/sessionSettings.js';
import { readBind, readBindStatement, readBindTarget, readExecutePortal, readParse, readQuery, readTarget, type BindTarget, type ParseMessage } from '../protocol/messageReaders.js';
import { bindMessage, describeMessage, failingFunctionCall, parseMessage, queryMessage } from '../protocol/messages.js';

/** Fails at parse time in any session state; its syntax error is replaced by pgveil's message. */
const FAILING_SQL = 'pgveil refused this statement';
/** No client can have prepared a statement of this name: a Bind to it fails upstream. */
const FAILING_STATEMENT = `pgveil refused ${randomBytes(8).toString('hex')}`;

const NO_STATEMENT: Readonly<StatementInfo> = { params: new Map(), paramTypes: [], copies: [], fields: undefined, describeRequested: false };

function isRefusal(error: unknown): error is PolicyRefusal {
  return error instanceof PolicyRefusal;
}

/** A Describe of the unnamed portal ('P', empty name) and an Execute of it (empty name, row limit): their lengths. */
const DESCRIBE_UNNAMED_PORTAL_BYTES = 7;
const EXECUTE_UNNAMED_PORTAL_BYTES = 10;

/**
 * The server runs a Query in the unnamed statement and portal, and drops them afterwards: what
 * applies that once the Query is answered. Undefined when there is nothing to drop (a session of
 * simple Queries): neither name holds anything, nor may by then.
 */
function dropUnnamed(state: PolicySessionState, batch: number): SettleChanges | undefined {
  if (state.statements.holdsNothing('') && state.portals.holdsNothing('')) return undefined;
  const statement = state.statements.change('', undefined, batch);
  const portal = state.portals.change('', undefined, batch);
  return (outcome) => {
    state.statements.settle(statement, outcome);
    state.portals.settle(portal, outcome);
  };
}

/** What a Bind's reply settles: the portal it defines. */
function portalSettle(state: PolicySessionState, change: PendingChange<PortalInfo>): SettleChanges {
  return (outcome) => state.portals.settle(change, outcome);
}

/** Whether a statement of the text changes session settings or prepared statements (their bookkeeping then follows it). */
function changesSessionOrNames(statements: readonly StatementAnalysis[]): boolean {
  for (const statement of statements) if ((statement.sessionEffects?.length ?? 0) > 0 || statement.preparedNames !== undefined) return true;
  return false;
}

export class FrontendPolicy {
  /**
   * The unnamed portal the last Bind of this batch bound, while no other message of the batch
   * changed that name: what `describe` and `execute` would find for it (portals.certain), since
   * the server runs them only if that Bind succeeded.
   */
  private boundPortal: PortalInfo | undefined;
  private boundBatch = -1;
  private readonly copyIn: CopyInMessages;

  constructor(private readonly state: PolicySessionState) {
    this.copyIn = new CopyInMessages(state);
  }

  /**
   * Describe and Execute of the portal the Bind before them bound, in the same batch (libpq's
   * Bind, Describe, Execute, Sync): answered here, reading the message in place, with the reply
   * `describe` or `execute` would attach — they add nothing for a portal pgveil is sure of whose
   * statement changes no session state and opens no COPY. Anything else is taken whole.
   */
  wantsWhole(type: number, chunk: Buffer, start: number, end: number, upstreamSkipping: boolean): boolean {
    const state = this.state;
    if (type === 0x53 /* S */) {
      if (this.copyIn.syncWaits()) return true;
      this.sync();
      return false;
    }
    if (type === 0x42 /* B */) return !this.bindInPlace(chunk.subarray(start, end), upstreamSkipping);
    const portal = this.boundPortal;
    if (portal === undefined || this.boundBatch !== state.batch || state.discarding || upstreamSkipping || state.copyIn !== undefined) return true;
    if (type === 0x44 /* D */) {
      if (end - start !== DESCRIBE_UNNAMED_PORTAL_BYTES || chunk[start + 5] !== 0x50 /* P */ || chunk[start + 6] !== 0) return true;
      portal.describeRequested = true;
      state.expectReply({ kind: 'describe-portal', portal, internal: false });
      return false;
    }
    if (type !== 0x45 /* E */ || end - start !== EXECUTE_UNNAMED_PORTAL_BYTES || chunk[start + 5] !== 0) return true;
    const statement = portal.statement;
    // Rows no Describe of the portal announced need pgveil's own first (`execute`); effects, COPY and DDL need their bookkeeping.
    if (statement === undefined || !portal.describeRequested) return true;
    if ((statement.sessionEffects?.length ?? 0) > 0 || statement.preparedNames !== undefined || statement.copies.length > 0 || statement.changesCatalog === true) return true;
    state.expectReply({ kind: 'execute', portal, copies: [], effects: undefined, settle: undefined });
    state.settings.sent(mayChangeSettingsUnseen(statement.analysis));
    return false;
  }

  handle(frame: Buffer, upstreamSkipping: boolean): MessageVerdict | Promise<MessageVerdict> {
    const type = String.fromCharCode(frame[0] as number);
    const state = this.state;
    if (type === 'd' || type === 'c' || type === 'f') return this.copyIn.message(type, frame);
    if (state.copyIn !== undefined && type !== 'S' && type !== 'H') state.copyIn = undefined; // the client left COPY mode
    if (type === 'S') return this.copyIn.sync(upstreamSkipping, () => this.sync());
    // PostgreSQL skips everything up to Sync after an error (and so does pgveil after a refusal).
    if (state.discarding || upstreamSkipping) return DROP;
    switch (type) {
      case 'Q': return this.query(frame);
      case 'P': return this.parse(frame);
      case 'B': return this.bind(frame);
      case 'D': return this.describe(frame);
      case 'E': return this.execute(frame);
      case 'C': return this.close(frame);
      case 'F': return this.refuseFunctionCall();
      default: return undefined;
    }
  }

  /**
   * A Sync ends the batch (and pgveil's discarding after a refusal); its ReadyForQuery answers it.
   * Both callers have found that no COPY IN runs or may open (CopyInMessages.syncWaits / sync).
   */
  private sync(): void {
    const state = this.state;
    this.boundPortal = undefined;
    state.discarding = false;
    state.expectReply({ kind: 'sync', domain: state.searchPath.syncDomain() });
    state.batch++;
  }

  private query(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    const sql = readQuery(frame);
    const domain = state.searchPath.queryDomain();
    const batch = ++state.batch;
    state.batch++;
    const answered = dropUnnamed(state, batch);
    let rewritten: RewrittenStatement | Promise<RewrittenStatement>;
    try {
      rewritten = analysedText(this.state, sql, domain, batch);
    } catch (error) {
      return this.refuseQuery(error, domain, answered);
    }
    if (rewritten instanceof Promise) {
      return rewritten.then((done) => this.forwardQuery(sql, done, domain, batch, answered), (error: unknown) => this.refuseQuery(error, domain, answered));
    }
    return this.forwardQuery(sql, rewritten, domain, batch, answered);
  }

  private forwardQuery(sql: string, rewritten: RewrittenStatement, domain: number, batch: number, answered: SettleChanges | undefined): MessageVerdict {
    const state = this.state;
    const statements = rewritten.analysis.statements;
    state.settings.sent(mayChangeSettingsUnseen(rewritten.analysis));
    if (!changesSessionOrNames(statements)) {
      state.expectReply({ kind: 'query', copies: [...rewritten.copies], domain, completedCommands: 0, answered });
    } else {
      const effects = statements.map((statement) => state.searchPath.sent(domain, statement.sessionEffects ?? []));
      const settles = statements.map((statement, index) => preparedNameChanges(
        state, statement.preparedNames, batch, rewritten.preparedPlans[index], rewritten.preparedTexts[index], rewritten.schemaKey,
      ));
      state.expectReply({ kind: 'query', copies: [...rewritten.copies], domain, effects, completedCommands: 0, settles, answered });
    }
    return rewritten.sql === sql ? undefined : queryMessage(rewritten.sql);
  }

  private refuseQuery(error: unknown, domain: number, answered: SettleChanges | undefined): MessageVerdict {
    if (!isRefusal(error)) throw error;
    this.state.refused(error);
    this.state.expectReply({ kind: 'query', copies: [], refusal: error.toErrorResponse(), domain, answered });
    return queryMessage(FAILING_SQL);
  }

  private parse(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const parse = readParse(frame);
    let rewritten: RewrittenStatement | Promise<RewrittenStatement>;
    try {
      rewritten = analysedText(this.state, parse.sql, this.state.searchPath.messageDomain(), this.state.batch, parse.paramTypes.length);
    } catch (error) {
      return this.refuseParse(error, parse);
    }
    if (rewritten instanceof Promise) return rewritten.then((done) => this.forwardParse(parse, done), (error: unknown) => this.refuseParse(error, parse));
    return this.forwardParse(parse, rewritten);
  }

  private forwardParse(parse: ParseMessage, rewritten: RewrittenStatement): MessageVerdict {
    const state = this.state;
    const copyRefusal = preparedCopyRefusal(rewritten.analysis, rewritten.policies);
    if (copyRefusal !== undefined) return this.refuseParse(copyRefusal, parse);
    // The server drops the unnamed statement before it parses: even a failed Parse of it clears it.
    const failureClears = parse.name === '';
    const paramTypes = splitParamTypes(parse.paramTypes, rewritten.extraParams);
    const change = state.statements.change(parse.name, {
      ...(rewritten.preparedPlans[0] === undefined ? {} : { preparedPlan: rewritten.preparedPlans[0] }),
      ...(rewritten.preparedTexts[0] === undefined ? {} : { preparedText: rewritten.preparedTexts[0] }),
      ...(rewritten.executedPlans.size === 0 ? {} : { executedPlans: rewritten.executedPlans }),
      params: rewritten.params, paramTypes, extraParams: rewritten.extraParams, clientParamCount: rewritten.clientParamCount, copies: rewritten.copies, fields: undefined, describeRequested: false,
      sessionEffects: rewritten.analysis.statements[0]?.sessionEffects ?? [],
      preparedNames: rewritten.analysis.statements[0]?.preparedNames,
      sql: parse.sql, resolutionKey: rewritten.resolutionKey, analysis: rewritten.analysis, schemaKey: rewritten.schemaKey,
      ...(rewritten.changesCatalog ? { changesCatalog: true } : {}),
    }, state.batch, { failureClears });
    state.expectReply({ kind: 'parse', settle: (outcome) => state.statements.settle(change, outcome) });
    if (rewritten.sql === parse.sql && rewritten.extraParams.size === 0) return undefined;
    return parseMessage({ ...parse, sql: rewritten.sql, paramTypes });
  }

  private refuseParse(error: unknown, parse: ParseMessage): MessageVerdict {
    if (!isRefusal(error)) throw error;
    const state = this.state;
    state.refused(error);
    // The statement of that name, if any, stays what the server holds: the Parse sent instead fails.
    const change = state.statements.change(parse.name, undefined, state.batch, { doomed: true, failureClears: parse.name === '' });
    state.expectReply({ kind: 'parse', refusal: error.toErrorResponse(), settle: (outcome) => state.statements.settle(change, outcome) });
    state.discarding = true;
    return parseMessage({ name: parse.name, sql: FAILING_SQL, paramTypes: [] });
  }

  private bind(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    this.boundPortal = undefined;
    const bind = readBindTarget(frame);
    const known = statementForBind(state, bind.statement);
    if (known instanceof PolicyRefusal) return this.refuseBind(bind, known);
    const statement = known;
    const change = this.pendingPortal(bind, statement);
    // The server resolves the statement's names again if the search_path changed since Parse (and
    // the SQL EXECUTEs of its text run what their names hold now).
    const pathRefusal = preparedPathRefusal(state, statement, state.searchPath.messageDomain());
    if (pathRefusal instanceof Promise) return this.bindAfterPathCheck(pathRefusal, frame, bind, statement, change);
    if (pathRefusal !== undefined) return this.refuseBind(bind, pathRefusal, change);
    return this.bindOnPath(frame, bind, statement, change);
  }

  /**
   * A Bind that `bind` would forward as sent, with no wait: its statement is one pgveil is sure the
   * name holds, has no parameter to protect, and still means under the policies in force what it
   * meant at Parse. Followed here as `bind` follows it; false (nothing done) for any other Bind,
   * which is then taken whole and refused, rewritten or waited on there.
   */
  private bindInPlace(frame: Buffer, upstreamSkipping: boolean): boolean {
    const state = this.state;
    if (state.discarding || upstreamSkipping || state.copyIn !== undefined) return false;
    // The names first: a Bind with values to protect (the write path's) goes whole without its values read twice.
    const statement = state.statements.certain(readBindStatement(frame), state.batch);
    if (statement === undefined || statement.params.size !== 0 || (statement.extraParams?.size ?? 0) !== 0) return false;
    // Only once the policies in force are read is the check synchronous; until then `bind` waits for them.
    if (statement.schemaKey !== undefined && (state.policiesNow() === undefined || preparedPathRefusal(state, statement, state.searchPath.messageDomain()) !== undefined)) return false;
    const bind = readBindTarget(frame);
    this.boundPortal = undefined;
    // With no parameter to protect, bindOnPath only follows the Bind: it answers undefined (as sent) at once.
    this.bindOnPath(frame, bind, statement, this.pendingPortal(bind, statement));
    return true;
  }

  /** The portal a Bind of `statement` defines, pending until the server answers the Bind. */
  private pendingPortal(bind: BindTarget, statement: StatementInfo): PendingChange<PortalInfo> {
    const portal: PortalInfo = { statement, resultFormats: bind.resultFormats, described: undefined, describeRequested: false };
    return this.state.portals.change(bind.portal, portal, this.state.batch);
  }

  // The paths below that build closures are methods of their own: V8 allocates a closure's
  // context when the function that holds it starts, even when the closure is never made.
  private async bindAfterPathCheck(
    check: Promise<PolicyRefusal | undefined>, frame: Buffer, bind: BindTarget, statement: StatementInfo, change: PendingChange<PortalInfo>,
  ): Promise<MessageVerdict> {
    const refusal = await check;
    return refusal === undefined ? this.bindOnPath(frame, bind, statement, change) : this.refuseBind(bind, refusal, change);
  }

  private bindOnPath(
    frame: Buffer, bind: BindTarget, statement: StatementInfo, change: PendingChange<PortalInfo>,
  ): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    if (bind.portal === '') {
      this.boundPortal = change.value;
      this.boundBatch = state.batch;
    }
    if (statement.params.size === 0 && (statement.extraParams?.size ?? 0) === 0) {
      state.expectReply({ kind: 'bind', settle: portalSettle(state, change) });
      return undefined;
    }
    return this.bindRewritten(frame, bind, statement, change);
  }

  private bindRewritten(
    frame: Buffer, bind: BindTarget, statement: StatementInfo, change: PendingChange<PortalInfo>,
  ): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    const settle = portalSettle(state, change);
    const { services } = state;
    const forward = (rewritten: Buffer): Buffer => {
      services.metrics.valuesProtected += statement.params.size;
      state.expectReply({ kind: 'bind', settle });
      return rewritten;
    };
    const refuse = (error: unknown): MessageVerdict => {
      if (!isRefusal(error)) throw error;
      return this.refuseBind(bind, error, change);
    };
    let now: Buffer | undefined;
    try {
      now = rewriteBindNow(frame, statement, services.inlineProtection, services.maxValueBytes, state.settings.dateStyle);
    } catch (error) {
      return refuse(error);
    }
    if (now !== undefined) return forward(now);
    return rewriteBind(frame, readBind(frame), statement, services.engine, state.settings.dateStyle).then(forward, refuse);
  }

  private refuseBind(bind: BindTarget, refusal: PolicyRefusal, planned?: PendingChange<PortalInfo>): MessageVerdict {
    const state = this.state;
    this.boundPortal = undefined;
    state.refused(refusal);
    if (planned !== undefined) state.portals.settle(planned, 'skipped');
    // A portal of that name, if any, stays what the server holds: the Bind sent instead fails.
    const change = state.portals.change(bind.portal, undefined, state.batch, { doomed: true });
    state.expectReply({ kind: 'bind', refusal: refusal.toErrorResponse(), settle: (outcome) => state.portals.settle(change, outcome) });
    state.discarding = true;
    return bindMessage({ portal: '', statement: FAILING_STATEMENT, paramFormats: [], values: [], resultFormats: [] });
  }

  private describe(frame: Buffer): MessageVerdict {
    const state = this.state;
    const target = readTarget(frame);
    if (target.target === 'S') {
      // What the reply says is kept only for a statement pgveil is sure the name holds.
      const statement = state.statements.certain(target.name, state.batch) ?? { ...NO_STATEMENT, paramTypes: [] };
      statement.describeRequested = true;
      state.expectReply({ kind: 'describe-statement', statement, internal: false });
    } else {
      const portal: PortalInfo = state.portals.certain(target.name, state.batch)
        ?? { statement: undefined, resultFormats: [], described: undefined, describeRequested: false };
      portal.describeRequested = true;
      state.expectReply({ kind: 'describe-portal', portal, internal: false });
    }
    return undefined;
  }

  /**
   * Rows of a portal nobody described would arrive without a RowDescription: pgveil describes
   * the portal itself first (and drops that reply) so it knows which columns the rows hold. A
   * Describe of its statement is not enough: the server analyses a prepared statement again
   * when DDL or search_path invalidated its plan (at Bind), and the same row type may then come
   * from other tables (a dropped temp table no longer hiding a protected one). Only the
   * portal's own description tells the columns its rows hold.
   */
  private execute(frame: Buffer): MessageVerdict {
    const state = this.state;
    const name = readExecutePortal(frame);
    const known = state.portals.certain(name, state.batch);
    // A portal pgveil is not sure of is described first: the server's RowDescription says what its rows hold.
    const portal: PortalInfo = known ?? { statement: undefined, resultFormats: [], described: undefined, describeRequested: false };
    let prefix: Buffer | undefined;
    if (!portal.describeRequested) {
      portal.describeRequested = true;
      state.expectReply({ kind: 'describe-portal', portal, internal: true });
      prefix = describeMessage('P', name);
    }
    this.followDdl(known, name);
    const sessionEffects = known === undefined ? unknownSessionEffects() : portal.statement?.sessionEffects ?? [];
    const effects = state.searchPath.sent(state.searchPath.messageDomain(), sessionEffects);
    const settle = preparedNameChanges(
      state, portal.statement?.preparedNames, state.batch, portal.statement?.preparedPlan, portal.statement?.preparedText, portal.statement?.schemaKey ?? '',
    );
    state.expectReply({ kind: 'execute', portal, copies: this.copiesOf(portal.statement), effects, settle });
    state.settings.sent(mayChangeSettingsUnseen(portal.statement?.analysis));
    return prefix === undefined ? undefined : Buffer.concat([prefix, frame]);
  }

  /** The COPY streams an Execute of `statement` opens: one loading protected columns fails if its rows could be read in another encoding. */
  private copiesOf(statement: StatementInfo | undefined): CopyStream[] {
    const copies = statement?.copies ?? [];
    if (!copies.some((copy) => copy.direction === 'in' && copy.target !== undefined)) return [...copies];
    const refusal = this.state.settings.preparedCopyRefusal();
    return copies.map((copy) => (copy.direction === 'in' && copy.target !== undefined && refusal !== undefined ? { ...copy, refusal } : copy));
  }

  /**
   * An Execute of a prepared statement that changes the catalog runs its DDL again: followed as a
   * Parse of that DDL is (pendingSchemaChanges.ts), so that text and Binds after it are checked
   * against it until the catalog can see it. A portal pgveil is not sure of may be any of several.
   */
  private followDdl(known: PortalInfo | undefined, name: string): void {
    const state = this.state;
    const portals = known === undefined ? state.portals.candidates(name, state.batch) : [known];
    for (const portal of portals) {
      const statement = portal?.statement;
      if (statement?.changesCatalog !== true) continue;
      state.ddlPending = true;
      // The last reading, even stale, names the relations the DDL touches as a Parse of it did.
      const snapshot = state.catalog.latest;
      const policies = snapshot === undefined ? undefined : state.services.columnPolicies(snapshot, state.services.store.current);
      if (statement.sql === undefined || policies === undefined) {
        state.pendingSchema.recordUnknown();
        continue;
      }
      statement.schemaFacts ??= schemaFactsOf(statement.sql);
      state.pendingSchema.record(statement.schemaFacts, policies);
    }
  }

  private close(frame: Buffer): MessageVerdict {
    const state = this.state;
    const target = readTarget(frame);
    if (target.target === 'P' && target.name === '') this.boundPortal = undefined;
    const names: ConfirmedNames<StatementInfo> | ConfirmedNames<PortalInfo> = target.target === 'S' ? state.statements : state.portals;
    const change = names.change(target.name, undefined, state.batch);
    state.expectReply({ kind: 'close', settle: (outcome) => names.settle(change as PendingChange<never>, outcome) });
    return undefined;
  }

  private refuseFunctionCall(): MessageVerdict {
    // Its failure ends an implicit transaction, and the unnamed portal with it.
    this.boundPortal = undefined;
    const refusal = unsupportedRefusal('pgveil refused the message: the FunctionCall protocol message is not relayed for sessions with column policies; call the function with SELECT');
    this.state.refused(refusal);
    this.state.expectReply({ kind: 'function', refusal: refusal.toErrorResponse(), domain: this.state.searchPath.queryDomain() });
    return failingFunctionCall();
  }
}
