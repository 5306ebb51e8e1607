/** Where progress goes: a terminal redraws one line; anything else gets plain periodic lines. */
export interface ProgressSink {
  /** True on a TTY: the line is redrawn in place with `\r`. */
  readonly live: boolean;
  /** Writes text as is (live) or one line (not live). */
  write(text: string): void;
}

export interface ProgressDisplayOptions {
  /** What is being walked, at the start of each line: `public.customers`. */
  readonly label: string;
  /** Rows in the table (an estimate on large tables). */
  readonly total: number;
  /** Rows a resumed walk had already done. */
  readonly startDone: number;
  /** Plain lines at most this often. Default 5 s. */
  readonly intervalMs?: number;
  readonly now?: () => number;
}

/** A live line is redrawn at most this often: a fast walk must not flood the terminal. */
const LIVE_REDRAW_MS = 200;

const grouped = new Intl.NumberFormat('en-US');

/** `42s`, `3m05s`, `2h07m`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Rows done / total, rows per second and time left, for one walk. */
export class ProgressDisplay {
  private readonly now: () => number;
  private readonly started: number;
  private lastShown = Number.NEGATIVE_INFINITY;
  private done: number;

  constructor(private readonly sink: ProgressSink, private readonly opts: ProgressDisplayOptions) {
    this.now = opts.now ?? Date.now;
    this.started = this.now();
    this.done = opts.startDone;
  }

  /** The line for `done` rows at the current time. */
  line(): string {
    const elapsed = (this.now() - this.started) / 1000;
    const rate = elapsed > 0 ? (this.done - this.opts.startDone) / elapsed : 0;
    // Rows written since the estimate can take the walk past it; the total then grows with it.
    const total = Math.max(this.opts.total, this.done);
    const percent = total > 0 ? Math.floor((this.done / total) * 100) : 100;
    const left = rate > 0 ? formatDuration((total - this.done) / rate) : '?';
    return `${this.opts.label}: ${grouped.format(this.done)} / ${grouped.format(total)} rows (${percent}%), `
      + `${grouped.format(Math.round(rate))} rows/s, ${left} left`;
  }

  /** After each batch: the walk has now done `done` rows in all. */
  update(done: number): void {
    this.done = done;
    const now = this.now();
    const every = this.sink.live ? LIVE_REDRAW_MS : (this.opts.intervalMs ?? 5000);
    if (now - this.lastShown < every) return;
    this.lastShown = now;
    this.show();
  }

  /** The final state, and the end of the live line. */
  finish(): void {
    this.show();
    if (this.sink.live) this.sink.write('\n');
  }

  private show(): void {
    // \x1b[K clears what a longer previous line left on the right.
    this.sink.write(this.sink.live ? `\r${this.line()}\x1b[K` : this.line());
  }
}
