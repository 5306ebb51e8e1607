/**
 * The process id pgveil gives clients in BackendKeyData says where the session lives, so a
 * CancelRequest landing anywhere can be routed (as PgBouncer's peer_id does):
 *
 *   bit 31      0 in every key pgveil issues; set on a cancel one instance forwards to another,
 *               so it is never forwarded again (PostgreSQL's own process ids are never negative)
 *   bits 30-25  peer id of the instance (0 without peering, 1..63 with `proxy.peers`)
 *   bits 24-18  worker slot inside the instance (0..127)
 *   bits 17-0   session number, random among the free ones of that worker
 *
 * The secret key stays 32 random bits, checked only by the worker that holds the session.
 */
export const MAX_PEER_ID = 63;
export const MAX_WORKERS = 128;
export const SESSION_BITS = 18;
export const MAX_SESSION_NUMBER = (1 << SESSION_BITS) - 1;
const WORKER_SHIFT = SESSION_BITS;
const PEER_SHIFT = SESSION_BITS + 7;
const FORWARDED_BIT = 0x80000000;

export interface BackendKeyOwner {
  /** The pgveil instance (`proxy.peerId`). */
  readonly peerId: number;
  /** The worker inside it. */
  readonly workerSlot: number;
}

export interface DecodedProcessId extends BackendKeyOwner {
  readonly sessionNumber: number;
  /** Set by an instance that forwarded the cancel to its owner. */
  readonly forwarded: boolean;
}

export function encodeProcessId(owner: BackendKeyOwner, sessionNumber: number): number {
  if (!Number.isInteger(owner.peerId) || owner.peerId < 0 || owner.peerId > MAX_PEER_ID) throw new RangeError('peer id out of range');
  if (!Number.isInteger(owner.workerSlot) || owner.workerSlot < 0 || owner.workerSlot >= MAX_WORKERS) throw new RangeError('worker slot out of range');
  if (!Number.isInteger(sessionNumber) || sessionNumber < 0 || sessionNumber > MAX_SESSION_NUMBER) throw new RangeError('session number out of range');
  return (owner.peerId << PEER_SHIFT) | (owner.workerSlot << WORKER_SHIFT) | sessionNumber;
}

/** Reads a process id as sent in a CancelRequest (a signed 32-bit integer on the wire). */
export function decodeProcessId(processId: number): DecodedProcessId {
  const bits = processId >>> 0;
  return {
    forwarded: (bits & FORWARDED_BIT) !== 0,
    peerId: (bits >>> PEER_SHIFT) & MAX_PEER_ID,
    workerSlot: (bits >>> WORKER_SHIFT) & (MAX_WORKERS - 1),
    sessionNumber: bits & MAX_SESSION_NUMBER,
  };
}

/** The process id an instance forwards to the owner: the same key, marked as forwarded (signed, as written on the wire). */
export function markForwarded(processId: number): number {
  return (processId | FORWARDED_BIT) | 0;
}

/** The issued process id a forwarded one came from. */
export function withoutForwardMark(processId: number): number {
  return (processId >>> 0) & ~FORWARDED_BIT;
}
