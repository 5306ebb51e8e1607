/**
 * Server → client: the read path, and following the replies. RowDescription gives each result
 * set its plan (from table OIDs and attnums, never from SQL text); DataRows of a planned result
 * are held in batches and rewritten with one engine call per column; COPY TO rows likewise.
 * Result sets with no planned column pass as raw bytes. ErrorResponses that answer a refused
 * message carry pgveil's message; replies to pgveil's own Describe are dropped.
 */
import { DROP, type MessageVerdict } from '../session/sessionHooks.js';
import { endedByReload } from './policyRefusal.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';
import { copyOpened } from './copyOpened.js';
import { CopyOutData } from './readPath/copyOutData.js';
import type { PolicySessionState } from './policySessionState.js';
import { settleUnanswered, type ExpectedReply } from './expectedReplies.js';
import { plaintextColumns, samePlan, type ResultPlan } from './readPath/resultPlan.js';
import { CATALOG_READ_FIRST, DescribedResults } from './readPath/describedResults.js';
import { HeldBatch, type Rewrite } from './readPath/heldBatch.js';
import { rewriteDataRows } from './readPath/rowRewriter.js';
import { withholdErrorValues } from './readPath/errorValues.js';
import { commandTag, commandTagStartsWith, frameCount, readParameterDescription, readParameterStatus, readyForQueryStatus, type FieldDescription } from '../protocol/messageReaders.js';
import { parameterDescriptionMessage } from '../protocol/messages.js';

/** Command tags of statements that may change the catalog. */
const DDL_TAG_WORDS = ['CREATE', 'ALTER', 'DROP', 'IMPORT', 'REFRESH', 'SECURITY LABEL'];

const NO_EFFECTS: readonly never[] = Object.freeze([]);

/** The replies a RowDescription may answer. */
type DescribingReply = Extract<ExpectedReply, { kind: 'describe-statement' | 'describe-portal' | 'query' }>;

function describes(head: ExpectedReply | undefined): head is DescribingReply {
  return head !== undefined && (head.kind === 'describe-statement' || head.kind === 'describe-portal' || head.kind === 'query');
}

/** What a RowDescription tells the statement or portal it describes. */
function noteFields(head: DescribingReply, fields: readonly FieldDescription[]): void {
  if (head.kind === 'describe-statement') head.statement.fields = fields;
  else if (head.kind === 'describe-portal') {
    head.portal.described = fields;
    head.portal.readPlan = undefined;
  }
}

interface QueryResult {
  readonly fields: readonly FieldDescription[];
  plan: ResultPlan | undefined;
  /** The policies `plan` was derived under. */
  under: ColumnPolicies;
}

export class BackendPolicy {
  /**
   * The current simple-query result set, when its fields name table columns: its rows are planned
   * under the policies in force as they arrive, like a portal's.
   */
  private queryResult: QueryResult | undefined;
  /** Rows (or COPY data) held for a batch rewrite. */
  private readonly batch = new HeldBatch();
  private readonly copyOut: CopyOutData;
  private readonly described: DescribedResults;

  constructor(private readonly state: PolicySessionState) {
    this.described = new DescribedResults(state);
    this.copyOut = new CopyOutData(state, this.batch);
  }

  handle(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    // The reply this message belongs to, as the session's ProtocolState saw it arrive.
    return this.handleIn(frame, this.state.replies.current);
  }

  private handleIn(frame: Buffer, head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    const type = frame[0] as number;
    if (type === 0x44 /* D */) return this.dataRow(frame, head);
    if (type === 0x64 /* d */) return this.copyOut.data(frame);
    if (!this.batch.isEmpty) {
      // What is held leaves under the policies in force as it leaves (a stale catalog is read first).
      const now = this.state.policiesNow();
      if (now === undefined) return this.state.policies().then(() => this.handleIn(frame, head));
      if (this.copyOut.running) this.copyOut.followPolicies(now);
      else this.followRowPolicies(this.rowsPlan(head));
    }
    const verdict = this.control(type, frame, head);
    if (this.batch.isEmpty) return verdict;
    const flushed = this.batch.flush();
    if (verdict instanceof Promise) return Promise.all([flushed, verdict]).then(([rows, bytes]) => Buffer.concat([rows, bytes ?? frame]));
    return flushed.then((rows) => Buffer.concat([rows, verdict ?? frame]));
  }

