import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ColumnTally, DISCOVERED_KINDS, SUGGEST_THRESHOLD, chooseMethod, hintsFor, kindsForFamily, looksLikeProperName, nameWords,
  percent, recognises, scoreColumn,
} from '../../src/discovery/index.js';
import type { ColumnType } from '../../src/policy/index.js';

function tally(column: string, values: readonly (string | null)[], family: ColumnType['family'] = 'text'): ColumnTally {
  const t = new ColumnTally(column, kindsForFamily(family));
  for (const value of values) t.add(value);
  return t;
}

describe('column-name hints', () => {
  it('splits snake_case, camelCase and digits into words', () => {
    expect(nameWords('cardNumber2')).toEqual(['card', 'number', '2']);
    expect(nameWords('BIRTH_DATE')).toEqual(['birth', 'date']);
    expect(nameWords('Contact Email')).toEqual(['contact', 'email']);
  });

  it.each([
    ['ccn', 'card_number', ['card']],
    ['ccn', 'creditcard', ['creditcard']],
    ['name', 'full_name', ['full', 'name']],
    ['name', 'surname', ['surname']],
    ['name', 'name', ['name']],
    ['name', 'product_name', []],
    ['name', 'username', []],
    ['date', 'dob', ['dob']],
    ['date', 'created_on', []],
    ['uuid', 'external_id', ['external']],
    ['uuid', 'request_id', []],
    ['address', 'street_address', ['street', 'address']],
    ['address', 'ip_address', []],
    ['address', 'email_address', []],
    ['ipv4', 'ip_address', ['ip']],
  ] as const)('%s in %s: %j', (kind, column, expected) => {
    expect(hintsFor(kind, column)).toEqual(expected);
  });
});

describe('recognisers', () => {
  it('a proper name has no digit and at most four words', () => {
    fc.assert(fc.property(fc.string(), fc.integer({ min: 0, max: 9 }), (text, digit) => {
      expect(looksLikeProperName(`${text}${digit}`)).toBe(false);
    }));
    fc.assert(fc.property(fc.array(fc.constantFrom('Ada', 'de', 'Lovelace'), { minLength: 5, maxLength: 9 }), (words) => {
      expect(looksLikeProperName(words.join(' '))).toBe(false);
    }));
    for (const name of ['Ada Lovelace', 'Jean-Luc Picard', "Seán O'Brien", '王伟', 'प्रिया शर्मा', 'Rio de Janeiro']) expect(looksLikeProperName(name)).toBe(true);
    for (const text of ['no answer', 'called back, will retry', 'Ada, Lovelace!']) expect(looksLikeProperName(text)).toBe(false);
  });

  it('without a hint, ssns and phones count only in the layouts people write them in', () => {
    expect(recognises('ssn', '123-45-6789', false)).toBe(true);
    expect(recognises('ssn', '123456789', false)).toBe(false);
    expect(recognises('ssn', '123456789', true)).toBe(true);
    expect(recognises('ssn', '666-45-6789', true)).toBe(false);
    expect(recognises('phone', '+44 20 7946 0958', false)).toBe(true);
    expect(recognises('phone', '4420794609', false)).toBe(false);
    expect(recognises('phone', '4420794609', true)).toBe(true);
  });

  it('never suggests free text: text is not a discovered kind', () => {
    expect(DISCOVERED_KINDS).not.toContain('text');
    expect(kindsForFamily('integer')).toEqual([]);
    expect(kindsForFamily('inet')).toEqual(['ipv4']);
  });

  it('the recognisers run in linear time on long hostile input', () => {
    const hostile = `${'a'.repeat(50_000)}@${'-'.repeat(50_000)}`;
    const start = performance.now();
    for (const kind of DISCOVERED_KINDS) recognises(kind, hostile, true);
    expect(performance.now() - start).toBeLessThan(1000);
  });
});

describe('scoring', () => {
  it('suggests a kind exactly when its share reaches the threshold', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 60 }), (valid, invalid) => {
      const values = [...Array<string>(valid).fill('4111 1111 1111 1111'), ...Array<string>(invalid).fill('hello'), null];
      const score = scoreColumn(tally('card_number', values));
      expect(score.sampleSize).toBe(valid + invalid);
      expect(score.score).toBeCloseTo(valid / (valid + invalid));
      expect(score.suggested).toBe(valid / (valid + invalid) >= SUGGEST_THRESHOLD);
      if (score.suggested) expect(score).toMatchObject({ kind: 'ccn', hints: ['card'] });
    }));
  });

  it('prefers the most specific kind: dates are not suggested as phones', () => {
    const score = scoreColumn(tally('dob', ['1990-01-02', '1985-12-31', '2001-06-15']));
    expect(score).toMatchObject({ kind: 'date', suggested: true, score: 1 });
  });

  it('needs a name hint for kinds whose values say too little', () => {
    const dates = ['2024-01-02', '2024-02-03'];
    expect(scoreColumn(tally('created_on', dates, 'date'))).toMatchObject({ kind: 'date', score: 1, suggested: false });
    expect(scoreColumn(tally('birth_date', dates, 'date'))).toMatchObject({ kind: 'date', score: 1, suggested: true });
  });

  it('does not suggest 16-digit codes that fail Luhn as cards', () => {
    const codes = ['5105105105105101', '5105105105105102', '5105105105105103', '5105105105105104'];
    const score = scoreColumn(tally('code', codes));
    expect(score.suggested).toBe(false);
  });

  it('an empty sample suggests nothing', () => {
    expect(scoreColumn(tally('email', [null, null]))).toMatchObject({ suggested: false, sampleSize: 0, kind: 'email' });
  });

  it('rounds shares down', () => {
    expect(percent(0.999)).toBe('99%');
    expect(percent(1)).toBe('100%');
    expect(percent(0.8)).toBe('80%');
  });
});

describe('method choice', () => {
  const type = (display: string, family: ColumnType['family'], maxLength?: number): ColumnType =>
    (maxLength === undefined ? { display, family } : { display, family, maxLength });

  it('keeps the column type', () => {
    expect(chooseMethod('date', type('date', 'date')).method).toBe('fpe');
    expect(chooseMethod('uuid', type('uuid', 'uuid')).method).toBe('fpe');
    expect(chooseMethod('ipv4', type('inet', 'inet')).method).toBe('fpe');
    expect(chooseMethod('name', type('text', 'text')).method).toBe('tokenise');
    expect(chooseMethod('name', type('character varying(40)', 'varchar', 40)).method).toBe('fpe');
    expect(chooseMethod('ccn', type('text', 'text')).method).toBe('fpe');
    expect(chooseMethod('ipv4', type('character varying(12)', 'varchar', 12)).method).toBe('passthrough');
  });
});
