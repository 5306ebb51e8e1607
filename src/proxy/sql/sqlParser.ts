/**
 * PostgreSQL's own parser (libpg-query, WASM). The module loads asynchronously once per process;
 * after `loadSqlParser()` resolves, parsing and scanning are synchronous, which keeps the analyser
 * a plain function the proxy can call per message.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import type { ParseResult, ScanToken } from 'libpg-query';
import { parsedAhead } from './parseWorker.js';

let loading: Promise<void> | undefined;
let loaded = false;

/** Loads the WASM parser; safe to call many times. Call once at proxy start-up. */
export function loadSqlParser(): Promise<void> {
  loading ??= loadModule().then(() => {
    loaded = true;
  });
  return loading;
}

function assertLoaded(): void {
  if (!loaded) throw new Error('pgveil SQL analysis: call loadSqlParser() before analysing statements');
}

/** Thrown when PostgreSQL's grammar rejects the text (the caller decides what that means). */
export class SqlSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SqlSyntaxError';
  }
}

/** Parses one text into raw statements. Locations in the tree are UTF-8 byte offsets. */
export function parseSql(text: string): ParseResult {
  assertLoaded();
  const ahead = parsedAhead(text);
  if (ahead !== undefined) {
    if ('tree' in ahead) return ahead.tree;
    throw new SqlSyntaxError(ahead.error);
  }
  try {
    return parseSync(text);
  } catch (error) {
    throw new SqlSyntaxError(error instanceof Error ? error.message : String(error));
  }
}

export interface SqlToken {
  /** UTF-8 byte offsets; comments and whitespace are not tokens. */
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** Splits the text into PostgreSQL's lexical tokens (the parser gives starts only, never ends). */
export function scanSql(text: string): readonly SqlToken[] {
  assertLoaded();
  try {
    return scanSync(text).tokens.map((token: ScanToken) => ({ start: token.start, end: token.end, text: token.text }));
  } catch (error) {
    throw new SqlSyntaxError(error instanceof Error ? error.message : String(error));
  }
}
