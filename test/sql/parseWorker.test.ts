import { beforeAll, describe, expect, it } from 'vitest';
import { forgetParsed, OFF_THREAD_PARSE_LENGTH, parseAhead, parsedAhead } from '../../src/proxy/sql/parseWorker.js';
import { loadSqlParser, parseSql, SqlSyntaxError } from '../../src/proxy/sql/sqlParser.js';
import { SqlText } from '../../src/proxy/sql/sqlText.js';

beforeAll(() => loadSqlParser());

function longInsert(rows: number): string {
  const values = Array.from({ length: rows }, (_, i) => `(${i}, 'Zoë ${'x'.repeat(i % 50)}', -${i}.5, U&'d\\0061t\\+000061' UESCAPE '\\')`);
  return `INSERT INTO t (id, name, amount, code) VALUES ${values.join(', ')}; SELECT 1`;
}

describe('parsing long texts off the event loop', () => {
  it('gives the tree an in-place parse gives, and forgets it when told', async () => {
    const text = longInsert(2000);
    expect(text.length).toBeGreaterThan(OFF_THREAD_PARSE_LENGTH);
    const inPlace = parseSql(text);
    await parseAhead(text);
    expect(parsedAhead(text)).toEqual({ tree: inPlace });
    expect(parseSql(text)).toEqual(inPlace);
    forgetParsed(text);
    expect(parsedAhead(text)).toBeUndefined();
  });

  it('finds the same constant ends from the worker\'s token offsets as from an in-place scan', async () => {
    const text = longInsert(1500);
    const inPlace = new SqlText(text);
    const starts = [...text.matchAll(/'Zoë|-\d+\.5|U&'/g)].map((match) => Buffer.byteLength(text.slice(0, match.index), 'utf8'));
    const expected = starts.map((start) => inPlace.constantEnd(start));
    expect(expected.every((end) => end !== undefined)).toBe(true);
    await parseAhead(text);
    const ahead = new SqlText(text);
    expect(starts.map((start) => ahead.constantEnd(start))).toEqual(expected);
    forgetParsed(text);
  });

  it('keeps the syntax error of a long text for parseSql to throw', async () => {
    const text = `${longInsert(1500)} SELEC oops`;
    await parseAhead(text);
    expect(() => parseSql(text)).toThrow(SqlSyntaxError);
    forgetParsed(text);
  });

  it('leaves short texts to the in-place parser', async () => {
    await parseAhead('SELECT 1');
    expect(parsedAhead('SELECT 1')).toBeUndefined();
  });

  it('parses a text of megabytes with the event loop free', async () => {
    const text = `INSERT INTO t (note) VALUES ('${'y'.repeat(8 * 1024 * 1024)}')`;
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => { const now = performance.now(); longest = Math.max(longest, now - last); last = now; }, 1);
    await parseAhead(text);
    clearInterval(timer);
    expect(parsedAhead(text)).toHaveProperty('tree');
    forgetParsed(text);
    // In place, this parse holds the loop for some 300 ms or more.
    expect(longest).toBeLessThan(Number(process.env.PGVEIL_PAUSE_LIMIT_MS ?? 250));
  });
});
