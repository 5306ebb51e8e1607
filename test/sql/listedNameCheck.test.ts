/**
 * The name scan rules most texts out with a substring search before it scans them: that check
 * must never hide a name the scan would find (case, "quoted" names with "", non-ASCII text).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findListedTableMention, scanListedTableMention } from '../../src/proxy/sql/protectedNameScan.js';

const NAMES = Object.freeze(['customers', 'Orders', 'a"b', 'ας', '\u212Aey', 'İd']);

describe('findListedTableMention', () => {
  it.each([
    ['SELECT * FROM CUSTOMERS', 'customers'],
    ['SELECT * FROM "Orders"', 'Orders'],
    ['SELECT * FROM "a""b"', 'a"b'],
    ['SELECT * FROM ΑΣ.Β', 'ας'], // final sigma: the word alone lowers to ας, the whole text to ασ
    ['SELECT key FROM t', '\u212Aey'], // the Kelvin sign lowers to k
    ["SELECT 'customers'", 'customers'],
    ['SELECT 1 /* orders */', 'Orders'],
    ['SELECT plain FROM accounts WHERE aid = 5', undefined],
    // Escapes PostgreSQL decodes spell a name the text does not hold as written.
    ['DO $$ BEGIN INSERT INTO U&"\\0063ustomers" VALUES (1); END $$', 'customers'],
    ['DO $$ BEGIN INSERT INTO u&"!0063ustomers" UESCAPE \'!\' VALUES (1); END $$', 'customers'],
    ['DO $$ BEGIN INSERT INTO U&"\\+000063ustomers" VALUES (1); END $$', 'customers'],
    ["DO E'BEGIN INSERT INTO cust\\x6fmers VALUES (1); END'", 'customers'],
    ["DO E'BEGIN INSERT INTO cust\\157mers VALUES (1); END'", 'customers'],
    ["DO E'BEGIN INSERT INTO cust\\u006fmers VALUES (1); END'", 'customers'],
    ["CREATE FUNCTION f() RETURNS void LANGUAGE sql AS U&'INSERT INTO cust\\006Fmers VALUES (1)'", 'customers'],
    ["DO $$ BEGIN CREATE FUNCTION f() RETURNS void LANGUAGE sql AS E'INSERT INTO U&\"\\\\0063ustomers\" VALUES (1)'; END $$", 'customers'],
    ["SELECT E'\\x41\\n', U&'\\0041'", undefined],
    // A UESCAPE clause itself spelled through escapes, read once they are decoded.
    ["DO U&'BEGIN INSERT INTO U&\"!0063ustomers\" \\0055ESCAPE ''!'' VALUES (1); END'", 'customers'],
    ["DO $$ BEGIN INSERT INTO u&\"!0063ustomers\" UESCAPE /* why */ '!' VALUES (1); END $$", 'customers'],
    ["DO $$ BEGIN INSERT INTO u&\"!0063ustomers\" UESCAPE $q$!$q$ VALUES (1); END $$", 'customers'],
    // What the clause names, however PostgreSQL reads it: a nested comment, a string continued on the next line.
    ["DO $$ BEGIN INSERT INTO U&\"#0063ustomers\" UESCAPE /* /* */ '!' */ '#' VALUES (1); END $$", 'customers'],
    ["DO $$ BEGIN INSERT INTO U&\"#0063ustomers\" UESCAPE ''\n'#' VALUES (1); END $$", 'customers'],
    ["DO $$ BEGIN INSERT INTO U&\"\u00010063ustomers\" UESCAPE '\u0001' VALUES (1); END $$", 'customers'],
    ["SELECT U&'!0041' UESCAPE /* '!'", undefined],
  ])('finds in %s what the scan finds (%s)', (text, expected) => {
    expect(findListedTableMention(text, NAMES)).toBe(expected);
    expect(findListedTableMention(text, [...NAMES])).toBe(expected);
    expect(scanListedTableMention(text, NAMES)).toBe(expected);
  });

  it('takes a text whose escapes it does not decode as naming a listed table (fail closed)', () => {
    const manyClauses = `SELECT ${[...'!#%&*:;<=>'].map((c) => `U&'${c}0041' UESCAPE '${c}'`).join(', ')}`;
    const deep = "SELECT E'\\\\\\\\\\\\\\\\x'";
    const long = `SELECT E'\\n', '${'x'.repeat(70_000)}'`;
    for (const text of [manyClauses, deep, long]) {
      expect(findListedTableMention(text, NAMES)).toBe('customers');
      expect(scanListedTableMention(text, NAMES)).toBe('customers');
    }
    expect(findListedTableMention(`SELECT E'\\n', '${'x'.repeat(60_000)}'`, NAMES)).toBeUndefined();
  });

  it('reads a UESCAPE followed by a row of comments in linear time (a backtracking pattern took 5 s for 30 of them)', () => {
    const text = `DO $$ BEGIN PERFORM 'U& UESCAPE ${'/**/'.repeat(30)}x'; END $$`;
    const started = performance.now();
    expect(findListedTableMention(text, NAMES)).toBeUndefined();
    // Far from the seconds a backtracking pattern takes, far above what a busy machine adds.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('agrees with the scan alone on any text (property)', () => {
    const pieces = fc.constantFrom('customers', 'CUSTOMERS', 'orders', 'a', 'b', 'ΑΣ', 'Σ', 'K', '\u212A', 'ey', 'İ', 'd', 'x',
      '"', '""', "'", '.', ' ', '/*', '*/', '--', '\n', '$', '_', '1', 'select ', 'from ');
    fc.assert(fc.property(fc.array(pieces, { maxLength: 24 }), fc.subarray([...NAMES], { minLength: 1 }), (parts, names) => {
      const text = parts.join('');
      const frozen = Object.freeze([...names]);
      expect(findListedTableMention(text, frozen)).toBe(scanListedTableMention(text, frozen));
      expect(findListedTableMention(text, new Set(names))).toBe(scanListedTableMention(text, names));
    }), { numRuns: 3000 });
  });

  it('checks the names of a list again when it is not frozen (it may have changed)', () => {
    const names = ['accounts'];
    expect(findListedTableMention('SELECT * FROM customers', names)).toBeUndefined();
    names.push('customers');
    expect(findListedTableMention('SELECT * FROM customers', names)).toBe('customers');
  });
});
