/**
 * The session settings unqualified names depend on — search_path, the session user and SET ROLE —
 * followed with PostgreSQL's transaction semantics (its GUC stack): a SET inside a transaction
 * block lasts only if the block commits; SET LOCAL lasts until the transaction ends; ROLLBACK TO a
 * savepoint restores what was in force when the savepoint was set; an implicit transaction (a
 * multi-statement Query, or the messages up to Sync) commits at ReadyForQuery unless it failed.
 *
 * The tracker is fed with effects the server confirmed (CommandComplete), errors, and
 * ReadyForQuery statuses; clones of it project effects not yet confirmed. Pure, no I/O.
 */
import type { SessionEffect } from '../../sql/sessionEffects.js';

export type PathValue =
  | { readonly kind: 'names'; readonly names: readonly string[] }
  /** The session's initial default (server, database or role), as the catalog connection reads it. */
  | { readonly kind: 'default' }
  | { readonly kind: 'unknown' };

export type UserValue = { readonly kind: 'login' } | { readonly kind: 'named'; readonly name: string } | { readonly kind: 'unknown' };

export interface PathSettings {
  readonly path: PathValue;
  readonly sessionUser: UserValue;
  /** SET ROLE in force; null for none (the current user is then the session user). */
  readonly role: UserValue | null;
}

export const DEFAULT_PATH_SETTINGS: PathSettings = { path: { kind: 'default' }, sessionUser: { kind: 'login' }, role: null };

const UNKNOWN_USER: UserValue = { kind: 'unknown' };
const UNKNOWN_SETTINGS: PathSettings = { path: { kind: 'unknown' }, sessionUser: UNKNOWN_USER, role: UNKNOWN_USER };

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false; // asked at every ReadyForQuery: no closure
  return true;
}

interface Savepoint {
  readonly name: string;
  readonly current: PathSettings;
  readonly session: PathSettings;
}

interface OpenTransaction {
  /** What was in force when the transaction began (a rollback returns to it). */
  start: PathSettings;
  savepoints: Savepoint[];
  explicit: boolean;
  failed: boolean;
}

export class PathSettingsTracker {
  private current: PathSettings;
  /** What stays once the transaction commits (SET LOCAL changes `current` only). */
  private session: PathSettings;
  private transaction: OpenTransaction | undefined;
  private changes = 0;

  /** `initial` is what RESET returns to: the session's startup value. */
  constructor(private readonly initial: PathSettings) {
    this.current = initial;
    this.session = initial;
  }

  get settings(): PathSettings {
    return this.current;
  }

  /** Grows with every change (equal revisions of one tracker: equal settings and keys). */
  get revision(): number {
    return this.changes;
  }

  get inTransaction(): boolean {
    return this.transaction !== undefined;
  }

  clone(): PathSettingsTracker {
    const copy = new PathSettingsTracker(this.initial);
    copy.current = this.current;
    copy.session = this.session;
    if (this.transaction !== undefined) copy.transaction = { ...this.transaction, savepoints: [...this.transaction.savepoints] };
    return copy;
  }

  /** Everything that decides what later statements resolve to (an analysis cache key part). */
  key(): string {
    return JSON.stringify([this.initial, this.current, this.session, this.transaction ?? null]);
  }

  /** True when no transaction outcome can change the current settings (commit and rollback agree). */
  settled(): boolean {
    const transaction = this.transaction;
    if (transaction === undefined) return true;
    const now = JSON.stringify(this.current);
    const same = (settings: PathSettings): boolean => JSON.stringify(settings) === now;
    return same(this.session) && same(transaction.start) && transaction.savepoints.every((point) => same(point.current) && same(point.session));
  }

  /** Makes every value this tracker holds unknown: what pgveil assumes when it cannot follow the session. */
  forget(): this {
    this.changes++;
    this.current = UNKNOWN_SETTINGS;
    this.session = UNKNOWN_SETTINGS;
    if (this.transaction !== undefined) {
      this.transaction.start = UNKNOWN_SETTINGS;
      this.transaction.savepoints = this.transaction.savepoints.map((point) => ({ name: point.name, current: UNKNOWN_SETTINGS, session: UNKNOWN_SETTINGS }));
    }
    return this;
  }

  applyAll(effects: readonly SessionEffect[], commandTag?: string): this {
    for (const effect of effects) this.apply(effect, commandTag);
    return this;
  }