  /**
   * Whether a message arriving now, at chunk[start..end) (end -1: not all here), must be handed
   * over whole. A DataRow or CopyData: when its result has a plan, or one not derived yet; a
   * NoticeResponse, when rows are held (`handle` flushes them first) or the session's roles lack
   * plaintext somewhere (it may quote a stored value: errorValues.ts); a RowDescription or
   * CommandComplete: unless it was followed here, in place. The rest stream through as PostgreSQL
   * sent them, as `handle` would have left them.
   */
  wantsWhole(type: number, chunk: Buffer, start: number, end: number): boolean {
    if (type === 0x54 /* T */ || type === 0x43 /* C */) {
      // Held rows leave before what ends or describes a result: `handle` flushes them.
      if (end < 0 || !this.batch.isEmpty) return true;
      return type === 0x54 ? !this.describedInPlace(chunk, start, end) : !this.completedInPlace(chunk, start, end);
    }
    if (type === 0x64 /* d */) return this.copyOut.wantsWhole();
    // A notice (RAISE NOTICE in a function the query calls) goes out after the rows sent before it.
    if (type === 0x4e /* N */) return !this.batch.isEmpty || this.state.rights().restricted;
    const head = this.state.replies.current;
    // Rows stream by only under a plan of none derived under the policies in force now.
    if (head?.kind === 'execute') return head.portal !== undefined && (head.portal.readPlan !== null || head.portal.readPlanUnder !== this.state.policiesNow());
    if (head?.kind === 'query') {
      const result = this.queryResult;
      return result !== undefined && (result.plan !== undefined || result.under !== this.state.policiesNow());
    }
    return false;
  }

  /**
   * ParseComplete, BindComplete, CloseComplete and ReadyForQuery, told by type and first body
   * byte (policyHooks streams them through as headers): they are never rewritten.
   */
  header(type: number, firstBodyByte: number): void {
    // Rows are held only within a result, and whatever ends a result is handled whole and flushes them first.
    if (!this.batch.isEmpty) throw new Error('pgveil held rows past the end of their result');
    if (type === 0x5a) this.readyForQuery(String.fromCharCode(firstBodyByte || 0x49), this.state.replies.answered);
    else this.completed(type);
  }

  /** `frame`: one or more DataRows back to back (what followed one another in a chunk comes as one). */
  private dataRow(frame: Buffer, head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    // A portal's rows are planned under the policies in force as they arrive: a stale catalog is read first.
    const planned = head?.kind === 'execute' ? head.portal !== undefined : head?.kind === 'query' && this.queryResult !== undefined;
    if (planned && this.state.policiesNow() === undefined) return this.state.policies().then(() => this.dataRow(frame, head));
    const plan = this.rowsPlan(head);
    this.followRowPolicies(plan);
    if (plan !== undefined) return this.batch.hold(frame, frameCount(frame), plan, this.dataRowsRewrite);
    if (this.batch.isEmpty) return undefined;
    return this.batch.flush().then((held) => Buffer.concat([held, frame]));
  }

  /** The plan of the rows of `head`'s result under the policies in force now (undefined: none). */
  private rowsPlan(head: ExpectedReply | undefined): ResultPlan | undefined {
    if (head?.kind === 'execute') return this.described.portalPlan(head.portal);
    return head?.kind === 'query' ? this.queryRowsPlan() : undefined;
  }

  /** The policies changed while rows were held: they leave under the plan now in force too. */
  private followRowPolicies(plan: ResultPlan | undefined): void {
    if (this.batch.holdsOtherThan(plan)) this.batch.replan(plan, this.dataRowsRewrite);
  }

  /** The plan of the current simple-query result's rows, derived again when the policies changed since. */
  private queryRowsPlan(): ResultPlan | undefined {
    const result = this.queryResult;
    const now = this.state.policiesNow();
    if (result === undefined || now === undefined || result.under === now) return result?.plan;
    result.plan = this.described.plan(now, result.fields);
    result.under = now;
    return result.plan;
  }

  /** The rewrite of a batch of rows planned under `plan` (asked by the batch, once per batch). */
  private readonly dataRowsRewrite = (planned: object): Rewrite => {
    const plan = planned as ResultPlan;
    const state = this.state;
    const services = state.services;
    const { engine, metrics } = services;
    const dateStyle = state.settings.dateStyle;
    const revealed = plaintextColumns(plan.fields);
    return async (frames, rows) => {
      // Recorded before the batch can leave: the audit line precedes the plaintext.
      if (revealed.length > 0) state.revealed(revealed, rows);
      const policySet = services.store.current;
      const rewritten = await rewriteDataRows(frames, plan, engine, metrics, dateStyle, (policy) => services.unprotectInPlace(policy), rows);
      // A reload while the batch was rewritten (it yields between slices): the rows were written in
      // place, so they cannot be planned again; if the plan changed, they never leave.
      if (services.store.current !== policySet && !samePlan(this.described.planAgain(plan, await state.policies()), plan)) {
        throw endedByReload('the result', 'its rows were being revealed', 'statement');
      }
      return rewritten;
    };
  };

