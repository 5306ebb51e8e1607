/**
 * The shape of a statement text with its constants taken out: `SELECT x FROM t WHERE id = 42` and
 * `… id = 7` share one. Statements that differ only in their constants parse to the same tree but
 * for those constants, so an analysis that no constant can have changed may be reused for every
 * text of the shape — the analysis cache's second key, for the many texts that inline their values.
 *
 * Only simple texts get a shape (everything else is analysed as before, fail closed):
 * - one SELECT, INSERT, UPDATE or DELETE (a trailing semicolon allowed), no SELECT … INTO;
 * - constants that are plain 'strings' (with '' inside) or unsigned numbers (`12`, `1.5`; no dot
 *   against them, as in `12.` or `.5`); no $n or $$ quoting,
 *   no E'', U&'', B'', X'' or N'' strings, no comments;
 * - no word (outside strings) among `deniedWords`: the names whose calls or mentions the analysis
 *   reads constants of (set_config, functions that run SQL text…).
 * The caller also requires that the text names no protected table and that the analysis it reuses
 * found nothing that a constant could have decided.
 *
 * One pass over the text, no regular expressions: the cost is linear in its length. The key is
 * hashed during that pass; the key itself is built only when asked for.
 */

export interface LiteralShape {
  /** The text with each string constant replaced by `$s` and each number by `$n` (built when asked: lookups use `hash`). */
  readonly key: string;
  /** A hash of `key`, computed during the scan: a lookup by it hashes no string and builds no key (matchesShape confirms). */
  readonly hash: number;
  /** Byte length of the text (a reused analysis's statement range is moved by the difference). */
  readonly byteLength: number;
  /** Byte offset of each constant, in order (offsets in a reused analysis are moved to these). */
  readonly constantOffsets: readonly number[];
  /** UTF-16 start and end (exclusive) of each constant in the text. */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /**
   * A string constant was taken out. Without one, two texts of a shape differ only in digit runs
   * that touch no word: they hold the same words, quoted names and punctuation.
   */
  readonly hasStrings: boolean;
}

/**
 * What a kept shape is compared by: the text between its constants and their kinds — none of the
 * constants' values (as code units, not strings: a slice would keep the whole first text alive).
 */
export interface ShapePattern {
  readonly hash: number;
  /** The code units of the text outside constants, part after part. */
  readonly codes: Uint16Array;
  /** Each part's length: part k precedes constant k; the last part follows the last constant. */
  readonly partLengths: readonly number[];
  /** Per constant, whether it is a string (else a number). */
  readonly strings: readonly boolean[];
}

const SMALL_INTEGER_BITS = 0x3fffffff;
const STRING_MARK = 0x7f01;
const NUMBER_MARK = 0x7f02;

/** The hash of `text` from `from` to `to`, continued from `hash`, code unit by code unit. */
function hashRange(hash: number, text: string, from: number, to: number): number {
  let h = hash;
  for (let at = from; at < to; at++) h = (Math.imul(h, 31) + text.charCodeAt(at)) | 0;
  return h;
}

class ScannedShape implements LiteralShape {
  constructor(
    private readonly sql: string, readonly hash: number, readonly byteLength: number, readonly constantOffsets: readonly number[],
    readonly starts: readonly number[], readonly ends: readonly number[], readonly hasStrings: boolean,
  ) {}

  get key(): string {
    const { sql, starts, ends } = this;
    let key = '';
    let from = 0;
    for (let k = 0; k < starts.length; k++) {
      const start = starts[k] as number;
      key += sql.slice(from, start) + (sql.charCodeAt(start) === 0x27 ? '$s' : '$n');
      from = ends[k] as number;
    }
    return key + sql.slice(from);
  }
}

/** The pattern a shape is kept by. */
export function shapePattern(sql: string, shape: LiteralShape): ShapePattern {
  const partLengths: number[] = [];
  const codes: number[] = [];
  let from = 0;
  for (let k = 0; k <= shape.starts.length; k++) {
    const to = k < shape.starts.length ? shape.starts[k] as number : sql.length;
    for (let at = from; at < to; at++) codes.push(sql.charCodeAt(at));
    partLengths.push(to - from);
    from = shape.ends[k] ?? to;
  }
  return { hash: shape.hash, codes: Uint16Array.from(codes), partLengths, strings: shape.starts.map((start) => sql.charCodeAt(start) === 0x27) };
}

