/**
 * One session's search_path as the write path must assume it when it analyses a message.
 *
 * Changes count once the server confirmed them (CommandComplete), errors and ReadyForQuery
 * decide what a transaction end keeps (PathSettingsTracker). A message is analysed before the
 * replies to earlier ones have arrived (pipelining), so it is analysed on a projection: the
 * confirmed settings plus the effects still in flight, assumed to succeed. That assumption is
 * exact inside one failure domain — a Query message, or the extended messages up to Sync —
 * because a statement after a failed one there never runs. Across domains it is not (an earlier
 * implicit transaction may still roll back), so while an earlier domain that changed the settings
 * is unanswered, the path counts as unknown: the conservative reading, fail closed.
 *
 * PostgreSQL 18 reports search_path in ParameterStatus; when the server does, its report is the
 * truth at each ReadyForQuery, whatever code changed the path.
 */
import type { SessionEffect } from '../../sql/index.js';
import { parseSearchPath } from '../../sql/searchPathValue.js';
import { PathSettingsTracker, type PathSettings } from './searchPathSettings.js';

/** Effects of one statement sent to the server, awaiting its CommandComplete. */
export interface PendingEffects {
  readonly domain: number;
  readonly effects: readonly SessionEffect[];
}

export class SessionSearchPath {
  private readonly confirmed: PathSettingsTracker;
  private pending: PendingEffects[] = [];
  private lastDomain = 0;
  private extendedDomain: number | undefined;
  /** Every domain up to this one has been answered by ReadyForQuery. */
  private settledThrough = 0;
  /** Unanswered domains with a statement that changes path or role. */
  private readonly changing = new Set<number>();
  /** The server's last report (PostgreSQL 18+), applied at each ReadyForQuery. */
  private reportedPath: string | undefined;
  /** `reportedPath` parsed (undefined: not parsed yet; null: not a path pgveil reads). */
  private reportedNames: readonly string[] | null | undefined;
  /** Grows whenever `pending` changes (see `revision`). */
  private pendingChanges = 0;

  constructor(initial: PathSettings, reportedPath?: string) {
    this.confirmed = new PathSettingsTracker(initial);
    this.reportedPath = reportedPath;
  }

  /** A Query (or FunctionCall) message: a domain of its own; it also ends an unsynced extended one. */
  queryDomain(): number {
    this.extendedDomain = undefined;
    return ++this.lastDomain;
  }

  /** The domain of an extended-protocol message (Parse, Bind, Execute) before the next Sync. */
  messageDomain(): number {
    this.extendedDomain ??= ++this.lastDomain;
    return this.extendedDomain;
  }

  /** A Sync: ends the extended domain; its ReadyForQuery answers it. */
  syncDomain(): number {
    const domain = this.messageDomain();
    this.extendedDomain = undefined;
    return domain;
  }

  /** The domain of the latest message (for callers that do not track one). */
  get currentDomain(): number {
    return this.extendedDomain ?? this.lastDomain;
  }

  /**
   * Grows whenever `trackerFor` may answer differently: with equal revisions and equal `forgets`,
   * two calls give trackers with equal settings (callers keep what they built from one).
   */
  get revision(): number {
    // Both only grow, so their sum changes whenever either does.
    return this.confirmed.revision + this.pendingChanges;
  }

  /** True when a statement of `domain` is analysed on unknown settings (see the class comment). */
  forgets(domain: number): boolean {
    let earlierChanges = false;
    for (const changing of this.changing) if (changing < domain) earlierChanges = true;
    const earlierUnanswered = this.settledThrough < domain - 1;
    return earlierChanges || (earlierUnanswered && !this.confirmed.settled());
  }

  /** The settings to analyse a statement of `domain` with (a copy the caller may change). */
  trackerFor(domain: number): PathSettingsTracker {
    if (this.forgets(domain)) return this.confirmed.clone().forget();
    const projected = this.confirmed.clone();
    for (const pending of this.pending) projected.applyAll(pending.effects);
    return projected;
  }

  /** A statement with `effects` is forwarded in `domain`; keep the handle with its expected reply. */
  sent(domain: number, effects: readonly SessionEffect[]): PendingEffects | undefined {
    if (effects.length === 0) return undefined;
    const pending: PendingEffects = { domain, effects };
    this.pending.push(pending);
    this.pendingChanges++;
    if (effects.some((effect) => effect.kind !== 'transaction')) this.changing.add(domain);
    return pending;
  }

  /** CommandComplete of a statement sent with `sent`. */
  completed(pending: PendingEffects | undefined, commandTag: string): void {
    if (pending === undefined) return;
    const at = this.pending.indexOf(pending);
    if (at >= 0) this.pending.splice(at, 1);
    this.pendingChanges++;
    this.confirmed.applyAll(pending.effects, commandTag);
  }

  /** ErrorResponse: the transaction in progress is aborted. */
  failed(): void {
    this.confirmed.failed();
  }

  /** ParameterStatus search_path (PostgreSQL 18+). */
  reported(value: string): void {
    if (value === this.reportedPath) return;
    this.reportedPath = value;
    this.reportedNames = undefined;
  }

  /** ReadyForQuery answering the Query or Sync of `domain` (undefined: not known). */
  readyForQuery(status: string, domain: number | undefined): void {
    this.confirmed.readyForQuery(status);
    if (this.reportedPath !== undefined) {
      this.reportedNames ??= parseSearchPath(this.reportedPath) ?? null;
      if (this.reportedNames !== null) this.confirmed.reported(this.reportedNames);
    }
    if (domain !== undefined && domain > this.settledThrough) this.settledThrough = domain;
    // Statements of answered domains that never completed were skipped after an error.
    if (this.pending.length > 0) {
      const kept = this.pending.filter((pending) => pending.domain > this.settledThrough);
      if (kept.length !== this.pending.length) this.pendingChanges++;
      this.pending = kept;
    }
    if (this.changing.size > 0) for (const changing of this.changing) if (changing <= this.settledThrough) this.changing.delete(changing);
  }

  /** The confirmed settings (for tests and diagnostics). */
  get settings(): PathSettings {
    return this.confirmed.settings;
  }
}
