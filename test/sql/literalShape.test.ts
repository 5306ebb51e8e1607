/** Literal shapes, and the analysis cache answering texts that differ only in their constants. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalShapeOf, matchesShape, shapePattern } from '../../src/proxy/sql/literalShape.js';
import { analyseSql, SqlAnalysisCache } from '../../src/proxy/sql/index.js';
import { testSchema } from './sqlTestSchema.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

const DENIED = new Set(['set_config', 'pg_read_file']);
const shape = (sql: string): string | undefined => literalShapeOf(sql, DENIED)?.key;

describe('literalShapeOf', () => {
  it('gives texts that differ only in string and number constants one shape', () => {
    expect(shape("SELECT a FROM t WHERE id = 42 AND name = 'x'")).toBe('SELECT a FROM t WHERE id = $n AND name = $s');
    expect(shape("select a from t where id = 7.5 and name = 'it''s'")).toBe('select a from t where id = $n and name = $s');
    expect(shape("UPDATE t SET note = 'ü' WHERE id = 1;  \n")).toBe('UPDATE t SET note = $s WHERE id = $n;  \n');
    expect(shape('DELETE FROM t2 WHERE "col 1" = 3')).toBe('DELETE FROM t2 WHERE "col 1" = $n');
    expect(shape("INSERT INTO t VALUES (1, 'a')")).toBe('INSERT INTO t VALUES ($n, $s)');
  });

  it.each([
    ['a parameter', 'SELECT a FROM t WHERE id = $1'],
    ['dollar quoting', 'SELECT $$x$$'],
    ['an escape string', "SELECT E'\\x41'"],
    ['a Unicode string', "SELECT U&'d\\0061t'"],
    ['a bit string', "SELECT B'101'"],
    ['a line comment', 'SELECT 1 -- note'],
    ['a block comment', 'SELECT /* x */ 1'],
    ['two statements', 'SELECT 1; SELECT 2'],
    ['a CTE', 'WITH x AS (SELECT 1) SELECT * FROM x'],
    ['SELECT INTO', 'SELECT 1 INTO t'],
    ['a denied function', "SELECT set_config('search_path', 'x', false)"],
    ['a denied function, quoted', `SELECT "SET_CONFIG"('role', 'x', false)`],
    ['a denied function, qualified', "SELECT pg_catalog.pg_read_file('f')"],
    ['another statement kind', 'SET search_path = x'],
    ['an unterminated string', "SELECT 'x"],
    ['an unterminated name', 'SELECT "x'],
    ['an exponent', 'SELECT 1e5'],
    ['a NUL', 'SELECT 1\u0000'],
  ])('gives no shape to a text with %s', (_, sql) => {
    expect(shape(sql)).toBeUndefined();
  });

  it('gives UTF-8 byte lengths and constant offsets, whatever stands before a constant (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom('a', 'ä', 'naïve_col', '日本', '𝔘x', '= ', ', ', ' '),
      fc.string({ unit: 'grapheme', maxLength: 4 }).map((text) => `"${text.replaceAll('"', '""')}x"`),
      fc.string({ unit: 'grapheme', maxLength: 6 }).map((text) => ` '${text.replaceAll("'", "''")}' `),
      fc.nat(99_999).map((n) => ` ${n} `),
    );
    fc.assert(fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
      const sql = `SELECT x FROM t WHERE ${pieces.join(' ')}`;
      const found = literalShapeOf(sql, DENIED);
      if (found === undefined) return;
      expect(found.byteLength).toBe(Buffer.byteLength(sql, 'utf8'));
      const bytes = Buffer.from(sql, 'utf8');
      for (const offset of found.constantOffsets) {
        const first = bytes[offset] as number;
        expect(first === 0x27 || (first >= 0x30 && first <= 0x39)).toBe(true);
      }
      expect(found.constantOffsets.length).toBe((found.key.match(/\$[sn]/g) ?? []).length);
    }));
  });

  it('finds a denied word or INTO in any case, wherever it stands (property)', () => {
    const spelled = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
      .map((upper) => [...word].map((char, i) => (upper[i] ? char.toUpperCase() : char)).join(''));
    const filler = fc.constantFrom('a', 'b_1', 'note', 'id', 'abalance', 'pgbench_accounts', 'setconfig', 'set_configs', 'intox');
    const denied = fc.constantFrom('set_config', 'pg_read_file').chain(spelled).map((word) => `${word}('x')`);
    fc.assert(fc.property(fc.array(filler, { maxLength: 6 }), denied, fc.nat(6), (words, call, at) => {
      const parts: string[] = [...words];
      parts.splice(Math.min(at, parts.length), 0, call);
      expect(shape(`SELECT ${parts.join(', ')} FROM t WHERE id = 1`)).toBeUndefined();
      expect(shape(`SELECT ${[...words, 'x'].join(', ')} FROM t WHERE id = 1`)).toBeDefined();
    }));
    fc.assert(fc.property(spelled('into'), (into) => {
      expect(shape(`SELECT 1 ${into} t`)).toBeUndefined();
      expect(shape(`INSERT ${into} t VALUES (1)`)).toBe(`INSERT ${into} t VALUES ($n)`);
    }));
  });

  it('takes the first word in any case, and only those four words (property)', () => {
    const spelled = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
      .map((upper) => [...word].map((char, i) => (upper[i] ? char.toUpperCase() : char)).join(''));
    const first = fc.constantFrom('select', 'insert', 'update', 'delete').chain(spelled);
    fc.assert(fc.property(first, fc.nat(5), fc.constantFrom('', 'x', 's', '_', '1'), (word, at, extra) => {
      expect(shape(`${word} 1`)).toBe(`${word} $n`);
      // Another word: one letter off, longer, shorter, or a look-alike outside ASCII.
      const other = word.slice(0, at) + extra + word.slice(at + 1);
      if (other.toLowerCase() !== word.toLowerCase()) expect(shape(`${other} 1`)).toBeUndefined();
      expect(shape(`${word}${extra || 'x'} 1`)).toBeUndefined();
    }));
    expect(shape('selee6 1')).toBeUndefined(); // the same word hash as select's
    expect(shape('ſelect 1')).toBeUndefined();
    expect(shape('İnsert INTO t VALUES (1)')).toBeUndefined();
  });

  it('matches a kept pattern exactly when the two keys are equal, the hash only a first filter (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom('a', 'A', 'ä', 'id', 'ID', '= ', ', ', ' ', '  ', '"q"', '"Q"', '(', ')', '"$n"', '"$s"'),
      fc.string({ unit: 'grapheme', maxLength: 3 }).map((text) => ` '${text.replaceAll("'", "''")}' `),
      fc.nat(999).map((n) => ` ${n} `),
    );
    const text = fc.array(piece, { maxLength: 6 }).map((pieces) => `SELECT x FROM t WHERE ${pieces.join('')}`);
    fc.assert(fc.property(text, text, (a, b) => {
      const first = literalShapeOf(a, DENIED);
      const second = literalShapeOf(b, DENIED);
      if (first === undefined || second === undefined) return;
      if (first.key === second.key) expect(second.hash).toBe(first.hash);
      expect(matchesShape(shapePattern(a, first), b, second)).toBe(first.key === second.key);
    }));
    const one = literalShapeOf('SELECT a FROM t WHERE id = 1', DENIED);
    const other = literalShapeOf('select a from t where id = 2', DENIED);
    expect(one !== undefined && other !== undefined && matchesShape(shapePattern('SELECT a FROM t WHERE id = 1', one), 'select a from t where id = 2', other)).toBe(false);
  });

  it('runs in linear time on adversarial text', () => {
    const long = `SELECT ${"'".repeat(1)}${'a'.repeat(200_000)}`;
    const started = performance.now();
    expect(shape(long)).toBeUndefined();
    expect(shape(`SELECT ${'"x" '.repeat(50_000)}`)).toBeDefined();
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('SqlAnalysisCache by literal shape', () => {
  it('answers a text of a known shape without analysing it, exactly as a fresh analysis would', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema({ listNames: true });
    cache.analyse('SELECT id, note FROM plain WHERE id = 1', schema, 'g');
    const calls = schema.resolveCalls;
    const text = 'SELECT id, note FROM plain WHERE id = 12345';
    expect(cache.analyse(text, schema, 'g')).toEqual(analyseSql(text, schema));
    expect(cache.shapeHits).toBe(1);
    expect(schema.resolveCalls).toBe(calls + 1); // only the fresh analysis above asked
    cache.analyse("UPDATE plain SET note = 'a' WHERE id = 1 ;\n", schema, 'g');
    const update = "UPDATE plain SET note = 'ünïcødé' WHERE id = 100000 ;\n";
    expect(cache.analyse(update, schema, 'g')).toEqual(analyseSql(update, schema));
    expect(cache.shapeHits).toBe(2);
  });

  it('never answers by shape for a text naming a protected table, or under another schema key', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema({ listNames: true });
    cache.analyse('SELECT id FROM customers WHERE id = 1', schema, 'g');
    cache.analyse('SELECT id FROM customers WHERE id = 2', schema, 'g');
    cache.analyse("SELECT id FROM plain WHERE note = 'customers'", schema, 'g');
    cache.analyse("SELECT id FROM plain WHERE note = 'x'", schema, 'g');
    cache.analyse('SELECT id FROM plain WHERE id = 1', schema, 'g');
    cache.analyse('SELECT id FROM plain WHERE id = 2', schema, 'g2');
    expect(cache.shapeHits).toBe(0);
  });

  it('scans each text again unless its shape holds only numbers and its names are the ones the shape was scanned for', () => {
    // A frozen list handed out again and again, as ColumnPolicies does: a kept shape remembers it.
    let names: readonly string[] = Object.freeze(['customers', 'orders']);
    const schema = { ...testSchema(), protectedTableNames: () => names };
    const cache = new SqlAnalysisCache();
    cache.analyse('SELECT id FROM plain WHERE id = 1', schema, 'g');
    cache.analyse('SELECT id FROM plain WHERE id = 22', schema, 'g');
    expect(cache.shapeHits).toBe(1);
    // A string constant may name a table: such texts are scanned every time.
    cache.analyse("SELECT id FROM plain WHERE note = 'x'", schema, 'g');
    cache.analyse("SELECT id FROM plain WHERE note = 'y'", schema, 'g');
    expect(cache.shapeHits).toBe(2);
    const misses = cache.misses;
    cache.analyse("SELECT id FROM plain WHERE note = 'customers'", schema, 'g');
    expect(cache.shapeHits).toBe(2);
    expect(cache.misses).toBe(misses + 1);
    // Another list (a table newly listed) under the same key: the number-only shape is scanned again.
    names = Object.freeze(['customers', 'orders', 'plain']);
    cache.analyse('SELECT id FROM plain WHERE id = 333', schema, 'g');
    expect(cache.shapeHits).toBe(2);
    expect(cache.misses).toBe(misses + 2);
  });

  it('gives no shape to a number with a dot against it (PostgreSQL reads `12.` and `.5` as one constant each)', () => {
    for (const text of ['SELECT id FROM plain WHERE id = 12.', 'SELECT id FROM plain WHERE id = .5', 'SELECT 5.e3', 'SELECT 1.5.x']) {
      expect(shape(text)).toBeUndefined();
    }
    expect(shape('SELECT id FROM plain WHERE id = 1.5')).toBe('SELECT id FROM plain WHERE id = $n');
    // Else `10.0.` (a syntax error: no analysis to reuse) was answered by the analysis of `12.`.
    const cache = new SqlAnalysisCache();
    const schema = testSchema({ listNames: true });
    for (const [first, second] of [['12.', '10.0.'], ['.5', '.5.5']]) {
      cache.analyse(`SELECT id FROM plain WHERE id = ${first}`, schema, 'g');
      const text = `SELECT id FROM plain WHERE id = ${second}`;
      expect(cache.analyse(text, schema, 'g')).toEqual(analyseSql(text, schema));
    }
    expect(cache.shapeHits).toBe(0);
  });

  it('keeps no shape whose analysis found something (a rule, a session effect, a rejection)', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema({ listNames: true });
    for (const text of ['SELECT * FROM pg_stat_activity WHERE pid = 1', 'SELECT * FROM pg_stat_activity WHERE pid = 2']) {
      expect(cache.analyse(text, schema, 'g')).toEqual(analyseSql(text, schema));
    }
    expect(cache.shapeHits).toBe(0);
  });

  it('answers every text as a fresh analysis would (property)', () => {
    const templates = [
      (a: string, n: number) => `SELECT id, note FROM plain WHERE note = ${a} AND id > ${n}`,
      (a: string, n: number) => `UPDATE plain SET note = ${a} WHERE id = ${n}`,
      (a: string, n: number) => `INSERT INTO plain (id, note) VALUES (${n}, ${a})`,
      (a: string, n: number) => `SELECT id FROM customers WHERE ssn = ${a} OR id = ${n}`,
      (a: string, n: number) => `INSERT INTO customers (id, ssn) VALUES (${n}, ${a})`,
      (a: string, n: number) => `DELETE FROM orders WHERE memo = ${a} AND amount < ${n}`,
      (a: string, n: number) => `SELECT ${a} AS x, ${n} AS y`,
      (a: string, n: number) => `SELECT id FROM plain WHERE id IN (${n}, -${n}, 1) AND note <> ${a} OR ${a} = note`,
      (a: string, n: number) => `SELECT o.id FROM orders o JOIN plain p ON p.id = o.id WHERE p.note = ${a} AND o.amount > -${n}.5`,
      // Numbers only: texts of one shape are answered without scanning them again.
      (_: string, n: number) => `SELECT id, note FROM plain WHERE id = ${n} OR id > -${n}.${n}`,
      (_: string, n: number) => `SELECT id FROM customers WHERE id = ${n}`,
      (_: string, n: number) => `DELETE FROM orders WHERE amount < ${n}`,
    ];
    // Strings, some of which name a setting word (the analysis reports those too).
    const content = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('names', 'a reset', 'set_config', 'U&x'));
    const literal = content.map((text) => `'${text.replaceAll("'", "''")}'`);
    // Names listed afresh on each call, and one frozen list handed out each time (as ColumnPolicies does).
    const listed = Object.freeze(['customers', 'orders', 'accounts', 'Mixed']);
    for (const schema of [testSchema({ listNames: true }), { ...testSchema(), protectedTableNames: () => listed }]) {
      const cache = new SqlAnalysisCache();
      fc.assert(fc.property(fc.nat(templates.length - 1), literal, fc.nat(1_000_000), (which, a, n) => {
        const text = (templates[which] as (a: string, n: number) => string)(a, n);
        expect(cache.analyse(text, schema, 'g')).toEqual(analyseSql(text, schema));
      }), { numRuns: 300 });
      expect(cache.shapeHits).toBeGreaterThan(50);
    }
  });
});
