/**
 * Server → client: the read path, and following the replies. RowDescription gives each result
 * set its plan (from table OIDs and attnums, never from SQL text); DataRows of a planned result
 * are held in batches and rewritten with one engine call per column; COPY TO rows likewise.
 * Result sets with no planned column pass as raw bytes. ErrorResponses that answer a refused
 * message carry pgveil's message; replies to pgveil's own Describe are dropped.
 */
import { DROP, type MessageVerdict } from '../session/sessionHooks.js';
import type { ColumnPolicies } from './catalog/columnPolicies.js';
import { CopyInRewriter } from './writePath/copyInRewriter.js';
import { BinaryCopyInRewriter } from './writePath/binaryCopyInRewriter.js';
import { CopyOutRewriter } from './readPath/copyOutRewriter.js';
import { BinaryCopyOutRewriter } from './readPath/binaryCopyOutRewriter.js';
import type { CopyStream } from './writePath/copyTargets.js';
import type { PolicySessionState } from './policySessionState.js';
import { settleUnanswered, type ExpectedReply } from './expectedReplies.js';
import type { ResultPlan } from './readPath/resultPlan.js';
import { DescribedResults } from './readPath/describedResults.js';
import { rewriteDataRows } from './readPath/rowRewriter.js';
import { commandTag, commandTagStartsWith, frameCount, readParameterDescription, readParameterStatus, readyForQueryStatus } from '../protocol/messageReaders.js';
import { parameterDescriptionMessage } from '../protocol/messages.js';

/**
 * A batch is handed over once it holds this many rows or bytes. Rows come in runs (a chunk's worth,
 * at most a socket read), so a batch may pass either bound by the last run it took: memory stays
 * within BATCH_BYTES and one read, and the rewrite still yields the loop every 512 values.
 */
const BATCH_ROWS = 2048;
const BATCH_BYTES = 1 << 20;
/** Command tags of statements that may change the catalog. */
const DDL_TAG_WORDS = ['CREATE', 'ALTER', 'DROP', 'IMPORT', 'REFRESH', 'SECURITY LABEL'];

/** Rewrites a batch of held frames (`rows` rows in all); returns them, in order, as one buffer. */
type Rewrite = (frames: Buffer[], rows: number) => Promise<Buffer>;

type RevealingFields = readonly { readonly policy: { readonly key: string }; readonly action: string }[];

/** The policy keys of the columns a plan decrypts to plaintext (masks and tokens reveal nothing), once per plan. */
const plaintextColumnsOf = new WeakMap<RevealingFields, string[]>();
function plaintextColumns(fields: RevealingFields): string[] {
  let columns = plaintextColumnsOf.get(fields);
  if (columns === undefined) {
    columns = fields.filter((field) => field.action === 'unprotect').map((field) => field.policy.key);
    plaintextColumnsOf.set(fields, columns);
  }
  return columns;
}

export class BackendPolicy {
  /** The plan of the current simple-query result set. */
  private queryPlan: ResultPlan | undefined;
  private copyOut: CopyOutRewriter | BinaryCopyOutRewriter | undefined;
  private held: Buffer[] = [];
  /** The rows the held frames hold (a DataRow frame may hold several back to back). */
  private heldRows = 0;
  private heldBytes = 0;
  private heldRewrite: Rewrite | undefined;
  private readonly described: DescribedResults;

  constructor(private readonly state: PolicySessionState) {
    this.described = new DescribedResults(state);
  }

  handle(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const type = frame[0] as number;
    // The reply this message belongs to, as the session's ProtocolState saw it arrive.
    const head = this.state.replies.current;
    if (type === 0x44 /* D */) return this.dataRow(frame, head);
    if (type === 0x64 /* d */) return this.copyData(frame);
    const verdict = this.control(type, frame, head);
    if (this.held.length === 0) return verdict;
    const flushed = this.flush();
    if (verdict instanceof Promise) return Promise.all([flushed, verdict]).then(([rows, bytes]) => Buffer.concat([rows, bytes ?? frame]));
    return flushed.then((rows) => Buffer.concat([rows, verdict ?? frame]));
  }