/**
 * Whether `sql`, of shape `shape`, has the kept pattern's key: the same text between constants of
 * the same kinds. Compared code unit by code unit in place (String.prototype.startsWith at an
 * offset costs several times more on texts this short).
 */
export function matchesShape(pattern: ShapePattern, sql: string, shape: LiteralShape): boolean {
  const { codes, partLengths, strings } = pattern;
  const { starts, ends } = shape;
  if (pattern.hash !== shape.hash || partLengths.length !== starts.length + 1) return false;
  let from = 0;
  let at = 0;
  for (let k = 0; k < partLengths.length; k++) {
    const length = partLengths[k] as number;
    const to = k < starts.length ? starts[k] as number : sql.length;
    if (to - from !== length) return false;
    for (let i = 0; i < length; i++) if (codes[at + i] !== sql.charCodeAt(from + i)) return false;
    at += length;
    if (k < starts.length) {
      if ((sql.charCodeAt(to) === 0x27) !== strings[k]) return false;
      from = ends[k] as number;
    }
  }
  return true;
}

/** The UTF-8 byte offset of each of `indexes` (UTF-16 positions of `text`, ascending). */
function byteOffsets(text: string, indexes: readonly number[]): number[] {
  const offsets: number[] = [];
  let bytes = 0;
  let at = 0;
  for (const index of indexes) {
    for (; at < index; at++) {
      const code = text.charCodeAt(at);
      if (code < 0x80) bytes += 1;
      else if (code < 0x800) bytes += 2;
      else if (code >= 0xd800 && code <= 0xdbff) { bytes += 4; at++; } // a surrogate pair: one code point
      else bytes += 3;
    }
    offsets.push(bytes);
  }
  return offsets;
}

