/**
 * Rows (or COPY data) held back until a batch is full or their result ends, then rewritten
 * together: one engine call per column for the whole batch rather than one per row. A batch
 * holds the rows of one result, planned under one plan: the latest, when the policies changed
 * while they were held.
 */
import { DROP } from '../../session/sessionHooks.js';

/**
 * A batch is handed over once it holds this many rows or bytes. Rows come in runs (a chunk's worth,
 * at most a socket read), so a batch may pass either bound by the last run it took: memory stays
 * within BATCH_BYTES and one read, and the rewrite still yields the loop every 512 values.
 */
const BATCH_ROWS = 2048;
const BATCH_BYTES = 1 << 20;

/** Rewrites a batch of held frames (`rows` rows in all); returns them, in order, as one buffer. */
export type Rewrite = (frames: Buffer[], rows: number) => Promise<Buffer>;

export class HeldBatch {
  private frames: Buffer[] = [];
  /** The rows the held frames hold (a DataRow frame may hold several back to back). */
  private rows = 0;
  private bytes = 0;
  private rewrite: Rewrite | undefined;
  /** What the held frames were planned under: a result plan, or a COPY's rewriter. */
  private plannedUnder: object | undefined;

  get isEmpty(): boolean {
    return this.frames.length === 0;
  }

  /** True when frames are held that were planned under something else than `plan` (undefined: no plan). */
  holdsOtherThan(plan: object | undefined): boolean {
    return this.frames.length > 0 && this.plannedUnder !== plan;
  }

  /**
   * Holds a frame of `rows` messages planned under `plan`; the first frame of a batch brings its
   * rewrite (`rewriteFor`, asked once per batch). Hands the batch over once it is full, else DROP.
   */
  hold(frame: Buffer, rows: number, plan: object, rewriteFor: (plan: object) => Rewrite): Buffer | Promise<Buffer> {
    if (this.frames.length === 0) {
      this.rewrite = rewriteFor(plan);
      this.plannedUnder = plan;
    }
    this.frames.push(frame);
    this.rows += rows;
    this.bytes += frame.length;
    if (this.rows < BATCH_ROWS && this.bytes < BATCH_BYTES) return DROP;
    return this.flush();
  }

  /**
   * Plans the held frames again (the policies changed while they were held): they leave under
   * `plan`'s rewrite, or as they are when `plan` is undefined.
   */
  replan(plan: object | undefined, rewriteFor: (plan: object) => Rewrite): void {
    this.rewrite = plan === undefined ? undefined : rewriteFor(plan);
    this.plannedUnder = plan;
  }

  /** The held frames, rewritten, as one buffer; the batch is empty again. */
  async flush(): Promise<Buffer> {
    const { frames, rows, rewrite } = this;
    this.frames = [];
    this.rows = 0;
    this.bytes = 0;
    this.rewrite = undefined;
    this.plannedUnder = undefined;
    if (rewrite === undefined || frames.length === 0) return Buffer.concat(frames);
    return rewrite(frames, rows);
  }
}
