/**
 * Which message types each side may send once a session runs, and how long each may be:
 * a table indexed by the type byte, 0 meaning "not a valid type". Mirrors PostgreSQL, which caps
 * small control messages at 10 000 bytes and the rest at 1 GiB - 1.
 */

export const SMALL_MESSAGE_LIMIT = 10_000;
export const POSTGRES_LARGE_MESSAGE_LIMIT = 0x3fffffff - 1;

function table(entries: ReadonlyArray<readonly [string, number]>): Uint32Array {
  const limits = new Uint32Array(256);
  for (const [types, limit] of entries) {
    for (const type of types) limits[type.charCodeAt(0)] = limit;
  }
  return limits;
}

/** Limits for messages from clients: Query, Parse, Bind, FunctionCall and COPY data may be large. */
export function frontendMessageLimits(maxMessageBytes: number): Uint32Array {
  return table([
    ['QPBFdcf', maxMessageBytes],
    ['CDEHSX', SMALL_MESSAGE_LIMIT],
  ]);
}

/** Limits for messages from PostgreSQL: any length its framing allows; the types are still checked. */
export function backendMessageLimits(): Uint32Array {
  return table([['123ACDEGHIKNRSTVWZcdnstv', 0x7fffffff]]);
}

/** 1 for each type letter in `types`, for fast lookups on the relay path. */
export function typeSet(types: string): Uint8Array {
  const set = new Uint8Array(256);
  for (const type of types) set[type.charCodeAt(0)] = 1;
  return set;
}
