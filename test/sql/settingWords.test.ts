/** Setting words: what a text names that may change the settings the analysis relies on. */
import { describe, expect, it } from 'vitest';
import { analyseSql, SqlAnalysisCache } from '../../src/proxy/sql/index.js';
import { NO_SETTING_WORDS, settingWordsOf } from '../../src/proxy/sql/settingWords.js';
import { testSchema } from './sqlTestSchema.js';
import { useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

describe('settingWordsOf', () => {
  it.each([
    ['SET NAMES LATIN1', true, true],
    ["SELECT set_config('standard_conforming_strings', 'off', false)", true, true],
    ['UPDATE U&"pg\\005fsettings" SET setting = 1', true, true],
    ['RESET ALL', true, true],
    ["SELECT id FROM t WHERE note = 'password reset'", true, false],
    ["SELECT 'client_encoding' AS x", true, false],
    // The scanner rejects the text: all of it counts.
    ["SELECT 'reset", true, true],
    ['SELECT id FROM t WHERE id = 1', false, false],
    ['SELECT resets, named FROM t', false, false],
  ])('%s: in the text %s, in its code %s', (sql, inText, inCode) => {
    expect(settingWordsOf(sql)).toEqual({ inText, inCode });
    expect(analyseSql(sql, testSchema()).settingWords).toEqual({ inText, inCode });
  });
});

describe('the analysis cache and setting words', () => {
  it('answers a text whose string names a setting word afresh, not by its shape', () => {
    const cache = new SqlAnalysisCache();
    const schema = testSchema({ listNames: true });
    cache.analyse("SELECT id FROM plain WHERE note = 'a'", schema, 'g');
    cache.analyse("SELECT id FROM plain WHERE note = 'b'", schema, 'g');
    expect(cache.shapeHits).toBe(1);
    const named = "SELECT id FROM plain WHERE note = 'names'";
    expect(cache.analyse(named, schema, 'g').settingWords).toEqual({ inText: true, inCode: false });
    expect(cache.shapeHits).toBe(1);
    // Nor is a shape kept from such a text.
    cache.analyse("SELECT note FROM plain WHERE note = 'reset'", schema, 'g');
    expect(cache.analyse("SELECT note FROM plain WHERE note = 'x'", schema, 'g').settingWords).toBe(NO_SETTING_WORDS);
    expect(cache.shapeHits).toBe(1);
  });
});
