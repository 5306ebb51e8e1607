/** What the analyser reports for splitting parameters: every `$n` token, target offsets, plain comparisons. */
import { describe, expect, it } from 'vitest';
import { analyseOne, byteRange, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

describe('parameter uses', () => {
  it('reports each $n token and the offsets that feed protected columns', () => {
    const sql = 'INSERT INTO customers (ssn, note, email) VALUES ($1, $1, $2)';
    const statement = analyseOne(sql);
    const first = byteRange(sql, '$1').start;
    const second = byteRange(sql, '$1', first + 1).start;
    expect(statement.paramUses).toEqual([{ param: 1, location: first }, { param: 1, location: second }, { param: 2, location: byteRange(sql, '$2').start }]);
    expect(statement.params.find((target) => target.column.column === 'ssn')?.locations).toEqual([first]);
  });

  it('reports a value compared with both a protected and another column at one offset', () => {
    const sql = 'SELECT id FROM customers WHERE $1 IN (ssn, note)';
    const statement = analyseOne(sql);
    expect(statement.params[0]?.locations).toEqual([byteRange(sql, '$1').start]);
    expect(statement.plainComparedValues).toEqual([byteRange(sql, '$1').start]);
  });

  it('stays linear in the number of uses', () => {
    const rows = Array.from({ length: 20_000 }, () => '($1, $1)').join(', ');
    const started = performance.now();
    const statement = analyseOne(`INSERT INTO customers (ssn, note) VALUES ${rows}`);
    expect(statement.paramUses).toHaveLength(40_000);
    expect(statement.params[0]?.locations).toHaveLength(20_000);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
