/**
 * Messages between `pgveil serve`'s primary and its proxy workers (node:cluster IPC). A cancel's
 * secret crosses only this channel between processes of one instance, and is checked only by the
 * worker holding the session. Counted logins go to the primary, which counts them too (its API
 * shares the budget) and passes them to the other workers: one instance, one failed-login budget.
 */
import type { CountedLogin } from '../auth/index.js';

export type PrimaryMessage =
  /** Reload as on SIGHUP (configuration and policies). Stopping is SIGTERM, as for a lone process. */
  | { readonly kind: 'pgveil.reload' }
  | CancelMessage
  | LoginCountedMessage;

export type WorkerMessage =
  /** The worker's proxy listens. */
  | { readonly kind: 'pgveil.ready' }
  | CancelMessage
  | LoginCountedMessage;

/** A login another process of this instance counted (a wrong password, or a right one). */
export interface LoginCountedMessage {
  readonly kind: 'pgveil.login';
  readonly login: CountedLogin;
}

/** A CancelRequest that landed on one worker for a session of `workerSlot`. */
export interface CancelMessage {
  readonly kind: 'pgveil.cancel';
  readonly workerSlot: number;
  readonly processId: number;
  /** The secret key as sent, base64. */
  readonly secretKey: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isCancel(value: Record<string, unknown>): boolean {
  return value['kind'] === 'pgveil.cancel' && Number.isInteger(value['workerSlot']) && Number.isInteger(value['processId'])
    && typeof value['secretKey'] === 'string';
}

/** Emails are at most 254 characters and addresses far shorter: longer is not one of ours. */
const MAX_LOGIN_FIELD = 1024;

function isLoginField(value: unknown): boolean {
  return typeof value === 'string' && value.length <= MAX_LOGIN_FIELD;
}

function isLoginCounted(value: Record<string, unknown>): boolean {
  const login = value['login'];
  return value['kind'] === 'pgveil.login' && isRecord(login) && (login['outcome'] === 'failure' || login['outcome'] === 'success')
    && isLoginField(login['account']) && (login['client'] === undefined || isLoginField(login['client']));
}

export function asPrimaryMessage(value: unknown): PrimaryMessage | undefined {
  if (!isRecord(value)) return undefined;
  if (value['kind'] === 'pgveil.reload' || isCancel(value) || isLoginCounted(value)) return value as unknown as PrimaryMessage;
  return undefined;
}

export function asWorkerMessage(value: unknown): WorkerMessage | undefined {
  if (!isRecord(value)) return undefined;
  if (value['kind'] === 'pgveil.ready' || isCancel(value) || isLoginCounted(value)) return value as unknown as WorkerMessage;
  return undefined;
}

export function cancelMessage(workerSlot: number, processId: number, secretKey: Buffer): CancelMessage {
  return { kind: 'pgveil.cancel', workerSlot, processId, secretKey: secretKey.toString('base64') };
}

export function loginCountedMessage(login: CountedLogin): LoginCountedMessage {
  return { kind: 'pgveil.login', login };
}

/** The environment variable that makes a forked `pgveil serve` a proxy worker, holding its slot. */
export const WORKER_SLOT_ENV = 'PGVEIL_WORKER_SLOT';
/** And the number of workers the primary runs (slots 0 to this - 1). */
export const WORKER_COUNT_ENV = 'PGVEIL_WORKER_COUNT';
