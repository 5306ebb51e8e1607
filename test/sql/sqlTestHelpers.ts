/** Helpers shared by the SQL analysis tests: run the analyser, and express literals as written text. */
import { beforeAll, expect } from 'vitest';
import { analyseSql, loadSqlParser, type ColumnRef, type SqlAnalysis, type StatementAnalysis } from '../../src/proxy/sql/index.js';
import { testSchema, type TestSchemaOptions } from './sqlTestSchema.js';

export function useSqlParser(): void {
  beforeAll(async () => {
    await loadSqlParser();
  });
}

export function analyse(sql: string, options: TestSchemaOptions = {}): SqlAnalysis {
  return analyseSql(sql, testSchema(options));
}

/** The only statement of a one-statement text. */
export function analyseOne(sql: string, options: TestSchemaOptions = {}): StatementAnalysis {
  const { statements } = analyse(sql, options);
  expect(statements).toHaveLength(1);
  return statements[0] as StatementAnalysis;
}

export function byteSlice(sql: string, start: number, end: number): string {
  return Buffer.from(sql, 'utf8').subarray(start, end).toString('utf8');
}

/** The byte range of `written` (its first occurrence after `from`) in `sql`. */
export function byteRange(sql: string, written: string, from = 0): { start: number; end: number } {
  const index = sql.indexOf(written, from);
  if (index < 0) throw new Error(`${written} not in ${sql}`);
  const start = Buffer.byteLength(sql.slice(0, index), 'utf8');
  return { start, end: start + Buffer.byteLength(written, 'utf8') };
}

export type ExpectedLiteral = readonly [written: string, value: string, column: ColumnRef];

/** Literal targets as [text as written, decoded value, column], checked against exact byte ranges. */
export function describeLiterals(sql: string, statement: StatementAnalysis): ExpectedLiteral[] {
  return statement.literals.map((literal) => [byteSlice(sql, literal.start, literal.end), literal.value, literal.column] as const);
}

export function describeParams(statement: StatementAnalysis): [number, ColumnRef][] {
  return statement.params.map((target) => [target.param, target.column]);
}

export function describeArrayParams(statement: StatementAnalysis): [number, ColumnRef][] {
  return statement.arrayParams.map((target) => [target.param, target.column]);
}
