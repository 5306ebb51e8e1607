import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DOMAIN_TOO_SMALL, INVALID_VALUE } from '../../../src/engine/errors.js';
import { dateKind, parseDate } from '../../../src/engine/kinds/date.js';
import { decryptAll, encryptAll, failures, roundTrip } from './fpeRoundTrip.js';
import { recordingCipher, shiftCipher, structuredTestCipher, tooSmallCipher } from './testCiphers.js';

const cipher = structuredTestCipher();

/** Independent of calendar.ts: JS Date's proleptic Gregorian calendar, in UTC. */
function utcDate(year: number, month: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d;
}
function isCalendarDate(year: number, month: number, day: number): boolean {
  const d = utcDate(year, month, day);
  return year >= 1 && year <= 9999 && d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

type Layout = 'mdy' | 'dmy' | 'ymd';
interface Fields { layout: Layout; sep: string; year: number; month: number; day: number }

/** Reads a value the way the kind documents it, with its own regexes and rules. */
function readDate(value: string): Fields | undefined {
  let m = /^(\d{4})([/.-])(\d\d)\2(\d\d)$/.exec(value);
  if (m) return { layout: 'ymd', sep: m[2]!, year: +m[1]!, month: +m[3]!, day: +m[4]! };
  m = /^(\d\d)([/.-])(\d\d)\2(\d{4})$/.exec(value);
  if (!m) return undefined;
  const first = +m[1]!;
  return first <= 12
    ? { layout: 'mdy', sep: m[2]!, year: +m[4]!, month: first, day: +m[3]! }
    : { layout: 'dmy', sep: m[2]!, year: +m[4]!, month: +m[3]!, day: first };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
function write(f: Fields): string {
  const y = pad(f.year, 4), m = pad(f.month, 2), d = pad(f.day, 2);
  if (f.layout === 'ymd') return [y, m, d].join(f.sep);
  if (f.layout === 'mdy') return [m, d, y].join(f.sep);
  return [d, m, y].join(f.sep);
}

const MIN_TIME = utcDate(1, 1, 1).getTime();
const MAX_TIME = utcDate(9999, 12, 31).getTime();
const anyDay = fc.integer({ min: 0, max: (MAX_TIME - MIN_TIME) / 86_400_000 }).map((n) => new Date(MIN_TIME + n * 86_400_000));
const separator = fc.constantFrom('/', '-', '.');
const validDate = fc.tuple(anyDay, separator, fc.constantFrom<Layout>('mdy', 'dmy', 'ymd'))
  .filter(([d, , layout]) => layout !== 'dmy' || d.getUTCDate() >= 13)
  .map(([d, sep, layout]) => write({ layout, sep, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }));

describe('date: validity', () => {
  it.each([
    '12/31/2024', '2024-02-29', '31/12/1999', '01.02.2003', '2024/12/31', '2024.12.31',
    '0001-01-01', '9999-12-31', '02-29-2000', '13/01/2024', '29.02.2024',
  ])('accepts %s', (value) => {
    expect(dateKind.isValid(value, 'en')).toBe(true);
  });

  it.each([
    '2023-02-29', '1900-02-29', '02/29/2100', '13/13/2024', '00/10/2024', '12/00/2024', '0000-01-01',
    '1/2/2024', '12/31-2024', '2024-12/31', '2024-12-31T00:00', ' 2024-12-31', '2024-12-31 ',
    '31/02/2024', '31/04/2024', '04/31/2024', '10000-01-01', '１２/31/2024', '12/31/24', '', 'today',
  ])('refuses %j', (value) => {
    expect(dateKind.isValid(value, 'en')).toBe(false);
  });
});

describe('date: fpe', () => {
  it('encrypts realistic dates into real dates of the same layout, and back', () => {
    const values = ['12/31/2024', '2024-02-29', '31/12/1999', '01.02.2003', '0001-01-01', '9999-12-31'];
    const { encrypted, decrypted } = roundTrip(dateKind, values, cipher);
    expect(decrypted).toEqual(values);
    encrypted.forEach((out, i) => {
      const before = readDate(values[i]!)!;
      const after = readDate(out);
      expect(after).toBeDefined();
      expect(after!.layout).toBe(before.layout);
      expect(after!.sep).toBe(before.sep);
      expect(out).toHaveLength(values[i]!.length);
      expect(isCalendarDate(after!.year, after!.month, after!.day)).toBe(true);
    });
  });

  it('ranks dates in day order: the next date of each domain, with wrap-around', () => {
    const shift = shiftCipher();
    expect(encryptAll(dateKind, [
      '12/31/2024', '2024-02-28', '2023-02-28', '2024.12.31', '12-31-9999',
    ], shift)).toEqual([
      '01/01/2025', '2024-02-29', '2023-03-01', '2025.01.01', '01-01-0001',
    ]);
    // DD/MM values move among days 13–31 only.
    expect(encryptAll(dateKind, [
      '31/12/1999', '28/02/2023', '28/02/2024', '29/02/2024', '30/04/2024', '13/05/2024', '31/12/9999',
    ], shift)).toEqual([
      '13/01/2000', '13/03/2023', '29/02/2024', '13/03/2024', '13/05/2024', '14/05/2024', '13/01/0001',
    ]);
    expect(decryptAll(dateKind, ['13/01/2000', '13/01/0001', '01/01/0001'], shift)).toEqual(['31/12/1999', '31/12/9999', '12/31/9999']);
  });

  it('DD/MM ranking walks every late day of 1999–2001 in order', () => {
    const values: string[] = [];
    for (let t = utcDate(1999, 1, 1).getTime(); t <= utcDate(2001, 12, 31).getTime(); t += 86_400_000) {
      const d = new Date(t);
      if (d.getUTCDate() >= 13) values.push(write({ layout: 'dmy', sep: '/', year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }));
    }
    const next = encryptAll(dateKind, values.slice(0, -1), shiftCipher());
    expect(next).toEqual(values.slice(1));
  });

  it('uses the domain of all days for MM/DD and ISO (one call, one tweak) and of late days for DD/MM', () => {
    let lateDays = 0;
    for (let y = 1; y <= 9999; y++) {
      for (let m = 1; m <= 12; m++) lateDays += utcDate(y, m + 1, 0).getUTCDate() - 12;
    }
    const { cipher: recording, calls } = recordingCipher(cipher);
    dateKind.fpe(['12/31/2024', '31/12/2024', '2024-12-31', 'nope', '12.31.2024', '13-01-2024'], 'encrypt', recording, 'en');
    expect(calls.map((c) => [c.domain, c.count])).toEqual([[3_652_059n, 3], [BigInt(lateDays), 2]]);
    expect(calls.every((c) => c.tweaks instanceof Uint8Array)).toBe(true);
    expect(calls[0]!.tweaks).not.toEqual(calls[1]!.tweaks);
  });

  it('encrypts the date, not its spelling: MM/DD and ISO forms of one date agree', () => {
    const [us, iso, dotted] = encryptAll(dateKind, ['12/31/2024', '2024-12-31', '12.31.2024'], cipher);
    const a = readDate(us!)!, b = readDate(iso!)!, c = readDate(dotted!)!;
    expect([b.year, b.month, b.day]).toEqual([a.year, a.month, a.day]);
    expect([c.year, c.month, c.day]).toEqual([a.year, a.month, a.day]);
  });

  it('reports invalid values per element and processes the others', () => {
    const results = dateKind.fpe(['2024-02-30', '12/31/2024', 'x', '31/12/1999'], 'encrypt', cipher, 'en');
    expect(failures(results)).toEqual({ 0: 'invalid_value', 2: 'invalid_value' });
    expect(results[0]).toBe(INVALID_VALUE);
    expect(readDate(results[1] as string)?.layout).toBe('mdy');
    expect(readDate(results[3] as string)?.layout).toBe('dmy');
    expect(dateKind.fpe(['bad'], 'decrypt', cipher, 'en')).toEqual([INVALID_VALUE]);
  });

  it('reports DOMAIN_TOO_SMALL when the cipher gives null', () => {
    expect(dateKind.fpe(['12/31/2024', 'x'], 'encrypt', tooSmallCipher(), 'en')).toEqual([DOMAIN_TOO_SMALL, INVALID_VALUE]);
  });

  it('handles an empty batch without calling the cipher', () => {
    const { cipher: recording, calls } = recordingCipher(cipher);
    expect(dateKind.fpe([], 'encrypt', recording, 'en')).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe('date: fpe properties', () => {
  it('round-trips exactly and gives real dates in the same layout', () => {
    fc.assert(fc.property(fc.array(validDate, { minLength: 1, maxLength: 40 }), (values) => {
      const { encrypted, decrypted } = roundTrip(dateKind, values, cipher);
      expect(decrypted).toEqual(values);
      encrypted.forEach((out, i) => {
        const before = readDate(values[i]!)!;
        const after = readDate(out)!;
        expect(after).toBeDefined();
        expect(after.layout).toBe(before.layout);
        expect(after.sep).toBe(before.sep);
        expect(isCalendarDate(after.year, after.month, after.day)).toBe(true);
        if (after.layout === 'dmy') expect(after.day).toBeGreaterThanOrEqual(13);
      });
    }), { numRuns: 200 });
  });

  it('changes dates in general', () => {
    const values = fc.sample(validDate, { numRuns: 500, seed: 42 });
    const encrypted = encryptAll(dateKind, values, cipher);
    const unchanged = encrypted.filter((out, i) => out === values[i]).length;
    expect(unchanged).toBeLessThan(5);
  });

  it('refuses strings that are not dates in one of the layouts', () => {
    fc.assert(fc.property(fc.string({ maxLength: 12 }), (value) => {
      const f = readDate(value);
      const real = f !== undefined && isCalendarDate(f.year, f.month, f.day);
      expect(dateKind.isValid(value, 'en')).toBe(real);
      const [result] = dateKind.fpe([value], 'encrypt', cipher, 'en');
      if (!real) expect(result).toBe(INVALID_VALUE);
    }), { numRuns: 500 });
  });

  it('reads near-miss spellings as the layouts say: digits and separators in every position', () => {
    // Random strings seldom look like dates; these are all 8–11 characters of date material.
    const nearMiss = fc.array(fc.constantFrom(...'0123456789/-.', '１', ' '), { minLength: 8, maxLength: 11 }).map((chars) => chars.join(''));
    fc.assert(fc.property(fc.oneof(nearMiss, validDate), (value) => {
      const f = readDate(value);
      const real = f !== undefined && isCalendarDate(f.year, f.month, f.day);
      expect(dateKind.isValid(value, 'en')).toBe(real);
      const parsed = parseDate(value);
      expect(parsed === undefined ? undefined : { year: parsed.year, month: parsed.month, day: parsed.day, sep: parsed.separator })
        .toEqual(real ? { year: f.year, month: f.month, day: f.day, sep: f.sep } : undefined);
    }), { numRuns: 3000 });
  });

  it('refuses impossible dates written in a valid layout', () => {
    const fields = fc.record({
      layout: fc.constantFrom<Layout>('mdy', 'dmy', 'ymd'), sep: separator,
      year: fc.integer({ min: 0, max: 9999 }), month: fc.integer({ min: 0, max: 99 }), day: fc.integer({ min: 0, max: 99 }),
    });
    fc.assert(fc.property(fields, (f) => {
      const value = write(f);
      const read = readDate(value)!;
      expect(dateKind.isValid(value, 'en')).toBe(isCalendarDate(read.year, read.month, read.day));
    }), { numRuns: 1000 });
  });
});

describe('date: mask and redact', () => {
  it.each([
    ['12/31/2024', '01/01/2024'],
    ['2024-12-31', '2024-01-01'],
    ['31/12/1999', '01/01/1999'],
    ['01.02.2003', '01.01.2003'],
    ['0001-12-31', '0001-01-01'],
  ])('mask %s → %s', (value, masked) => {
    expect(dateKind.mask(value, 'en')).toBe(masked);
  });

  it('masks to the first of January of the same year, same separators', () => {
    fc.assert(fc.property(validDate, (value) => {
      const before = readDate(value)!;
      const masked = readDate(dateKind.mask(value, 'en'))!;
      expect(masked).toMatchObject({ year: before.year, month: 1, day: 1, sep: before.sep });
      // A DD/MM value masks to 01/01, which reads the same either way.
      expect(masked.layout).toBe(before.layout === 'dmy' ? 'mdy' : before.layout);
    }));
  });

  it('redacts to the layout', () => {
    expect(dateKind.redact('12/31/2024', 'en')).toBe('**/**/****');
    expect(dateKind.redact('2024-12-31', 'en')).toBe('****-**-**');
  });

  it('never echoes a value that is not a date', () => {
    expect(dateKind.mask('2024-02-30', 'en')).toBe('****-**-**');
  });
});
