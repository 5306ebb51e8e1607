/** spliceLiterals: byte-exact replacement and quoting that PostgreSQL's own lexer reads back unchanged. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteLiteral, spliceLiterals } from '../../src/proxy/sql/index.js';
import { canonicalNumeric } from '../../src/proxy/sql/constantValues.js';
import { analyse, analyseOne, byteRange, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

/** Any Unicode text PostgreSQL can hold in a string constant (no NUL). */
const sqlText = fc.string({ unit: 'binary', maxLength: 40 }).filter((text) => !text.includes('\u0000'));

describe('quoteLiteral', () => {
  it.each([
    ['', "''"],
    ['abc', "'abc'"],
    ["it's", "'it''s'"],
    ["''", "''''''"],
    ['back\\slash', "'back\\slash'"],
    ['東京\n', "'東京\n'"],
  ])('%j → %s', (value, quoted) => {
    expect(quoteLiteral(value)).toBe(quoted);
  });

  it('refuses NUL', () => {
    expect(() => quoteLiteral('a\u0000b')).toThrow(RangeError);
  });
});

describe('spliceLiterals', () => {
  it('replaces byte ranges after multi-byte text', () => {
    const sql = "INSERT INTO customers (note, ssn) VALUES ('Zürich 東京', '123-45-6789')";
    const [literal] = analyseOne(sql).literals;
    expect(spliceLiterals(sql, [{ start: literal!.start, end: literal!.end, value: 'TOKEN' }]))
      .toBe("INSERT INTO customers (note, ssn) VALUES ('Zürich 東京', 'TOKEN')");
  });

  it('replaces numbers, negative numbers, E-strings, U&-strings and dollar quotes by plain constants', () => {
    const sql = "INSERT INTO orders (card, memo) VALUES (-42, 'm'), (E'a\\'b', 'm'), (U&'d!0061' UESCAPE '!', 'm'), ($q$x$q$, 'm')";
    const { literals } = analyseOne(sql);
    const spliced = spliceLiterals(sql, literals.map((literal, index) => ({ ...literal, value: `t${index}'` })));
    expect(spliced).toBe("INSERT INTO orders (card, memo) VALUES ('t0''', 'm'), ('t1''', 'm'), ('t2''', 'm'), ('t3''', 'm')");
  });

  it('keeps the order whatever order the replacements come in', () => {
    const sql = "SELECT 'a', 'b', 'c'";
    const ranges = ["'a'", "'b'", "'c'"].map((written) => byteRange(sql, written));
    expect(spliceLiterals(sql, [
      { ...ranges[2]!, value: 'C' }, { ...ranges[0]!, value: 'A' }, { ...ranges[1]!, value: 'B' },
    ])).toBe("SELECT 'A', 'B', 'C'");
  });

  it('refuses overlapping or out-of-range replacements', () => {
    expect(() => spliceLiterals('SELECT 1', [{ start: 7, end: 9, value: 'x' }])).toThrow(RangeError);
    expect(() => spliceLiterals("SELECT '1'", [{ start: 7, end: 10, value: 'x' }, { start: 8, end: 9, value: 'y' }])).toThrow(RangeError);
  });

  it('round-trips any value through PostgreSQL\'s lexer (decode(splice(x)) == x)', () => {
    fc.assert(fc.property(sqlText, sqlText, (prefix, value) => {
      const sql = `INSERT INTO customers (note, ssn) VALUES (${quoteLiteral(prefix)}, 'placeholder')`;
      const [literal] = analyseOne(sql).literals;
      const spliced = spliceLiterals(sql, [{ start: literal!.start, end: literal!.end, value }]);
      const [again] = analyseOne(spliced).literals;
      expect(again?.value).toBe(value);
      expect(again?.start).toBe(literal!.start);
    }), { numRuns: 300 });
  });

  it('round-trips every literal of a multi-statement text at once, leaving the rest untouched', () => {
    fc.assert(fc.property(fc.array(sqlText, { minLength: 3, maxLength: 3 }), (values) => {
      const sql = "INSERT INTO customers (note, ssn) VALUES ('日本', E'x\\ty'); SELECT 1 FROM customers WHERE email IN (-1.50, $$d$$)";
      const literals = analyse(sql).statements.flatMap((statement) => statement.literals);
      expect(literals).toHaveLength(3);
      const spliced = spliceLiterals(sql, literals.map((literal, index) => ({ ...literal, value: values[index]! })));
      const again = analyse(spliced).statements.flatMap((statement) => statement.literals);
      expect(again.map((literal) => literal.value)).toEqual(values);
      expect(spliced.startsWith("INSERT INTO customers (note, ssn) VALUES ('日本', ")).toBe(true);
    }), { numRuns: 100 });
  });
});

describe('canonicalNumeric (numeric_out of a numeric constant)', () => {
  it.each([
    ['0', '0'], ['-0', '0'], ['-0.00', '0.00'], ['007', '7'], ['1.50', '1.50'], ['.5', '0.5'], ['5.', '5'],
    ['1e3', '1000'], ['1.5e3', '1500'], ['1.50e1', '15.0'], ['1.5e-3', '0.0015'], ['-2E+2', '-200'],
    ['1_000_000.000_1', '1000000.0001'], ['0x10', '16'], ['-0o17', '-15'], ['0b101', '5'], ['0xFFFFFFFFFFFFFFFFFF', '4722366482869645213695'],
  ])('%s → %s', (written, canonical) => {
    expect(canonicalNumeric(written)).toBe(canonical);
  });

  it('refuses what is no number', () => {
    expect(canonicalNumeric('abc')).toBeUndefined();
    expect(canonicalNumeric('1e99999')).toBeUndefined();
  });
});
