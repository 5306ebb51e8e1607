/**
 * How long a value the engine works on may be. Protection cost grows faster than linearly with a
 * value's length (a 3 MiB name took 14 s of one CPU), so a front door bounds it and the engine
 * refuses what passes a ceiling, instead of holding the process for one request.
 */

/** Default bound on a plaintext value, in UTF-8 bytes (about 5 ms of work at most). */
export const DEFAULT_MAX_VALUE_BYTES = 4096;

/** The longest token a value within `maxValueBytes` can become; longer input is no token of ours. */
export function maxTokenBytes(maxValueBytes: number): number {
  return 4 * maxValueBytes + 256;
}

/** Whether `value` is longer than `maxBytes` UTF-8 bytes, without encoding short values. */
export function isLongerThan(value: string, maxBytes: number): boolean {
  if (value.length * 3 <= maxBytes) return false;
  if (value.length > maxBytes) return true;
  return Buffer.byteLength(value, 'utf8') > maxBytes;
}