/** An ASCII letter's lower case; any other code as it is. */
function lowerCase(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/** A hash of a word's lower case, updated one character code at a time (codes of ASCII words only). */
function nextHash(hash: number, code: number): number {
  return (Math.imul(hash, 31) + lowerCase(code)) | 0;
}

function wordHash(word: string): number {
  let hash = 0;
  for (let i = 0; i < word.length; i++) hash = nextHash(hash, word.charCodeAt(i));
  return hash;
}

type FirstWord = 'select' | 'insert' | 'update' | 'delete';
const FIRST_WORDS: readonly FirstWord[] = ['select', 'insert', 'update', 'delete'];
const FIRST_HASHES = FIRST_WORDS.map(wordHash);

/**
 * The statement's first word when it is one of FIRST_WORDS in any case: compared where it stands
 * (an ASCII word), not cut out and lower-cased, which costs more than the rest of a short text's scan.
 */
function firstWordAt(sql: string, from: number, to: number, hash: number): FirstWord | undefined {
  for (let w = 0; w < FIRST_WORDS.length; w++) {
    if (FIRST_HASHES[w] !== hash) continue;
    const word = FIRST_WORDS[w] as FirstWord;
    if (word.length !== to - from) return undefined;
    for (let k = 0; k < word.length; k++) if (lowerCase(sql.charCodeAt(from + k)) !== word.charCodeAt(k)) return undefined;
    return word;
  }
  return undefined;
}

/**
 * The denied words and `into` as bits of a 4096-bit table, set at each one's hash: a word whose
 * bit is clear is none of them, so it is skipped without being cut out of the text and
 * lower-cased. (A table, not a Set of hashes: most hashes fall outside V8's small integers, and a
 * Set looks those up as boxed numbers, several times slower than the scan itself. Bits, not bytes:
 * 512 bytes stay in the cache between two statements where 4 KiB would not.)
 */
const HASH_BITS = 4095;
const deniedHashes = new WeakMap<ReadonlySet<string>, Uint32Array>();

/** The last set asked for and its table: callers pass one set over and over (a WeakMap lookup costs a scan's tenth). */
let lastDenied: ReadonlySet<string> | undefined;
let lastHashes: Uint32Array = new Uint32Array((HASH_BITS + 1) / 32);

function hashesOf(deniedWords: ReadonlySet<string>): Uint32Array {
  if (deniedWords === lastDenied) return lastHashes;
  let hashes = deniedHashes.get(deniedWords);
  if (hashes === undefined) {
    hashes = new Uint32Array((HASH_BITS + 1) / 32);
    for (const word of [...deniedWords, 'into']) {
      const bit = wordHash(word) & HASH_BITS;
      hashes[bit >>> 5] = (hashes[bit >>> 5] as number) | (1 << (bit & 31));
    }
    deniedHashes.set(deniedWords, hashes);
  }
  lastDenied = deniedWords;
  lastHashes = hashes;
  return hashes;
}

/** Whether the table has the bit of `hash` set. */
function mayBeDenied(hashes: Uint32Array, hash: number): boolean {
  const bit = hash & HASH_BITS;
  return ((hashes[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
}

const WORD_START = 2;
const WORD_PART = 1;
/** Each ASCII code's class: WORD_START (a letter or _), WORD_PART (a digit) or 0. */
const ASCII_CLASS = new Uint8Array(0x80);
for (let code = 0; code < 0x80; code++) {
  const letter = (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
  ASCII_CLASS[code] = letter ? WORD_START : code >= 0x30 && code <= 0x39 ? WORD_PART : 0;
}

function isWordStart(code: number): boolean {
  return code >= 0x80 || ASCII_CLASS[code] === WORD_START;
}

/** False past the end of the text too (charCodeAt gives NaN there, which no table entry answers). */
function isWordPart(code: number): boolean {
  return code >= 0x80 || (ASCII_CLASS[code] ?? 0) !== 0;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c;
}

/**
 * Where the scan notes constants (reused: an array that grows by push costs more than the scan of
 * a short text); the shape gets copies of just the right length.
 */
let scannedStarts = new Int32Array(16);
let scannedEnds = new Int32Array(16);

/** Notes constant number `count` (from `start` to `end`), growing the scratch arrays when full. */
function noteConstant(count: number, start: number, end: number): void {
  if (count === scannedStarts.length) {
    const starts = new Int32Array(count * 2);
    const ends = new Int32Array(count * 2);
    starts.set(scannedStarts);
    ends.set(scannedEnds);
    scannedStarts = starts;
    scannedEnds = ends;
  }
  scannedStarts[count] = start;
  scannedEnds[count] = end;
}

/** The first `count` entries of a scratch array, as a plain array. */
function noted(scratch: Int32Array, count: number): number[] {
  const values = new Array<number>(count);
  for (let k = 0; k < count; k++) values[k] = scratch[k] as number;
  return values;
}

/** The text's shape, or undefined when the text is not simple enough to have one. */
export function literalShapeOf(sql: string, deniedWords: ReadonlySet<string>): LiteralShape | undefined {
  let keyHash = 0;
  let count = 0;
  let ascii = true; // every code unit seen so far is ASCII: byte offsets are the UTF-16 positions
  let firstWord: FirstWord | undefined;
  let hasStrings = false;
  const hashes = hashesOf(deniedWords);
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const code = sql.charCodeAt(i);
    if (code === 0x27) { // 'string'
      let j = i + 1;
      for (;;) {
        if (j >= n) return undefined; // unterminated
        const inner = sql.charCodeAt(j);
        if (inner === 0x27) {
          if (sql.charCodeAt(j + 1) === 0x27) { j += 2; continue; }
          break;
        }
        if (inner >= 0x80) ascii = false;
        j++;
      }
      keyHash = (Math.imul(keyHash, 31) + STRING_MARK) | 0;
      noteConstant(count++, i, j + 1);
      hasStrings = true;
      i = j + 1;
    } else if (code === 0x22) { // "quoted name": kept, and checked like a word
      let j = i + 1;
      let name = '';
      for (;;) {
        if (j >= n) return undefined;
        const inner = sql.charCodeAt(j);
        if (inner === 0x22) {
          if (sql.charCodeAt(j + 1) === 0x22) { name += '"'; j += 2; continue; }
          break;
        }
        if (inner >= 0x80) ascii = false;
        name += sql.charAt(j);
        j++;
      }
      if (firstWord === undefined || deniedWords.has(name.toLowerCase())) return undefined;
      keyHash = hashRange(keyHash, sql, i, j + 1);
      i = j + 1;
    } else if (isWordStart(code)) {
      let j = i + 1;
      let hash = nextHash(0, code);
      let exact = code; // the key's hash is case-sensitive, as the key is
      let asciiWord = code < 0x80;
      for (; j < n; j++) {
        const part = sql.charCodeAt(j);
        if (!isWordPart(part)) break;
        if (part >= 0x80) asciiWord = false;
        hash = nextHash(hash, part);
        exact = (Math.imul(exact, 31) + part) | 0;
      }
      keyHash = (Math.imul(keyHash, 31) + exact) | 0;
      if (!asciiWord) ascii = false;
      const next = sql.charCodeAt(j);
      // `$` in a name, or a prefixed string (E'…', U&'…', B'…', X'…', N'…').
      if (next === 0x24 || next === 0x27 || next === 0x26) return undefined;
      if (firstWord !== undefined && asciiWord && !mayBeDenied(hashes, hash)) {
        i = j;
        continue;
      }
      if (firstWord === undefined) {
        firstWord = asciiWord ? firstWordAt(sql, i, j, hash) : undefined;
        if (firstWord === undefined) return undefined;
        i = j;
        continue;
      }
      const word = sql.slice(i, j).toLowerCase();
      if (deniedWords.has(word) || (firstWord === 'select' && word === 'into')) return undefined;
      i = j;
    } else if (isDigit(code)) {
      let j = i + 1;
      while (j < n && isDigit(sql.charCodeAt(j))) j++;
      if (sql.charCodeAt(j) === 0x2e && isDigit(sql.charCodeAt(j + 1))) {
        j += 2;
        while (j < n && isDigit(sql.charCodeAt(j))) j++;
      }
      // 1e5, 0x1F, 1_000: left to the full analysis. So is a dot against the digits: PostgreSQL
      // reads `12.` and `.5` as one constant each, so `12.` and `10.0.` (an error) would share a shape.
      if (j < n && isWordPart(sql.charCodeAt(j))) return undefined;
      if (sql.charCodeAt(j) === 0x2e || sql.charCodeAt(i - 1) === 0x2e) return undefined;
      keyHash = (Math.imul(keyHash, 31) + NUMBER_MARK) | 0;
      noteConstant(count++, i, j);
      i = j;
    } else if (code === 0x24) { // $1, $$
      return undefined;
    } else if ((code === 0x2d && sql.charCodeAt(i + 1) === 0x2d) || (code === 0x2f && sql.charCodeAt(i + 1) === 0x2a)) {
      return undefined; // a comment
    } else if (code === 0x3b) { // ; ends the text: only whitespace may follow
      for (let j = i + 1; j < n; j++) if (!isSpace(sql.charCodeAt(j))) return undefined;
      keyHash = hashRange(keyHash, sql, i, n);
      i = n;
    } else if (code === 0) {
      return undefined;
    } else {
      if (code >= 0x80) ascii = false;
      keyHash = (Math.imul(keyHash, 31) + code) | 0;
      i++;
    }
  }
  if (firstWord === undefined) return undefined;
  // Kept within V8's small integers: a Map looks other numbers up boxed, several times slower.
  keyHash &= SMALL_INTEGER_BITS;
  const starts = noted(scannedStarts, count);
  const ends = noted(scannedEnds, count);
  if (ascii) return new ScannedShape(sql, keyHash, n, starts, starts, ends, hasStrings);
  return new ScannedShape(sql, keyHash, Buffer.byteLength(sql, 'utf8'), byteOffsets(sql, starts), starts, ends, hasStrings);
}
