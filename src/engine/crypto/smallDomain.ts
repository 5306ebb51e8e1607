import { createCipheriv, createHmac, type KeyObject } from 'node:crypto';

/**
 * A keyed pseudo-random permutation of a whole small domain [0, size), for domains too small for
 * FF1 (SP 800-38G Rev.1 wants >= 10^6): the whole table is shuffled by Fisher-Yates, with
 * unbiased indexes (rejection sampling) drawn from an AES-256-CTR keystream. The keystream key is
 * HMAC-SHA-512(key, label || size || tweak), so another key, tweak or size gives an unrelated
 * permutation. Intended for MIN_DOMAIN <= size < 10^6; a table of 10^6 (forward and inverse)
 * takes 8 MiB and builds in about 20-40 ms.
 */
export interface PermutationTable {
  readonly size: number;
  /** forward[x] is the image of x. */
  readonly forward: Uint32Array;
  /** inverse[forward[x]] === x. */
  readonly inverse: Uint32Array;
}

export type PermutationKey = Uint8Array | KeyObject;

/** The largest table this module builds (forward + inverse = 128 MiB at this size). */
export const MAX_PERMUTATION_SIZE = 2 ** 24;
export const DEFAULT_CACHE_ENTRIES = 16 * 1024 * 1024;

const DERIVATION_LABEL = Buffer.from('pgveil/small-domain-permutation/v1\u0000', 'utf8');
const KEYSTREAM_CHUNK_BYTES = 64 * 1024;

interface TableSeed {
  /** AES-256-CTR key of the shuffle's keystream. */
  readonly streamKey: Buffer;
  /** Names the table in a cache without revealing the key: the other half of the HMAC. */
  readonly id: string;
}

function deriveSeed(key: PermutationKey, size: number, tweak: Uint8Array): TableSeed {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(tweak.length, 4);
  const digest = createHmac('sha512', key).update(DERIVATION_LABEL).update(header).update(tweak).digest();
  return { streamKey: digest.subarray(0, 32), id: digest.toString('hex', 32, 64) };
}

/** Uniform 32-bit words from AES-256-CTR over zeros, read little-endian (same on every platform). */
class KeystreamWords {
  private readonly cipher: ReturnType<typeof createCipheriv>;
  private readonly zeros: Buffer;
  private chunk: Buffer = Buffer.alloc(0);
  private offset = 0;

  /** `expectedWords`: sizes the chunks so a small table does not pay for a 64 KiB one. */
  constructor(streamKey: Buffer, expectedWords: number) {
    this.cipher = createCipheriv('aes-256-ctr', streamKey, Buffer.alloc(16));
    const chunkBytes = Math.min(KEYSTREAM_CHUNK_BYTES, Math.ceil((expectedWords * 4 + 1) / 16) * 16);
    this.zeros = Buffer.alloc(chunkBytes);
  }

  next(): number {
    if (this.offset >= this.chunk.length) {
      this.chunk = this.cipher.update(this.zeros);
      this.offset = 0;
    }
    const c = this.chunk;
    const o = this.offset;
    this.offset = o + 4;
    return ((c[o] as number) | ((c[o + 1] as number) << 8) | ((c[o + 2] as number) << 16) | ((c[o + 3] as number) << 24)) >>> 0;
  }
}

function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > MAX_PERMUTATION_SIZE) {
    throw new RangeError(`a permutation domain size is an integer from 1 to ${MAX_PERMUTATION_SIZE}; got ${String(size)}`);
  }
}

function shuffle(seed: TableSeed, size: number): PermutationTable {
  // Rejection keeps more than half of the draws: about 2 words per entry at worst.
  const words = new KeystreamWords(seed.streamKey, 2 * size);
  const forward = new Uint32Array(size);
  for (let x = 0; x < size; x++) forward[x] = x;
  // Uniform j in [0, i]: draw under the smallest all-ones mask covering i, reject above i.
  let mask = size > 1 ? (2 ** (32 - Math.clz32(size - 1)) - 1) >>> 0 : 0;
  for (let i = size - 1; i > 0; i--) {
    while (mask >>> 1 >= i) mask >>>= 1;
    let j: number;
    do j = (words.next() & mask) >>> 0; while (j > i);
    const swap = forward[i] as number;
    forward[i] = forward[j] as number;
    forward[j] = swap;
  }
  const inverse = new Uint32Array(size);
  for (let x = 0; x < size; x++) inverse[forward[x] as number] = x;
  return { size, forward, inverse };
}

/** Builds the table for (key, size, tweak) without caching it. */
export function buildPermutationTable(key: PermutationKey, size: number, tweak: Uint8Array): PermutationTable {
  checkSize(size);
  return shuffle(deriveSeed(key, size, tweak), size);
}

/**
 * Thrown by a cache miss once the current allowance of new tables is spent: a caller that runs a
 * batch in slices catches it, lets the event loop turn, and runs the slice again, so no slice
 * builds more than its allowance of tables (each up to some 20 ms) at once.
 */
export class TableBuildDeferred extends Error {
  constructor() {
    super('a permutation table build was deferred to a later turn of the event loop');
    this.name = 'TableBuildDeferred';
  }
}

let buildAllowance = Number.POSITIVE_INFINITY;
let builds = 0;

/** Tables built by this process so far (a slice runner compares it before and after). */
export function permutationTableBuilds(): number {
  return builds;
}

/** Runs `work` with at most `builds` new tables; one more miss throws TableBuildDeferred. */
export function withTableBuildAllowance<T>(builds: number, work: () => T): T {
  const outer = buildAllowance;
  buildAllowance = builds;
  try {
    return work();
  } finally {
    buildAllowance = outer;
  }
}

/**
 * Least-recently-used tables, bounded by their total entries (forward + inverse). Keyed by a
 * digest of (key, size, tweak), so ciphers with different keys can share one cache safely.
 */
export class PermutationTableCache {
  private readonly tables = new Map<string, PermutationTable>();
  private entries = 0;

  constructor(readonly maxEntries: number = DEFAULT_CACHE_ENTRIES) {}

  get(key: PermutationKey, size: number, tweak: Uint8Array): PermutationTable {
    checkSize(size);
    const seed = deriveSeed(key, size, tweak);
    const hit = this.tables.get(seed.id);
    if (hit) {
      // Re-insert: a Map iterates in insertion order, so the oldest entry is the first.
      this.tables.delete(seed.id);
      this.tables.set(seed.id, hit);
      return hit;
    }
    if (buildAllowance <= 0) throw new TableBuildDeferred();
    buildAllowance--;
    builds++;
    const table = shuffle(seed, size);
    this.tables.set(seed.id, table);
    this.entries += 2 * size;
    for (const [id, old] of this.tables) {
      if (this.entries <= this.maxEntries || old === table) break;
      this.tables.delete(id);
      this.entries -= 2 * old.size;
    }
    return table;
  }

  /** Number of cached tables and their total entries, for tests and metrics. */
  get stats(): { tables: number; entries: number } {
    return { tables: this.tables.size, entries: this.entries };
  }

  clear(): void {
    this.tables.clear();
    this.entries = 0;
  }
}

/** The process-wide cache that ciphers use unless given another. */
export const sharedPermutationTables = new PermutationTableCache();
