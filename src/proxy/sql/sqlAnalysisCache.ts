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
import { literalShapeOf, type LiteralShape } from './literalShape.js';
import { EXPOSURE_FUNCTION_NAMES } from './plaintextExposure.js';
import { findListedTableMention } from './protectedNameScan.js';
import { analyseSql } from './sqlAnalyser.js';
import type { ProtectedSchema, SqlAnalysis, StatementAnalysis } from './sqlAnalysisTypes.js';
import { RULE_EXPRESSION_NAMES } from './statementRules.js';

/** Names whose calls or mentions the analysis reads constants of: their texts get no shape. */
const SHAPE_DENIED_WORDS: ReadonlySet<string> = new Set([...RULE_EXPRESSION_NAMES, ...EXPOSURE_FUNCTION_NAMES]);

const NO_NAMES: readonly string[] = Object.freeze([]);
const MAX_SCHEMA_TAGS = 4096;

/** The two name lists as one, kept (frozen) while the schema hands out the same frozen lists. */
const joinedNames = new WeakMap<object, { readonly plaintext: object; readonly joined: readonly string[] }>();

function followedNames(protectedNames: Iterable<string>, plaintextNames: Iterable<string>): readonly string[] {
  const known = joinedNames.get(protectedNames);
  if (known !== undefined && known.plaintext === plaintextNames) return known.joined;
  const joined = Object.freeze([...protectedNames, ...plaintextNames]);
  if (Object.isFrozen(protectedNames) && Object.isFrozen(plaintextNames)) joinedNames.set(protectedNames, { plaintext: plaintextNames, joined });
  return joined;
}

/** An analysis kept for a shape: the one statement, and the shape of the text it came from. */
interface ShapeEntry {
  readonly analysis: SqlAnalysis;
  readonly statement: StatementAnalysis;
  readonly shape: LiteralShape;
  /** When it was last moved to the young end of its LRU (the cache's use count then). */
  used: number;
  /** The last analysis moved to another text (texts of one shape mostly differ in the same way). */
  lastMoved?: MovedAnalysis;
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

/** True when nothing in the analysis can depend on a constant's value. */
function foundNothing(analysis: SqlAnalysis): boolean {
  const statement = analysis.statements[0];
  return analysis.statements.length === 1 && statement !== undefined && analysis.passThrough
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

export class SqlAnalysisCache {
  private readonly entries = new Map<string, TextEntry>();
  private readonly shapes = new Map<string, ShapeEntry>();
  /** Schema keys (long, and the same string for a session's run of messages) → short tags, never reused. */
  private readonly schemaTags = new Map<string, string>();
  private nextTag = 0;
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
    const tag = this.tagOf(schemaKey);
    const key = `${tag}\u0000${sql}`;
    const known = this.entries.get(key);
    const uses = ++this.uses;
    if (known !== undefined) {
      this.hits++;
      if (this.stale(known, uses)) refresh(this.entries, key, known, uses);
      return known.analysis;
    }
    const shape = this.shapeOf(sql, schema);
    const shapeKey = shape === undefined ? undefined : `${tag}\u0000${shape.key}`;
    const shaped = shapeKey === undefined ? undefined : this.shapes.get(shapeKey);
    const moved = shaped === undefined || shape === undefined ? undefined : movedTo(shaped, shape);
    if (moved !== undefined && shapeKey !== undefined && shaped !== undefined) {
      this.shapeHits++;
      if (this.stale(shaped, uses)) refresh(this.shapes, shapeKey, shaped, uses);
      return moved;
    }
    this.misses++;
    const analysis = analyseSql(sql, schema);
    if (!analysis.statements.some((statement) => statement.literals.length > 0)) remember(this.entries, key, { analysis, used: uses }, this.maxEntries);
    if (shape !== undefined && shapeKey !== undefined && foundNothing(analysis)) {
      const entry: ShapeEntry = { analysis, statement: analysis.statements[0] as StatementAnalysis, shape, used: uses };
      if (movedTo(entry, shape) !== undefined) remember(this.shapes, shapeKey, entry, this.maxEntries);
    }
    return analysis;
  }

  /**
   * Moving an entry to the young end costs a delete and an insert: done only for entries last
   * moved more than half the capacity's lookups ago. Each lookup adds at most one entry, so one
   * used at least once in every maxEntries / 2 lookups is never evicted.
   */
  private stale(entry: { used: number }, uses: number): boolean {
    return uses - entry.used >= this.maxEntries / 2;
  }

  /** Keys hold the tag instead of the schema key: shorter strings to hash on every lookup. */
  private tagOf(schemaKey: string): string {
    let tag = this.schemaTags.get(schemaKey);
    if (tag === undefined) {
      // Forgetting tags only costs misses: a key seen again gets a new tag, entries under old ones age out.
      if (this.schemaTags.size >= MAX_SCHEMA_TAGS) this.schemaTags.clear();
      tag = (this.nextTag++).toString(36);
      this.schemaTags.set(schemaKey, tag);
    }
    return tag;
  }

  /** The text's literal shape, when it has one and names no table whose values the analysis would follow. */
  private shapeOf(sql: string, schema: ProtectedSchema): LiteralShape | undefined {
    const protectedNames = schema.protectedTableNames?.();
    const plaintextNames = schema.plaintextSource === undefined ? NO_NAMES : schema.plaintextTableNames?.();
    if (protectedNames === undefined || plaintextNames === undefined) return undefined;
    const shape = literalShapeOf(sql, SHAPE_DENIED_WORDS);
    if (shape === undefined) return undefined;
    if (findListedTableMention(sql, followedNames(protectedNames, plaintextNames)) !== undefined) return undefined;
    return shape;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.shapes.clear();
  }
}

/** Re-inserts: Map keeps insertion order, so the oldest entry is always first. */
function refresh<V extends { used: number }>(map: Map<string, V>, key: string, entry: V, uses: number): void {
  entry.used = uses;
  map.delete(key);
  map.set(key, entry);
}

function remember<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.set(key, value);
  if (map.size > maxEntries) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}

/**
 * The kept analysis for a text of the same shape, its offsets moved to this text: the statement
 * ends where this text's does, and the constants compared with plain values sit where this text's
 * constants do. Undefined when an offset is not a constant's (the analysis is then not reused).
 */
function movedTo(entry: ShapeEntry, shape: LiteralShape): SqlAnalysis | undefined {
  const { statement } = entry;
  const compared = statement.plainComparedValues ?? [];
  const moved: number[] = [];
  for (const offset of compared) {
    const index = entry.shape.constantOffsets.indexOf(offset);
    const to = shape.constantOffsets[index];
    if (index < 0 || to === undefined) return undefined;
    moved.push(to);
  }
  const shift = shape.byteLength - entry.shape.byteLength;
  if (shift === 0 && sameOffsets(moved, compared)) return entry.analysis;
  const last = entry.lastMoved;
  if (last !== undefined && last.shift === shift && sameOffsets(moved, last.compared)) return last.analysis;
  const next: StatementAnalysis = { ...statement, end: statement.end + shift, ...(statement.plainComparedValues === undefined ? {} : { plainComparedValues: moved }) };
  const analysis: SqlAnalysis = { ...entry.analysis, statements: [next] };
  entry.lastMoved = { shift, compared: moved, analysis };
  return analysis;
}

function sameOffsets(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
