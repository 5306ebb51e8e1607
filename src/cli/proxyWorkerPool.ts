/**
 * The proxy workers of `pgveil serve` (`proxy.workers` above 1), kept by the primary: each is a
 * node:cluster worker with a fixed slot (0..N-1) that its backend keys carry, restarted with
 * backoff when it dies, and the relay of cancels and counted logins between them.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { CountedLogin } from '../auth/index.js';
import {
  asWorkerMessage, loginCountedMessage, WORKER_COUNT_ENV, WORKER_SLOT_ENV, type CancelMessage, type PrimaryMessage,
} from './workerMessages.js';

/** A worker alive this long has its restart delay reset. */
const STABLE_AFTER_MS = 30_000;
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 30_000;
/**
 * How long stop() waits for a worker after its SIGTERM before SIGKILL. A worker ends its sessions
 * within seconds (a client that does not close is cut after 2 s); one that is stuck (or stopped
 * with SIGSTOP) must not hold the primary, and its port, forever.
 */
export const WORKER_STOP_GRACE_MS = 10_000;

export class ProxyWorkerPool {
  private readonly workers = new Map<number, Worker>();
  private readonly quickDeaths = new Map<number, number>();
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** Workers still starting when a reload was asked: they reload once ready (their files may have been read before). */
  private readonly reloadWhenReady = new Set<Worker>();
  private readonly ready = new Set<Worker>();
  private stopping = false;
  private onAllStopped: (() => void) | undefined;

  /**
   * `onLoginCounted` hears of the logins a worker counted (the primary counts them too); the pool
   * itself passes them on to the other workers.
   */
  constructor(
    private readonly count: number,
    private readonly logger: Logger,
    private readonly args: readonly string[],
    private readonly onLoginCounted: (login: CountedLogin) => void = () => undefined,
  ) {}

  /** A login counted by the primary or by worker `fromSlot`, to every other worker alive. */
  shareLogin(login: CountedLogin, fromSlot?: number): void {
    const message = loginCountedMessage(login);
    for (const [slot, worker] of this.workers) if (slot !== fromSlot && worker.isConnected()) worker.send(message);
  }

  /** Forks every worker; resolves once each one's proxy listens, rejects if one stops while starting. */
  start(): Promise<void> {
    // Workers run this same program and command (the entry script and its Node options).
    cluster.setupPrimary({ args: [...this.args] });
    return new Promise((resolve, reject) => {
      let waiting = this.count;
      for (let slot = 0; slot < this.count; slot++) {
        this.fork(slot, {
          ready: () => { if (--waiting === 0) resolve(); },
          diedStarting: (code) => reject(new Error(`proxy worker ${slot} stopped while starting (exit code ${String(code)}); its messages above say why`)),
        });
      }
    });
  }

  /** Tells every worker to reload as on SIGHUP; one still starting does so once ready. */
  reload(): void {
    const message: PrimaryMessage = { kind: 'pgveil.reload' };
    for (const worker of this.workers.values()) {
      if (!this.ready.has(worker)) this.reloadWhenReady.add(worker);
      else if (worker.isConnected()) worker.send(message);
    }
  }

  /**
   * SIGTERM to every worker, started or still starting (each ends its sessions with 57P01);
   * SIGKILL to those still there after WORKER_STOP_GRACE_MS. Resolves once all exited.
   */
  stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    return new Promise((resolve) => {
      const grace = setTimeout(() => {
        for (const [slot, worker] of this.workers) {
          this.logger.error({ worker: slot, pid: worker.process.pid, graceMs: WORKER_STOP_GRACE_MS }, 'proxy worker did not stop after SIGTERM; killing it');
          worker.process.kill('SIGKILL');
        }
      }, WORKER_STOP_GRACE_MS);
      this.onAllStopped = () => {
        clearTimeout(grace);
        resolve();
      };
      for (const worker of this.workers.values()) worker.process.kill('SIGTERM');
      this.checkStopped();
    });
  }

  private checkStopped(): void {
    if (this.workers.size === 0) this.onAllStopped?.();
  }

  /** A cancel for a session of another worker: to that worker if it lives, else dropped. */
  private relayCancel(message: CancelMessage): void {
    const target = this.workers.get(message.workerSlot);
    if (target?.isConnected()) target.send(message);
  }

  private fork(slot: number, starting?: { ready: () => void; diedStarting: (code: number | null) => void }): void {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot), [WORKER_COUNT_ENV]: String(this.count) });
    const startedAt = Date.now();
    const pid = worker.process.pid;
    let ready = false;
    this.workers.set(slot, worker);
    worker.on('message', (raw: unknown) => {
      const message = asWorkerMessage(raw);
      if (message === undefined) return;
      if (message.kind === 'pgveil.ready') {
        ready = true;
        this.ready.add(worker);
        if (this.reloadWhenReady.delete(worker)) worker.send({ kind: 'pgveil.reload' } satisfies PrimaryMessage);
        this.logger.debug({ worker: slot, pid }, 'proxy worker ready');
        starting?.ready();
      } else if (message.kind === 'pgveil.login') {
        this.onLoginCounted(message.login);
        this.shareLogin(message.login, slot);
      } else {
        this.relayCancel(message);
      }
    });
    worker.on('exit', (code: number | null, signal: string | null) => {
      if (this.workers.get(slot) === worker) this.workers.delete(slot);
      this.ready.delete(worker);
      this.reloadWhenReady.delete(worker);
      if (this.stopping) {
        this.checkStopped();
        return;
      }
      if (!ready && starting !== undefined) {
        starting.diedStarting(code);
        return;
      }
      const deaths = Date.now() - startedAt > STABLE_AFTER_MS ? 0 : (this.quickDeaths.get(slot) ?? 0) + 1;
      this.quickDeaths.set(slot, deaths);
      const delayMs = Math.min(FIRST_RESTART_DELAY_MS * 2 ** deaths, MAX_RESTART_DELAY_MS);
      // Exit code and signal only: what the worker was doing stays in its own log lines.
      this.logger.error({ worker: slot, pid, code, signal, restartInMs: delayMs }, 'proxy worker stopped unexpectedly; restarting it');
      const timer = setTimeout(() => {
        this.restartTimers.delete(timer);
        if (!this.stopping) this.fork(slot);
      }, delayMs);
      this.restartTimers.add(timer);
    });
  }
}
