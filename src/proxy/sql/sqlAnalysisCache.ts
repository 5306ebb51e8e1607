/**
 * A bounded LRU of analyses keyed by (schema key, SQL text). The schema key is the caller's name
 * for "the same ProtectedSchema answers" — e.g. policy generation plus search_path — so a policy
 * reload or a different search path never reuses an old answer.
 *
 * Analyses that carry constants feeding protected columns are not kept: they hold plaintext
 * values. Texts that inline their values rarely repeat, so a second LRU keys analyses by the
 * text's literal shape (literalShape.ts): a simple statement that names no protected table and in
 * which the analysis found nothing at all is answered for every text of its shape.
 */
import { literalShapeOf, matchesShape, shapePattern, type LiteralShape, type ShapePattern } from './literalShape.js';
import { EXPOSURE_FUNCTION_NAMES } from './plaintextExposure.js';
import { findListedTableMention } from './protectedNameScan.js';
import { analyseSql } from './sqlAnalyser.js';
import { NO_SETTING_WORDS, textNamesSettingWords } from './settingWords.js';
import type { ProtectedSchema, SqlAnalysis, StatementAnalysis } from './sqlAnalysisTypes.js';
import { RULE_EXPRESSION_NAMES } from './statementRules.js';

/** Names whose calls or mentions the analysis reads constants of: their texts get no shape. */
const SHAPE_DENIED_WORDS: ReadonlySet<string> = new Set([...RULE_EXPRESSION_NAMES, ...EXPOSURE_FUNCTION_NAMES]);

const NO_NAMES: readonly string[] = Object.freeze([]);
const NO_OFFSETS: readonly number[] = Object.freeze([]);
/** Moved analyses kept per shape. */
const RECENT_MOVES = 4;
/** Schema keys kept at once: a session's search_path and the policy generation make one; few change often. */
const MAX_SPACES = 64;

/** The two name lists as one, kept (frozen) while the schema hands out the same frozen lists. */
const joinedNames = new WeakMap<object, { readonly plaintext: object; readonly joined: readonly string[] }>();

function followedNames(protectedNames: Iterable<string>, plaintextNames: Iterable<string>): readonly string[] {
  const known = joinedNames.get(protectedNames);
  if (known !== undefined && known.plaintext === plaintextNames) return known.joined;
  const joined = Object.freeze([...protectedNames, ...plaintextNames]);
  if (Object.isFrozen(protectedNames) && Object.isFrozen(plaintextNames)) joinedNames.set(protectedNames, { plaintext: plaintextNames, joined });
  return joined;
}

/** An analysis kept for a shape: the one statement, and the shape of the text it came from (not the text: its constants are not kept). */
interface ShapeEntry {
  readonly analysis: SqlAnalysis;
  readonly statement: StatementAnalysis;
  readonly shape: Pick<LiteralShape, 'byteLength' | 'constantOffsets'>;
  readonly pattern: ShapePattern;
  /** The table names the first text of the shape was scanned for (and named none of). */
  readonly names: readonly string[];
  /** When it was last moved to the young end of its LRU (the cache's use count then). */
  used: number;
  /**
   * The analyses last moved to other texts, newest first: texts of one shape mostly differ in a
   * few ways (a number of five digits or six).
   */
  recentMoves?: MovedAnalysis[];
}

interface MovedAnalysis {
  readonly shift: number;
  readonly compared: readonly number[];
  readonly analysis: SqlAnalysis;
}

interface TextEntry {
  readonly analysis: SqlAnalysis;
  used: number;
}

/**
 * True when nothing in the analysis can depend on a constant's value. A text naming a setting
 * word is not kept either: a string constant can hold one.
 */
function foundNothing(analysis: SqlAnalysis): boolean {
  const statement = analysis.statements[0];
  return analysis.statements.length === 1 && statement !== undefined && analysis.passThrough
    && analysis.settingWords === NO_SETTING_WORDS
    && analysis.rejection === undefined && analysis.opaqueRead === undefined && analysis.exposures.length === 0
    && analysis.paramColumns.size === 0 && statement.params.length === 0 && statement.arrayParams.length === 0
    && statement.literals.length === 0 && statement.comparedColumns.length === 0 && statement.copyFrom === undefined
    && statement.copy === undefined && statement.rejection === undefined && statement.exposures.length === 0
    && statement.opaqueRead === undefined && (statement.sessionEffects ?? []).length === 0
    && (statement.rules ?? []).length === 0 && statement.preparedNames === undefined
    && (statement.paramUses ?? []).length === 0;
}

export interface SqlAnalysisCacheOptions {
  /** Most analyses kept (default 2000). */
  readonly maxEntries?: number;
  /** Longer texts are analysed every time, not kept (default 16 KiB of UTF-16 code units). */
  readonly maxTextLength?: number;
}

