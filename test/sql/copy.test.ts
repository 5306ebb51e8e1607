/** COPY … FROM STDIN into tables with protected columns: target, columns and options for the row rewriter. */
import { describe, expect, it } from 'vitest';
import type { CopyOptions } from '../../src/proxy/sql/index.js';
import { column, EMAIL, IBAN, SSN } from './sqlTestSchema.js';
import { analyseOne, describeLiterals, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

const TEXT_DEFAULTS: CopyOptions = {
  format: 'text', delimiter: '\t', null: '\\N', header: false, quote: '', escape: '',
  forceNotNull: [], forceNull: [], default: undefined,
};
const CSV_DEFAULTS: CopyOptions = { ...TEXT_DEFAULTS, format: 'csv', delimiter: ',', null: '', quote: '"', escape: '"' };

describe('COPY FROM STDIN', () => {
  it('lists all columns of the table when no column list is given', () => {
    const { copyFrom } = analyseOne('COPY customers FROM STDIN');
    expect(copyFrom).toEqual({
      schema: 'public',
      table: 'customers',
      columns: ['id', 'name', 'ssn', 'email', 'note', 'created'].map((name) => ({
        column: column('customers', name),
        protected: name === 'ssn' || name === 'email',
      })),
      options: TEXT_DEFAULTS,
    });
  });

  it('keeps the column list order', () => {
    const { copyFrom } = analyseOne('COPY billing.accounts (label, iban) FROM STDIN');
    expect(copyFrom?.columns).toEqual([
      { column: column('accounts', 'label', 'billing'), protected: false },
      { column: IBAN, protected: true },
    ]);
  });

  it.each<[string, CopyOptions]>([
    ['COPY customers FROM STDIN', TEXT_DEFAULTS],
    ['COPY customers FROM STDIN WITH (FORMAT text)', TEXT_DEFAULTS],
    ["COPY customers FROM STDIN (DELIMITER '|', NULL '')", { ...TEXT_DEFAULTS, delimiter: '|', null: '' }],
    ['COPY customers FROM STDIN (FORMAT csv)', CSV_DEFAULTS],
    ['COPY customers FROM STDIN WITH CSV HEADER', { ...CSV_DEFAULTS, header: true }],
    ["COPY customers FROM STDIN (FORMAT csv, HEADER match, QUOTE '''', ESCAPE '\\')", { ...CSV_DEFAULTS, header: 'match', quote: "'", escape: '\\' }],
    ['COPY customers FROM STDIN (FORMAT csv, HEADER false)', CSV_DEFAULTS],
    ['COPY customers FROM STDIN (FORMAT csv, HEADER 1)', { ...CSV_DEFAULTS, header: true }],
    ["COPY customers FROM STDIN CSV DELIMITER ';' NULL 'NULL' FORCE NOT NULL ssn, email", { ...CSV_DEFAULTS, delimiter: ';', null: 'NULL', forceNotNull: ['ssn', 'email'] }],
    ['COPY customers FROM STDIN (FORMAT csv, FORCE_NULL *, FORCE_NOT_NULL (note))', { ...CSV_DEFAULTS, forceNull: '*', forceNotNull: ['note'] }],
    ["COPY customers FROM STDIN (FORMAT csv, DEFAULT '@d', FREEZE, ON_ERROR ignore, ENCODING 'UTF8')", { ...CSV_DEFAULTS, default: '@d' }],
  ])('%s', (sql, options) => {
    const statement = analyseOne(sql);
    expect(statement.rejection).toBeUndefined();
    expect(statement.copyFrom?.options).toEqual(options);
  });

  it('maps the constants of COPY … WHERE', () => {
    const sql = "COPY customers FROM STDIN WHERE email = 'x@y.z'";
    const statement = analyseOne(sql);
    expect(describeLiterals(sql, statement)).toEqual([["'x@y.z'", 'x@y.z', EMAIL]]);
    expect(statement.copyFrom?.table).toBe('customers');
  });

  it('analyses COPY (query) TO as its query', () => {
    const statement = analyseOne('COPY (SELECT * FROM customers WHERE ssn = $1) TO STDOUT');
    expect(statement.params).toEqual([{ param: 1, column: SSN, locations: [42] }]);
    expect(statement.copyFrom).toBeUndefined();
  });

  it('reports binary COPY FROM STDIN for rewriting, as text and csv', () => {
    for (const sql of ['COPY customers (ssn, note) FROM STDIN (FORMAT binary)', 'COPY customers (ssn, note) FROM STDIN WITH BINARY']) {
      const statement = analyseOne(sql);
      expect(statement.rejection).toBeUndefined();
      expect(statement.copyFrom?.options.format).toBe('binary');
      expect(statement.copyFrom?.columns.map((column) => column.protected)).toEqual([true, false]);
    }
  });

  it('needs nothing for tables or column lists without protected columns', () => {
    expect(analyseOne('COPY plain FROM STDIN').copyFrom).toBeUndefined();
    expect(analyseOne("COPY customers (id, note) FROM '/tmp/x'").rejection).toBeUndefined();
    expect(analyseOne('COPY unknown_table FROM STDIN (FORMAT binary)').rejection).toBeUndefined();
  });
});
