/** The pure parts of the policy hooks: binary codecs, arrays, COPY row layouts, view rule origins. */
import { describe, expect, it } from 'vitest';
import { formatBinaryArray, formatTextArray, parseBinaryArray, parseTextArray } from '../../../src/proxy/enforcement/valueCodecs/arrayCodecs.js';
import { readCsvField, readTextField, RowScanner, splitFields, writeCsvField, writeTextField } from '../../../src/proxy/enforcement/readPath/copyRowFormat.js';
import { decodeBinary, encodeBinary, TYPE_OIDS } from '../../../src/proxy/enforcement/valueCodecs/valueCodecs.js';
import { viewColumnOrigins } from '../../../src/proxy/enforcement/catalog/viewRuleOrigins.js';
import type { CopyOptions } from '../../../src/proxy/sql/index.js';

const TEXT: CopyOptions = { format: 'text', delimiter: '\t', null: '\\N', header: false, quote: '', escape: '', forceNotNull: [], forceNull: [], default: undefined };
const CSV: CopyOptions = { ...TEXT, format: 'csv', delimiter: ',', null: '', quote: '"', escape: '"' };

describe('binary codecs', () => {
  it.each([
    [TYPE_OIDS.date, '1990-05-17'], [TYPE_OIDS.date, '2000-01-01'], [TYPE_OIDS.date, '1999-12-31'], [TYPE_OIDS.date, '5610-06-02'],
    [TYPE_OIDS.uuid, '6f1c2d3e-1111-4222-8333-123456789abc'], [TYPE_OIDS.inet, '10.1.2.3'], [TYPE_OIDS.inet, '10.1.2.0/24'],
    [TYPE_OIDS.numeric, '0'], [TYPE_OIDS.numeric, '12345.678'], [TYPE_OIDS.numeric, '-0.0001'], [TYPE_OIDS.numeric, '100000000'],
    [TYPE_OIDS.int4, '-42'], [TYPE_OIDS.int8, '9007199254740993'], [TYPE_OIDS.text, 'Zoë 名前'],
  ])('round-trips type %i value %s', (oid, text) => {
    const bytes = encodeBinary(oid, text);
    expect(bytes).toBeDefined();
    expect(decodeBinary(oid, bytes as Buffer)).toBe(text);
  });

  it('knows PostgreSQL’s own bytes', () => {
    expect(encodeBinary(TYPE_OIDS.date, '2000-01-02')).toEqual(Buffer.from([0, 0, 0, 1]));
    expect(encodeBinary(TYPE_OIDS.numeric, '12345.678')).toEqual(Buffer.from([0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]));
    expect(decodeBinary(TYPE_OIDS.date, Buffer.from([0x7f, 0xff, 0xff, 0xff]))).toBeUndefined(); // infinity
    expect(decodeBinary(12345, Buffer.from('x'))).toBeUndefined();
  });
});

describe('arrays', () => {
  it('reads and writes one-dimensional text arrays', () => {
    expect(parseTextArray('{a, "b c","d\\"e",NULL,"NULL"}')).toEqual(['a', 'b c', 'd"e', null, 'NULL']);
    expect(parseTextArray('{{1,2},{3,4}}')).toBeUndefined();
    expect(formatTextArray(['a', null, 'b"c'])).toBe('{"a",NULL,"b\\"c"}');
  });

  it('reads and writes binary arrays', () => {
    const array = { elementType: 25, elements: [Buffer.from('x'), null], lowerBound: 1 };
    expect(parseBinaryArray(formatBinaryArray(array))).toEqual(array);
  });
});

describe('COPY rows', () => {
  it('finds rows across chunks, CSV quotes with newlines included', () => {
    const scanner = new RowScanner(CSV);
    expect(scanner.nextRowEnd(Buffer.from('"a\nb",c'))).toBe(-1);
    const whole = Buffer.from('"a\nb",c\nnext');
    expect(scanner.nextRowEnd(whole)).toBe(8);
  });

  it('reads and writes text and CSV fields', () => {
    const row = Buffer.from('a\\tb\t\\N\tc\\\\d');
    const fields = splitFields(row, TEXT);
    expect(fields.map((field) => readTextField(row.subarray(field.start, field.end), TEXT))).toEqual(['a\tb', null, 'c\\d']);
    expect(writeTextField('a\tb\\c\n', TEXT)).toBe('a\\tb\\\\c\\n');
    const csv = Buffer.from('"x, ""y""",,""');
    const csvFields = splitFields(csv, CSV);
    expect(csvFields.map((field) => readCsvField(csv.subarray(field.start, field.end), field, CSV, false, false))).toEqual(['x, "y"', null, '']);
    expect(writeCsvField('x, "y"', CSV, false)).toBe('"x, ""y"""');
    expect(writeCsvField('plain', CSV, false)).toBe('plain');
    expect(writeCsvField('', CSV, false)).toBe('""');
  });
});

describe('view rule origins', () => {
  it('maps plain view columns to their base columns, not expressions', () => {
    const action = '({QUERY :commandType 1 :rtable ({RANGETBLENTRY :subquery {QUERY :targetList ({TARGETENTRY :resno 1 :resname z :resorigtbl 7 :resorigcol 7 :resjunk false})}}) '
      + ':targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 1} :resno 1 :resname id :ressortgroupref 0 :resorigtbl 16389 :resorigcol 1 :resjunk false} '
      + '{TARGETENTRY :expr {FUNCEXPR :args ({VAR :varno 1})} :resno 2 :resname e :ressortgroupref 0 :resorigtbl 0 :resorigcol 0 :resjunk false}) :override 0})';
    expect([...viewColumnOrigins(action)]).toEqual([[1, { oid: 16389, attnum: 1 }]]);
  });
});
