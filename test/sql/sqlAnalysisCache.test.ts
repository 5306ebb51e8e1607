/** The LRU of analyses, and analysis throughput (logged, not asserted: timings are noisy). */
import { describe, expect, it } from 'vitest';
import { analyseSql, SqlAnalysisCache } from '../../src/proxy/sql/index.js';
import { testSchema } from './sqlTestSchema.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

describe('SqlAnalysisCache', () => {
  it('returns the same analysis for the same text and schema key, and asks the schema once', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema();
    const first = cache.analyse('SELECT * FROM customers WHERE ssn = $1', schema, 'g1');
    const calls = schema.resolveCalls;
    expect(cache.analyse('SELECT * FROM customers WHERE ssn = $1', schema, 'g1')).toBe(first);
    expect(schema.resolveCalls).toBe(calls);
    expect(cache.hits).toBe(1);
  });

  it('analyses again under another schema key (policy reload, other search_path)', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema();
    const first = cache.analyse('SELECT * FROM customers WHERE ssn = $1', schema, 'g1');
    expect(cache.analyse('SELECT * FROM customers WHERE ssn = $1', schema, 'g2')).not.toBe(first);
  });

  it('evicts the least recently used entry', () => {
    const cache = new SqlAnalysisCache({ maxEntries: 2 });
    const schema = testSchema();
    const a = cache.analyse('SELECT 1', schema, 'g');
    cache.analyse('SELECT 2', schema, 'g');
    cache.analyse('SELECT 1', schema, 'g');
    cache.analyse('SELECT 3', schema, 'g');
    expect(cache.size).toBe(2);
    expect(cache.analyse('SELECT 1', schema, 'g')).toBe(a);
    cache.analyse('SELECT 2', schema, 'g');
    expect(cache.misses).toBe(4);
  });

  it('never evicts an entry used at least once in every maxEntries / 2 lookups, though it moves it only now and then', () => {
    const cache = new SqlAnalysisCache({ maxEntries: 8 });
    const schema = testSchema();
    const hot = cache.analyse('SELECT 0', schema, 'g');
    for (let i = 1; i <= 60; i++) {
      cache.analyse(`SELECT ${i}`, schema, 'g');
      if (i % 3 === 0) expect(cache.analyse('SELECT 0', schema, 'g')).toBe(hot);
    }
    expect(cache.misses).toBe(61);
    expect(cache.size).toBe(8);
    // An entry left alone for maxEntries insertions is gone.
    for (let i = 61; i <= 68; i++) cache.analyse(`SELECT ${i}`, schema, 'g');
    expect(cache.analyse('SELECT 0', schema, 'g')).not.toBe(hot);
  });

  it('bounds the entries of all schema keys together, evicting the oldest entry whichever key holds it', () => {
    const cache = new SqlAnalysisCache({ maxEntries: 4 });
    const schema = testSchema();
    const old = cache.analyse('SELECT 1', schema, 'g1');
    cache.analyse('SELECT 2', schema, 'g1');
    const recent = cache.analyse('SELECT 1', schema, 'g2');
    for (let i = 3; i <= 20; i++) {
      cache.analyse(`SELECT ${i}`, schema, `g${i}`);
      expect(cache.size).toBeLessThanOrEqual(4);
    }
    expect(cache.size).toBe(4);
    expect(cache.analyse('SELECT 1', schema, 'g1')).not.toBe(old);
    expect(cache.analyse('SELECT 1', schema, 'g2')).not.toBe(recent);
    const misses = cache.misses;
    cache.analyse('SELECT 20', schema, 'g20');
    expect(cache.misses).toBe(misses);
  });

  it('keeps an entry used often under one schema key while another key streams new texts', () => {
    const cache = new SqlAnalysisCache({ maxEntries: 8 });
    const schema = testSchema();
    const hot = cache.analyse('SELECT 0', schema, 'A');
    for (let i = 1; i <= 60; i++) {
      cache.analyse(`SELECT ${i}`, schema, 'B');
      if (i % 3 === 0) expect(cache.analyse('SELECT 0', schema, 'A')).toBe(hot);
    }
    expect(cache.size).toBe(8);
  });

  it('bounds shapes alike, and keeps at most 64 schema keys', () => {
    const cache = new SqlAnalysisCache({ maxEntries: 4 });
    const schema = testSchema({ listNames: true });
    for (let i = 0; i < 10; i++) cache.analyse(`SELECT id${i} FROM plain WHERE id = ${i}`, schema, 'g');
    const hits = cache.shapeHits;
    cache.analyse('SELECT id9 FROM plain WHERE id = 77', schema, 'g');
    cache.analyse('SELECT id0 FROM plain WHERE id = 77', schema, 'g');
    expect(cache.shapeHits).toBe(hits + 1); // the newest shape is kept, the oldest was evicted
    const roomy = new SqlAnalysisCache({ maxEntries: 1000 });
    const first = roomy.analyse('SELECT 1', schema, 'k0');
    const second = roomy.analyse('SELECT 1', schema, 'k1');
    for (let i = 2; i <= 64; i++) roomy.analyse('SELECT 1', schema, `k${i}`);
    expect(roomy.size).toBe(64);
    expect(roomy.analyse('SELECT 1', schema, 'k1')).toBe(second);
    expect(roomy.analyse('SELECT 1', schema, 'k0')).not.toBe(first);
  });

  it('keeps no analysis holding plaintext constants, and no over-long text', () => {
    const cache = new SqlAnalysisCache({ maxTextLength: 100 });
    const schema = testSchema();
    cache.analyse("SELECT * FROM customers WHERE ssn = '123-45-6789'", schema, 'g');
    cache.analyse(`SELECT * FROM plain WHERE note = '${'x'.repeat(200)}'`, schema, 'g');
    expect(cache.size).toBe(0);
  });
});

describe('throughput', () => {
  it('logs analyses per second for typical statements', () => {
    const schema = testSchema();
    const statements = {
      'INSERT with params': 'INSERT INTO customers (name, ssn, email, note) VALUES ($1, $2, $3, $4) RETURNING id',
      'INSERT with literals': "INSERT INTO customers (name, ssn, email) VALUES ('Ann', '123-45-6789', 'ann@example.com')",
      'SELECT join': 'SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.ssn = $1 AND o.card = ANY($2)',
      'unprotected SELECT': 'SELECT * FROM plain WHERE id = $1',
    };
    for (const [name, sql] of Object.entries(statements)) {
      const rounds = 2000;
      for (let i = 0; i < 2000; i++) analyseSql(sql, schema); // warm-up (JIT)
      let started = performance.now();
      for (let i = 0; i < rounds; i++) analyseSql(sql, schema);
      const uncached = rounds / ((performance.now() - started) / 1000);
      const cache = new SqlAnalysisCache();
      started = performance.now();
      for (let i = 0; i < rounds; i++) cache.analyse(sql, schema, 'g');
      const cached = rounds / ((performance.now() - started) / 1000);
      console.log(`sql analysis ${name}: ${Math.round(uncached)} analyses/s uncached, ${Math.round(cached)}/s through the cache`);
      expect(uncached).toBeGreaterThan(0);
    }
  });
});
