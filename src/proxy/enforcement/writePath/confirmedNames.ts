/**
 * Named objects the server holds for a session (prepared statements, portals), as the server
 * confirmed them. A message that would define or remove one is only a pending change until its
 * reply: a failed Parse leaves the statement of that name as it was on the server, so pgveil's
 * view may change on ParseComplete, BindComplete, CloseComplete or a command's completion, never
 * when the message is sent.
 *
 * A message that uses a name while changes to it are pending may meet any of several values when
 * it runs. `candidates` lists them: a change sent in the same batch (no Sync between the two) has
 * certainly succeeded if the later message runs at all, since after an error the server skips
 * every message up to Sync; a change in an earlier, unanswered batch may have succeeded, failed
 * or been skipped.
 */

export type ChangeOutcome = 'done' | 'failed' | 'skipped';

/** Removes every name (DEALLOCATE ALL, DISCARD ALL). */
export const EVERY_NAME = Symbol('every name');

export interface PendingChange<T> {
  readonly name: string | typeof EVERY_NAME;
  /** What the name holds afterwards; undefined: nothing (a removal). */
  readonly value: T | undefined;
  /** The batch (Sync-delimited group of messages) it was sent in. */
  readonly batch: number;
  /** pgveil forwarded, in its place, a message that fails. */
  readonly doomed: boolean;
  /** A failure still removes what the name held (the server drops the unnamed statement before parsing). */
  readonly failureClears: boolean;
  settled: boolean;
}

export interface ChangeOptions {
  readonly doomed?: boolean;
  readonly failureClears?: boolean;
}

export class ConfirmedNames<T> {
  /** The unnamed statement or portal, most clients' usual one, kept apart from the map: no map work per transaction. */
  private unnamed: T | undefined;
  private readonly confirmed = new Map<string, T>();
  private pending: PendingChange<T>[] = [];

  /** A change sent now; `settle` it when the server answers (or skips) the message. */
  change(name: string | typeof EVERY_NAME, value: T | undefined, batch: number, options: ChangeOptions = {}): PendingChange<T> {
    const change: PendingChange<T> = {
      name, value, batch, doomed: options.doomed === true, failureClears: options.failureClears === true, settled: false,
    };
    this.pending.push(change);
    return change;
  }

  /**
   * True when removing `name` now would change nothing, whatever the server answers: it holds
   * nothing and no change to it is pending (a removal would only add `undefined` to candidates
   * that already hold it).
   */
  holdsNothing(name: string): boolean {
    if (this.confirmedValue(name) !== undefined) return false;
    for (const change of this.pending) if (!change.settled && (change.name === name || change.name === EVERY_NAME)) return false;
    return true;
  }

  settle(change: PendingChange<T>, outcome: ChangeOutcome): void {
    if (change.settled) return;
    change.settled = true;
    if (outcome === 'done' && !change.doomed) {
      if (change.name === EVERY_NAME) this.clearConfirmed();
      else this.confirm(change.name, change.value);
    } else if (outcome !== 'skipped' && change.failureClears && change.name !== EVERY_NAME) {
      this.confirm(change.name, undefined);
    }
    while (this.pending[0]?.settled === true) this.pending.shift();
    if (this.pending.length > 64 && this.pending.every((c) => c.settled)) this.pending = [];
  }

  private confirm(name: string, value: T | undefined): void {
    if (name === '') this.unnamed = value;
    else if (value === undefined) this.confirmed.delete(name);
    else this.confirmed.set(name, value);
  }

  private confirmedValue(name: string): T | undefined {
    return name === '' ? this.unnamed : this.confirmed.get(name);
  }

  /** Forgets every confirmed name (portals, at the end of a transaction); pending changes stay. */
  clearConfirmed(): void {
    this.unnamed = undefined;
    // Map.clear allocates a new table, and this runs at every transaction's end.
    const confirmed = this.confirmed;
    if (confirmed.size === 0) return;
    if (confirmed.size > 4) confirmed.clear();
    else for (const name of confirmed.keys()) confirmed.delete(name);
  }

  /**
   * What the name holds when a message of `batch` sent now runs, if that is one thing for sure
   * (`candidates` has one entry); undefined otherwise. Allocates nothing in the usual cases.
   */
  certain(name: string, batch: number): T | undefined {
    let value = this.confirmedValue(name);
    for (const change of this.pending) {
      if (change.settled || (change.name !== name && change.name !== EVERY_NAME)) continue;
      if (change.doomed) {
        if (change.failureClears) value = undefined;
      } else if (change.batch === batch) {
        value = change.name === EVERY_NAME ? undefined : change.value;
      } else {
        const candidates = this.candidates(name, batch); // a change of an earlier batch: possibly several
        return candidates.length === 1 ? candidates[0] : undefined;
      }
    }
    return value;
  }

  /** What the name may hold when a message of `batch` sent now runs; undefined: nothing. */
  candidates(name: string, batch: number): (T | undefined)[] {
    if (this.pending.length === 0) return [this.confirmedValue(name)];
    let values: (T | undefined)[] = [this.confirmedValue(name)];
    for (const change of this.pending) {
      if (change.settled || (change.name !== name && change.name !== EVERY_NAME)) continue;
      const after = change.name === EVERY_NAME ? undefined : change.value;
      if (change.doomed) {
        if (change.failureClears) values = [undefined];
      } else if (change.batch === batch) {
        values = [after];
      } else {
        values = [...values, after];
        if (change.failureClears) values.push(undefined);
      }
    }
    return values.length === 1 ? values : [...new Set(values)];
  }
}