  /**
   * Whether a DataRow or CopyData arriving now must be handed over whole: its result has a plan,
   * or one not derived yet; a NoticeResponse, when rows are held (`handle` flushes them first).
   * The rest stream through as PostgreSQL sent them, as `handle` would have left them.
   */
  wantsWhole(type: number): boolean {
    if (type === 0x64 /* d */) return this.copyOut !== undefined;
    // A notice (RAISE NOTICE in a function the query calls) goes out after the rows sent before it.
    if (type === 0x4e /* N */) return this.held.length > 0;
    const head = this.state.replies.current;
    // Rows stream by only under a plan of none derived under the policies in force now.
    if (head?.kind === 'execute') return head.portal !== undefined && (head.portal.readPlan !== null || head.portal.readPlanUnder !== this.state.policiesNow());
    if (head?.kind === 'query') return this.queryPlan !== undefined;
    return false;
  }

  /**
   * ParseComplete, BindComplete, CloseComplete and ReadyForQuery, told by type and first body
   * byte (policyHooks streams them through as headers): they are never rewritten.
   */
  header(type: number, firstBodyByte: number): void {
    // Rows are held only within a result, and whatever ends a result is handled whole and flushes them first.
    if (this.held.length > 0) throw new Error('pgveil held rows past the end of their result');
    if (type === 0x5a) this.readyForQuery(String.fromCharCode(firstBodyByte || 0x49), this.state.replies.answered);
    else this.completed(type);
  }

  /** `frame`: one or more DataRows back to back (what followed one another in a chunk comes as one). */
  private dataRow(frame: Buffer, head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    // A portal's rows are planned under the policies in force as they arrive: a stale catalog is read first.
    if (head?.kind === 'execute' && head.portal !== undefined && this.state.policiesNow() === undefined) {
      return this.state.policies().then(() => this.dataRow(frame, head));
    }
    const plan = head?.kind === 'execute' ? this.described.portalPlan(head.portal) : head?.kind === 'query' ? this.queryPlan : undefined;
    if (plan === undefined) return undefined;
    // A batch holds rows of one result only (whatever ends a result flushes it first): the first row's rewrite serves it.
    this.heldRewrite ??= this.dataRowsRewrite(plan);
    return this.hold(frame, frameCount(frame));
  }

  private dataRowsRewrite(plan: ResultPlan): Rewrite {
    const engine = this.state.services.engine;
    const metrics = this.state.services.metrics;
    const dateStyle = this.state.settings.dateStyle;
    const services = this.state.services;
    const revealed = plaintextColumns(plan.fields);
    const state = this.state;
    return (frames, rows) => {
      // Recorded before the batch can leave: the audit line precedes the plaintext.
      if (revealed.length > 0) state.revealed(revealed, rows);
      return rewriteDataRows(frames, plan, engine, metrics, dateStyle, (policy) => services.unprotectInPlace(policy), rows);
    };
  }

  private copyData(frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
    const rewriter = this.copyOut;
    if (rewriter === undefined) return undefined;
    if (this.heldRewrite === undefined) {
      const revealed = plaintextColumns(rewriter.columns);
      const state = this.state;
      this.heldRewrite = async (frames, rows) => {
        if (revealed.length > 0) state.revealed(revealed, rows);
        return Buffer.concat(await rewriter.rewrite(frames));
      };
    }
    return this.hold(frame, 1);
  }

  /** Holds a frame of `rows` messages for the batch; hands the batch over once it is full. */
  private hold(frame: Buffer, rows: number): MessageVerdict | Promise<MessageVerdict> {
    this.held.push(frame);
    this.heldRows += rows;
    this.heldBytes += frame.length;
    if (this.heldRows < BATCH_ROWS && this.heldBytes < BATCH_BYTES) return DROP;
    return this.flush();
  }