/**
 * The analyses kept under one schema key. Texts are keyed by themselves (a lookup hashes the text
 * once), shapes by the hash their scan computed (matchesShape confirms a hit; a shape whose hash
 * another holds is just not kept), with no key to build and flatten.
 */
interface SchemaSpace {
  readonly texts: Map<string, TextEntry>;
  readonly shapes: Map<number, ShapeEntry>;
  used: number;
}

export class SqlAnalysisCache {
  /** By schema key, least recently used first (moved now and then, as entries are). */
  private readonly spaces = new Map<string, SchemaSpace>();
  private textCount = 0;
  private shapeCount = 0;
  /** Counts lookups: an entry used within the last maxEntries / 2 of them is young enough to stay where it is. */
  private uses = 0;
  private readonly maxEntries: number;
  private readonly maxTextLength: number;
  hits = 0;
  /** Texts answered by the analysis of another text of the same literal shape. */
  shapeHits = 0;
  misses = 0;

  constructor(options: SqlAnalysisCacheOptions = {}) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 2000);
    this.maxTextLength = options.maxTextLength ?? 16 * 1024;
  }

  analyse(sql: string, schema: ProtectedSchema, schemaKey: string): SqlAnalysis {
    if (sql.length > this.maxTextLength) {
      this.misses++;
      return analyseSql(sql, schema);
    }
    const uses = ++this.uses;
    let space = this.spaces.get(schemaKey);
    if (space !== undefined && this.stale(space, uses)) refresh(this.spaces, schemaKey, space, uses);
    const candidate = this.shapeOf(sql, schema);
    // Texts of a shape differ in their string constants, which may name a setting word (numbers cannot).
    const found = candidate === undefined || (candidate.shape.hasStrings && textNamesSettingWords(sql)) ? undefined : space?.shapes.get(candidate.shape.hash);
    const kept = found !== undefined && candidate !== undefined && matchesShape(found.pattern, sql, candidate.shape) ? found : undefined;
    // A kept shape without string constants was scanned for these names already: its texts differ
    // from that one only in digit runs, which can make no word. Any other text is scanned.
    const scanned = kept !== undefined && kept.names === candidate?.names && !candidate.shape.hasStrings;
    const named = candidate !== undefined && (scanned || findListedTableMention(sql, candidate.names) === undefined) ? candidate : undefined;
    const moved = named === undefined || kept === undefined ? undefined : movedTo(kept, named.shape);
    // Answered by its shape before its text is looked up: texts of a shape are not kept as texts,
    // so that lookup (which hashes the whole text) would miss.
    if (moved !== undefined && named !== undefined && kept !== undefined && space !== undefined) {
      this.shapeHits++;
      if (this.stale(kept, uses)) refresh(space.shapes, named.shape.hash, kept, uses);
      return moved;
    }
    const known = space?.texts.get(sql);
    if (known !== undefined && space !== undefined) {
      this.hits++;
      if (this.stale(known, uses)) refresh(space.texts, sql, known, uses);
      return known.analysis;
    }
    this.misses++;
    const analysis = analyseSql(sql, schema);
    const keepText = !analysis.statements.some((statement) => statement.literals.length > 0);
    let shapeEntry: ShapeEntry | undefined;
    if (named !== undefined && foundNothing(analysis)) {
      const shape = { byteLength: named.shape.byteLength, constantOffsets: named.shape.constantOffsets };
      const entry: ShapeEntry = { analysis, statement: analysis.statements[0] as StatementAnalysis, shape, pattern: shapePattern(sql, named.shape), names: named.names, used: uses };
      if (movedTo(entry, named.shape) !== undefined) shapeEntry = entry;
    }
    if (!keepText && shapeEntry === undefined) return analysis;
    space ??= this.newSpace(schemaKey, uses);
    if (keepText && !space.texts.has(sql)) {
      space.texts.set(sql, { analysis, used: uses });
      if (++this.textCount > this.maxEntries) this.evictOldest('texts');
    }
    if (shapeEntry !== undefined && !space.shapes.has(shapeEntry.pattern.hash)) {
      space.shapes.set(shapeEntry.pattern.hash, shapeEntry);
      if (++this.shapeCount > this.maxEntries) this.evictOldest('shapes');
    }
    return analysis;
  }

  /**
   * Moving an entry to the young end costs a delete and an insert: done only for entries last
   * moved more than half the capacity's lookups ago. Each lookup adds at most one entry of a kind,
   * so one used at least once in every maxEntries / 2 lookups is never evicted.
   */
  private stale(entry: { used: number }, uses: number): boolean {
    return uses - entry.used >= this.maxEntries / 2;
  }

  /**
   * Drops the oldest entry of a kind across all spaces: each space's map is in the order its
   * entries were last moved, so the oldest is the first of one of them.
   */
  private evictOldest(kind: 'texts' | 'shapes'): void {
    let oldest: { readonly schemaKey: string; readonly space: SchemaSpace; readonly used: number } | undefined;
    for (const [schemaKey, space] of this.spaces) {
      const first = space[kind].values().next();
      if (first.done === true) continue;
      if (oldest === undefined || first.value.used < oldest.used) oldest = { schemaKey, space, used: first.value.used };
    }
    if (oldest === undefined) return;
    const { space } = oldest;
    if (kind === 'texts') {
      dropFirst(space.texts);
      this.textCount--;
    } else {
      dropFirst(space.shapes);
      this.shapeCount--;
    }
    if (space.texts.size === 0 && space.shapes.size === 0) this.spaces.delete(oldest.schemaKey);
  }

  /** A new space, the least recently used one dropped whole first when there are MAX_SPACES (each eviction looks at every space). */
  private newSpace(schemaKey: string, uses: number): SchemaSpace {
    if (this.spaces.size >= MAX_SPACES) {
      const [oldestKey, oldest] = this.spaces.entries().next().value as [string, SchemaSpace];
      this.textCount -= oldest.texts.size;
      this.shapeCount -= oldest.shapes.size;
      this.spaces.delete(oldestKey);
    }
    const space: SchemaSpace = { texts: new Map(), shapes: new Map(), used: uses };
    this.spaces.set(schemaKey, space);
    return space;
  }

  /**
   * The text's literal shape, when it has one, and the names of the tables whose values the
   * analysis would follow: the text must name none of them to be answered by its shape.
   */
  private shapeOf(sql: string, schema: ProtectedSchema): { readonly shape: LiteralShape; readonly names: readonly string[] } | undefined {
    const protectedNames = schema.protectedTableNames?.();
    const plaintextNames = schema.plaintextSource === undefined ? NO_NAMES : schema.plaintextTableNames?.();
    if (protectedNames === undefined || plaintextNames === undefined) return undefined;
    const shape = literalShapeOf(sql, SHAPE_DENIED_WORDS);
    return shape === undefined ? undefined : { shape, names: followedNames(protectedNames, plaintextNames) };
  }

  get size(): number {
    return this.textCount;
  }

  clear(): void {
    this.spaces.clear();
    this.textCount = 0;
    this.shapeCount = 0;
  }
}