  /** Applies one effect of a statement that completed (`commandTag`: its CommandComplete tag). */
  apply(effect: SessionEffect, commandTag?: string): void {
    this.changes++;
    const initial = this.initial;
    switch (effect.kind) {
      case 'set-path': return this.set({ path: { kind: 'names', names: effect.names } }, effect.local);
      case 'reset-path': return this.set({ path: initial.path }, effect.local);
      case 'set-role': return this.set({ role: effect.role === null ? null : { kind: 'named', name: effect.role } }, effect.local);
      case 'reset-role': return this.set({ role: initial.role }, effect.local);
      case 'set-session-user':
        return this.set({ sessionUser: effect.user === null ? initial.sessionUser : { kind: 'named', name: effect.user }, role: null }, effect.local);
      case 'discard-all': return this.set({ path: initial.path, sessionUser: initial.sessionUser, role: null }, false);
      case 'unknown': return this.set(UNKNOWN_SETTINGS, false);
      case 'transaction': return this.transactionEffect(effect.action, effect.savepoint ?? '', effect.chain === true, commandTag);
    }
  }

  /** An ErrorResponse: the transaction in progress (explicit or implicit) is aborted. */
  failed(): void {
    if (this.transaction === undefined || this.transaction.failed) return;
    this.changes++;
    this.transaction.failed = true;
  }

  /** ReadyForQuery: I idle, T in a transaction block, E in a failed one. */
  readyForQuery(status: string): void {
    const transaction = this.transaction;
    if (status === 'I') {
      if (transaction === undefined) return;
      this.changes++;
      if (transaction.explicit && !transaction.failed && !this.settled()) {
        // The block ended without a COMMIT or ROLLBACK pgveil saw (a procedure's own COMMIT):
        // which of the values survived is unknown.
        this.transaction = undefined;
        this.current = UNKNOWN_SETTINGS;
        this.session = UNKNOWN_SETTINGS;
        return;
      }
      this.end(!transaction.failed);
      return;
    }
    if (transaction?.explicit === true && transaction.failed === (status === 'E')) return;
    this.changes++;
    this.open().explicit = true;
    (this.transaction as OpenTransaction).failed = status === 'E';
  }

  /** The server's own report of the current search_path (ParameterStatus, PostgreSQL 18+). */
  reported(names: readonly string[]): void {
    const path = this.current.path;
    // The same report again (every ReadyForQuery repeats it) changes nothing.
    if (path.kind === 'names' && sameNames(path.names, names) && (this.transaction !== undefined || this.session === this.current)) return;
    this.changes++;
    this.current = { ...this.current, path: { kind: 'names', names } };
    if (this.transaction === undefined) this.session = this.current;
  }

  private open(): OpenTransaction {
    this.transaction ??= { start: this.current, savepoints: [], explicit: false, failed: false };
    return this.transaction;
  }

  private set(change: Partial<PathSettings>, local: boolean): void {
    // Every statement runs in a transaction: one opened here is implicit until a BEGIN says otherwise.
    this.open();
    this.current = { ...this.current, ...change };
    if (!local) this.session = { ...this.session, ...change };
  }

  private end(commit: boolean): void {
    const transaction = this.transaction;
    if (transaction === undefined) return;
    if (!commit) this.session = transaction.start;
    this.current = this.session;
    this.transaction = undefined;
  }

  private transactionEffect(action: string, savepoint: string, chain: boolean, commandTag: string | undefined): void {
    const transaction = this.transaction;
    switch (action) {
      case 'begin':
        this.open().explicit = true;
        return;
      case 'commit':
      case 'prepare':
        // COMMIT of a failed block answers ROLLBACK; so does a PREPARE TRANSACTION that failed.
        this.end(commandTag !== 'ROLLBACK');
        break;
      case 'rollback':
        this.end(false);
        break;
      case 'savepoint':
        transaction?.savepoints.push({ name: savepoint, current: this.current, session: this.session });
        return;
      case 'release':
      case 'rollback-to': {
        if (transaction === undefined) return;
        const at = transaction.savepoints.map((point) => point.name).lastIndexOf(savepoint);
        if (at < 0) return;
        if (action === 'release') {
          transaction.savepoints.length = at;
          return;
        }
        const point = transaction.savepoints[at] as Savepoint;
        transaction.savepoints.length = at + 1; // the savepoint itself stays
        this.current = point.current;
        this.session = point.session;
        transaction.failed = false;
        return;
      }
      default:
        return;
    }
    if (chain) this.open().explicit = true;
  }
}