  private async flush(): Promise<Buffer> {
    const frames = this.held;
    const rows = this.heldRows;
    const rewrite = this.heldRewrite;
    this.held = [];
    this.heldRows = 0;
    this.heldBytes = 0;
    this.heldRewrite = undefined;
    if (rewrite === undefined || frames.length === 0) return Buffer.concat(frames);
    return rewrite(frames, rows);
  }

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
        this.followCommand(head, frame);
        this.endResult(head);
        return undefined;
      }
      case 0x49: // I EmptyQueryResponse
      case 0x73: // s PortalSuspended
        this.endResult(head);
        return undefined;
      case 0x45: return this.error(head); // E
      case 0x5a: return this.readyForQuery(readyForQueryStatus(frame), state.replies.answered); // Z
      case 0x47: return this.copyStart('in', head); // G CopyInResponse
      case 0x48: return this.copyStart('out', head); // H CopyOutResponse
      case 0x63: // c CopyDone
        this.copyOut = undefined;
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
    if (head === undefined || (head.kind !== 'describe-statement' && head.kind !== 'describe-portal' && head.kind !== 'query')) return undefined;
    const fields = this.described.fieldsOf(frame);
    if (head.kind === 'describe-statement') {
      head.statement.fields = fields;
      const verdict = head.internal ? DROP : undefined;
      return this.described.whenCatalogKnows(fields, () => verdict);
    }
    if (head.kind === 'describe-portal') {
      const portal = head.portal;
      portal.described = fields;
      portal.readPlan = undefined;
      const verdict = head.internal ? DROP : undefined;
      return this.described.whenCatalogKnows(fields, (policies) => {
        // Planned now, under the policies that describe the rows: rows with no plan then stream by unread.
        if (policies !== undefined) {
          portal.readPlan = this.described.plan(policies, fields) ?? null;
          portal.readPlanUnder = policies;
        }
        return verdict;
      });
    }
    return this.described.whenCatalogKnows(fields, (policies) => {
      this.queryPlan = policies === undefined ? undefined : this.described.plan(policies, fields);
      return undefined;
    });
  }

  private endResult(head: ExpectedReply | undefined): void {
    this.copyOut = undefined;
    if (this.state.copyIn !== undefined) this.state.copyIn = undefined;
    if (head?.kind === 'query') this.queryPlan = undefined;
    this.state.backendEvent();
  }

  /** A statement completed: its effects on search_path, role and transaction now hold. */
  private followCommand(head: ExpectedReply | undefined, frame: Buffer): void {
    const searchPath = this.state.searchPath;
    if (head?.kind === 'execute') {
      if (head.effects !== undefined) searchPath.completed(head.effects, commandTag(frame));
      head.settle?.('done');
    } else if (head?.kind === 'query') {
      const effects = head.effects ?? [];
      const index = head.completedCommands ?? 0;
      head.completedCommands = index + 1;
      head.settles?.[index]?.('done');
      // Text the parser could not split has one entry: every command it runs counts as it.
      const pending = effects[Math.min(index, effects.length - 1)];
      if (pending !== undefined) searchPath.completed(pending, commandTag(frame));
    }
  }

  private error(head: ExpectedReply | undefined): MessageVerdict {
    const state = this.state;
    state.searchPath.failed();
    this.copyOut = undefined;
    this.queryPlan = undefined;
    if (state.copyIn !== undefined) {
      state.copyIn.failed = true;
      state.copyIn.failSent = true;
    }
    // The replies this error ends (the failed one; in the extended protocol, the rest up to the
    // next Sync, which PostgreSQL skips) were settled as the ProtocolState followed it.
    state.backendEvent();
    return head?.refusal;
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
    this.queryPlan = undefined;
    this.copyOut = undefined;
    state.copyIn = undefined;
    state.settings.settled();
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

  private copyStart(direction: 'in' | 'out', head: ExpectedReply | undefined): MessageVerdict | Promise<MessageVerdict> {
    const state = this.state;
    let stream: CopyStream | undefined;
    if (head?.kind === 'query' || head?.kind === 'execute') {
      const at = head.copies.findIndex((copy) => copy.direction === direction);
      if (at >= 0) stream = head.copies.splice(0, at + 1)[at];
    }
    const start = (policies: ColumnPolicies | undefined): MessageVerdict => {
      if (stream?.direction === 'in') {
        const target = stream.target;
        const rewriter = target === undefined || policies === undefined
          ? undefined
          : target.options.format === 'binary'
            ? new BinaryCopyInRewriter(target, policies, state.services.engine, state.services.maxValueBytes)
            : new CopyInRewriter(target, policies, state.services.engine, state.settings.dateStyle);
        state.copyIn = { rewriter, failed: false, failSent: false };
      } else if (direction === 'in') {
        // A COPY pgveil did not see coming: its rows cannot be checked, so the COPY is failed.
        state.copyIn = { rewriter: undefined, failed: true, failSent: false };
      } else if (stream?.direction === 'out' && stream.columns.length > 0) {
        this.copyOut = stream.options?.format === 'binary'
          ? new BinaryCopyOutRewriter(stream, state.services.engine, state.services.metrics)
          : new CopyOutRewriter(stream, state.services.engine, state.services.metrics, state.settings.dateStyle);
      }
      state.backendEvent();
      return undefined;
    };
    if (stream?.direction === 'in' && stream.target !== undefined) {
      const now = state.policiesNow();
      if (now !== undefined) return start(now);
      return state.policies().then(start);
    }
    return start(undefined);
  }
}
