/**
 * A bounded LRU of analyses keyed by (schema key, SQL text). The schema key is the caller's name
 * for "the same ProtectedSchema answers" — e.g. policy generation plus search_path — so a policy
 * reload or a different search path never reuses an old answer.
 *
 * Analyses that carry constants feeding protected columns are not kept: they hold plaintext
 * values, and texts with inline values rarely repeat anyway.
 */
import { analyseSql } from './sqlAnalyser.js';
import type { ProtectedSchema, SqlAnalysis } from './sqlAnalysisTypes.js';

export interface SqlAnalysisCacheOptions {
  /** Most analyses kept (default 2000). */
  readonly maxEntries?: number;
  /** Longer texts are analysed every time, not kept (default 16 KiB of UTF-16 code units). */
  readonly maxTextLength?: number;
}

export class SqlAnalysisCache {
  private readonly entries = new Map<string, SqlAnalysis>();
  private readonly maxEntries: number;
  private readonly maxTextLength: number;
  hits = 0;
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
    const key = `${schemaKey}\u0000${sql}`;
    const known = this.entries.get(key);
    if (known !== undefined) {
      this.hits++;
      // Re-insert: Map keeps insertion order, so the oldest entry is always first.
      this.entries.delete(key);
      this.entries.set(key, known);
      return known;
    }
    this.misses++;
    const analysis = analyseSql(sql, schema);
    if (!analysis.statements.some((statement) => statement.literals.length > 0)) {
      this.entries.set(key, analysis);
      if (this.entries.size > this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (oldest.done !== true) this.entries.delete(oldest.value);
      }
    }
    return analysis;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
