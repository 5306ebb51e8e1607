/** EXECUTE's arguments as the write path sees them: constants with their byte ranges, or not constants. */
import { describe, expect, it } from 'vitest';
import { preparedNameUseOf } from '../../src/proxy/sql/preparedNames.js';
import { parseSql } from '../../src/proxy/sql/sqlParser.js';
import { SqlText } from '../../src/proxy/sql/sqlText.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

function argumentsOf(sql: string): unknown[] {
  const use = preparedNameUseOf(parseSql(sql).stmts?.[0]?.stmt, new SqlText(sql));
  return use.executes.flatMap((execute) => execute.arguments);
}

describe('EXECUTE arguments', () => {
  it('locates constants (casts looked through), NULL, and everything else', () => {
    const sql = "EXECUTE p('a''b', 42, 'x'::text, NULL, upper('y'), $1, -7)";
    const found = argumentsOf(sql);
    const bytes = Buffer.from(sql, 'utf8');
    const slice = (argument: unknown): string => {
      const { start, end } = argument as { start: number; end: number };
      return bytes.subarray(start, end).toString('utf8');
    };
    expect(found[0]).toMatchObject({ kind: 'constant', value: "a'b" });
    expect(slice(found[0])).toBe("'a''b'");
    expect(found[1]).toMatchObject({ kind: 'constant', value: '42' });
    expect(slice(found[2])).toBe("'x'");
    expect(found[3]).toEqual({ kind: 'null' });
    expect(found[4]).toMatchObject({ kind: 'other' });
    expect(found[5]).toMatchObject({ kind: 'other' });
    expect(found[6]).toMatchObject({ kind: 'constant', value: '-7' });
    expect(slice(found[6])).toBe('-7');
  });

  it('finds EXECUTE under EXPLAIN and CREATE TABLE AS', () => {
    expect(argumentsOf("EXPLAIN EXECUTE p('a')")).toMatchObject([{ kind: 'constant', value: 'a' }]);
    expect(argumentsOf("CREATE TABLE t AS EXECUTE p('b')")).toMatchObject([{ kind: 'constant', value: 'b' }]);
  });
});