/** Drops a map's first (oldest) entry. */
function dropFirst<K, V>(map: Map<K, V>): void {
  const first = map.keys().next();
  if (first.done !== true) map.delete(first.value);
}

/** Re-inserts: Map keeps insertion order, so the oldest entry is always first. */
function refresh<K, V extends { used: number }>(map: Map<K, V>, key: K, entry: V, uses: number): void {
  entry.used = uses;
  map.delete(key);
  map.set(key, entry);
}


/**
 * The kept analysis for a text of the same shape, its offsets moved to this text: the statement
 * ends where this text's does, and the constants compared with plain values sit where this text's
 * constants do. Undefined when an offset is not a constant's (the analysis is then not reused).
 */
function movedTo(entry: ShapeEntry, shape: Pick<LiteralShape, 'byteLength' | 'constantOffsets'>): SqlAnalysis | undefined {
  const { statement } = entry;
  const compared = statement.plainComparedValues ?? NO_OFFSETS;
  const from = entry.shape.constantOffsets;
  const to = shape.constantOffsets;
  for (const offset of compared) {
    const index = from.indexOf(offset);
    if (index < 0 || to[index] === undefined) return undefined;
  }
  // Compared where they stand: a text answered by an analysis moved before costs no array.
  const shift = shape.byteLength - entry.shape.byteLength;
  if (shift === 0 && movesTo(compared, from, to, compared)) return entry.analysis;
  const recent = entry.recentMoves ??= [];
  for (const known of recent) if (known.shift === shift && movesTo(compared, from, to, known.compared)) return known.analysis;
  const moved = compared.map((offset) => to[from.indexOf(offset)] as number);
  const next: StatementAnalysis = { ...statement, end: statement.end + shift, ...(statement.plainComparedValues === undefined ? {} : { plainComparedValues: moved }) };
  const analysis: SqlAnalysis = { ...entry.analysis, statements: [next] };
  if (recent.length === RECENT_MOVES) recent.pop();
  recent.unshift({ shift, compared: moved, analysis });
  return analysis;
}

/** Whether each of `offsets` (among `from`), moved to the constant of the same index in `to`, is the same entry of `expected`. */
function movesTo(offsets: readonly number[], from: readonly number[], to: readonly number[], expected: readonly number[]): boolean {
  if (offsets.length !== expected.length) return false;
  for (let i = 0; i < offsets.length; i++) if (to[from.indexOf(offsets[i] as number)] !== expected[i]) return false;
  return true;
}