  private control(type: number, frame: Buffer, head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    switch (type) {
      case 0x31: // 1 ParseComplete
      case 0x32: // 2 BindComplete
      case 0x33: // 3 CloseComplete
        this.completed(type);
        return undefined;
      case 0x74: { // t ParameterDescription
        if (head?.kind !== 'describe-statement') return undefined;
        const types = readParameterDescription(frame);
        head.statement.paramTypes = types.map((oid, i) => (head.statement.paramTypes[i] || oid));
        if (head.internal) return DROP;
        // Parameters pgveil appended (parameterSplit.ts) are not the client's to see.
        const clientCount = head.statement.clientParamCount;
        if ((head.statement.extraParams?.size ?? 0) > 0 && clientCount !== undefined && types.length > clientCount) {
          return parameterDescriptionMessage(types.slice(0, clientCount));
        }
        return undefined;
      }
      case 0x54: return this.rowDescription(frame, head); // T
      case 0x6e: // n NoData
        if (head?.kind === 'describe-statement') head.statement.fields = null;
        else if (head?.kind === 'describe-portal') head.portal.described = null;
        else return undefined;
        return head.internal ? DROP : undefined;
      case 0x43: { // C CommandComplete
        if (commandTagStartsWith(frame, DDL_TAG_WORDS)) {
          state.ddlCompleted = true;
          state.catalog.markStale();
        }
        this.followCommand(head, frame, 0, frame.length);
        this.endResult(head);
        return undefined;
      }
      case 0x49: // I EmptyQueryResponse
      case 0x73: // s PortalSuspended
        this.endResult(head);
        return undefined;
      case 0x45: return this.error(head, frame); // E
      case 0x4e: // N NoticeResponse: quotes stored values as errors do (errorValues.ts)
        return state.rights().restricted ? withholdErrorValues(frame) : undefined;
      case 0x5a: return this.readyForQuery(readyForQueryStatus(frame), state.replies.answered); // Z
      case 0x47: return copyOpened(state, this.copyOut, 'in', head); // G CopyInResponse
      case 0x48: return copyOpened(state, this.copyOut, 'out', head); // H CopyOutResponse
      case 0x63: // c CopyDone
        this.copyOut.end();
        return undefined;
      case 0x53: { // S ParameterStatus
        const { name, value } = readParameterStatus(frame);
        state.settings.update(name, value);
        if (name === 'search_path') state.searchPath.reported(value);
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private rowDescription(frame: Buffer, head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    if (!describes(head)) return undefined;
    const fields = this.described.fieldsOf(frame);
    const known = this.described.policiesKnowing(fields);
    noteFields(head, fields);
    if (known === CATALOG_READ_FIRST) return this.describedAfterCatalogRead(head, fields);
    return this.resultDescribed(head, fields, known);
  }

  /**
   * A RowDescription followed in place, as `rowDescription` would: one that repeats the last read,
   * answers a client's message and needs no catalog read first (false: it must be seen whole).
   */
  private describedInPlace(chunk: Buffer, start: number, end: number): boolean {
    const head = this.state.replies.current;
    if (!describes(head)) return true;
    if (head.kind !== 'query' && head.internal) return false;
    const fields = this.described.knownFieldsAt(chunk, start, end);
    if (fields === undefined) return false;
    const known = this.described.policiesKnowing(fields);
    if (known === CATALOG_READ_FIRST) return false;
    noteFields(head, fields);
    this.resultDescribed(head, fields, known);
    return true;
  }

  /** A CommandComplete followed in place, as `control` would: one of no DDL (false: it must be seen whole). */
  private completedInPlace(chunk: Buffer, start: number, end: number): boolean {
    if (commandTagStartsWith(chunk, DDL_TAG_WORDS, start, end)) return false;
    const head = this.state.replies.current;
    this.followCommand(head, chunk, start, end);
    this.endResult(head);
    return true;
  }

  /** The catalog must be read before the fields can be planned (a closure only on this path). */
  private describedAfterCatalogRead(head: DescribingReply, fields: readonly FieldDescription[]): Promise<MessageVerdict> {
    return this.described.afterCatalogRead(fields, (policies) => this.resultDescribed(head, fields, policies));
  }

  /** A result described under `policies` (undefined: its fields name no table column). */
  private resultDescribed(head: DescribingReply, fields: readonly FieldDescription[], policies: ColumnPolicies | undefined): MessageVerdict {
    if (head.kind === 'query') {
      this.queryResult = policies === undefined ? undefined : { fields, plan: this.described.plan(policies, fields), under: policies };
      return undefined;
    }
    if (head.kind === 'describe-portal' && policies !== undefined) {
      // Planned now, under the policies that describe the rows: rows with no plan then stream by unread.
      head.portal.readPlan = this.described.plan(policies, fields) ?? null;
      head.portal.readPlanUnder = policies;
    }
    return head.internal ? DROP : undefined;
  }

  private endResult(head: ExpectedReply | undefined): void {
    this.copyOut.end();
    if (this.state.copyIn !== undefined) this.state.copyIn = undefined;
    if (head?.kind === 'query') this.queryResult = undefined;
    this.state.backendEvent();
  }

  /** A statement completed (its CommandComplete at chunk[start..end)): its effects on search_path, role and transaction now hold. */
  private followCommand(head: ExpectedReply | undefined, chunk: Buffer, start: number, end: number): void {
    const searchPath = this.state.searchPath;
    if (head?.kind === 'execute') {
      if (head.effects !== undefined) searchPath.completed(head.effects, commandTag(chunk.subarray(start, end)));
      head.settle?.('done');
    } else if (head?.kind === 'query') {
      const effects = head.effects ?? NO_EFFECTS;
      const index = head.completedCommands ?? 0;
      head.completedCommands = index + 1;
      head.settles?.[index]?.('done');
      // Text the parser could not split has one entry: every command it runs counts as it.
      const pending = effects[Math.min(index, effects.length - 1)];
      if (pending !== undefined) searchPath.completed(pending, commandTag(chunk.subarray(start, end)));
    }
  }

  private error(head: ExpectedReply | undefined, frame: Buffer): MessageVerdict {
    const state = this.state;
    state.searchPath.failed();
    this.copyOut.end();
    this.queryResult = undefined;
    if (state.copyIn !== undefined) {
      state.copyIn.failed = true;
      state.copyIn.failSent = true;
    }
    // The replies this error ends (the failed one; in the extended protocol, the rest up to the
    // next Sync, which PostgreSQL skips) were settled as the ProtocolState followed it.
    state.backendEvent();
    if (head?.refusal !== undefined) return head.refusal;
    // The server's own error may quote a stored value no RowDescription names (errorValues.ts).
    return state.rights().restricted ? withholdErrorValues(frame) : undefined;
  }

  /** ParseComplete, BindComplete or CloseComplete: what the message it answers changes now holds. */
  private completed(type: number): void {
    const answered = this.state.replies.answered;
    if (answered === undefined) return;
    const kind = type === 0x31 ? 'parse' : type === 0x32 ? 'bind' : 'close';
    if (answered.kind === kind) answered.settle?.('done');
  }

  /** `answered`: the Sync, Query or FunctionCall this ReadyForQuery answers (replies still owed before it were skipped). */
  private readyForQuery(status: string, answered: ExpectedReply | undefined): MessageVerdict {
    const state = this.state;
    if (answered?.kind === 'query') {
      settleUnanswered(answered, 'skipped');
      answered.answered?.('done');
    }
    const domain = answered?.kind === 'sync' || answered?.kind === 'query' || answered?.kind === 'function' ? answered.domain : undefined;
    state.searchPath.readyForQuery(status, domain);
    this.queryResult = undefined;
    this.copyOut.end();
    state.copyIn = undefined;
    // Only an idle session's settings are all reported: a later batch may still change them.
    state.settings.settled(state.replies.pendingReplies === 0);
    if (state.ddlCompleted || state.ddlPending) state.catalog.markStale();
    if (status === 'I') {
      if (state.uncommittedDdl) state.catalog.markStale();
      state.uncommittedDdl = false;
      state.portals.clearConfirmed();
      // Messages sent after this Sync may carry DDL of their own: keep what is pending until they are answered.
      if (state.replies.pendingReplies === 0) state.pendingSchema.clear();
    } else if (state.ddlCompleted || state.ddlPending) {
      state.uncommittedDdl = true;
    }
    state.ddlCompleted = false;
    state.ddlPending = false;
    state.backendEvent();
    return undefined;
  }
}
