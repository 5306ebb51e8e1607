import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DAY_COUNT, MONTH_COUNT, daysInMonth, fromDayNumber, fromMonthIndex, isLeapYear, isRealDate, toDayNumber, toMonthIndex,
} from '../../../src/engine/kinds/calendar.js';

const DAY_MS = 86_400_000;
function utcTime(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}
const FIRST_DAY = utcTime(1, 1, 1);

describe('calendar (checked against JS Date, proleptic Gregorian in UTC)', () => {
  it('counts the days of 0001-01-01 … 9999-12-31', () => {
    expect(DAY_COUNT).toBe((utcTime(9999, 12, 31) - FIRST_DAY) / DAY_MS + 1);
    expect(DAY_COUNT).toBe(3_652_059);
    expect(MONTH_COUNT).toBe(119_988);
  });

  it('maps every day number to its date and back', () => {
    for (let n = 0; n < DAY_COUNT; n++) {
      const date = fromDayNumber(n);
      if (n % 97 === 0 || n < 800 || n > DAY_COUNT - 800) {
        const js = new Date(FIRST_DAY + n * DAY_MS);
        expect([date.year, date.month, date.day]).toEqual([js.getUTCFullYear(), js.getUTCMonth() + 1, js.getUTCDate()]);
      }
      if (toDayNumber(date) !== n) expect(toDayNumber(date)).toBe(n);
    }
  });

  it('knows leap years and month lengths', () => {
    expect([1900, 2000, 2023, 2024, 2100, 2400].map(isLeapYear)).toEqual([false, true, false, true, false, true]);
    fc.assert(fc.property(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 1, max: 12 }), (y, m) => {
      expect(daysInMonth(y, m)).toBe(new Date(utcTime(y, m + 1, 0)).getUTCDate());
    }));
  });

  it('validates dates', () => {
    expect(isRealDate(2024, 2, 29)).toBe(true);
    expect(isRealDate(2023, 2, 29)).toBe(false);
    expect(isRealDate(0, 1, 1)).toBe(false);
    expect(isRealDate(10000, 1, 1)).toBe(false);
    expect(isRealDate(2024, 13, 1)).toBe(false);
    expect(isRealDate(2024, 1, 0)).toBe(false);
    expect(isRealDate(2024, 1.5, 1)).toBe(false);
  });

  it('numbers months', () => {
    expect(toMonthIndex(1, 1)).toBe(0);
    expect(toMonthIndex(9999, 12)).toBe(MONTH_COUNT - 1);
    expect(fromMonthIndex(toMonthIndex(2024, 7))).toEqual({ year: 2024, month: 7 });
  });

  it('refuses day numbers out of range', () => {
    expect(() => fromDayNumber(-1)).toThrow(RangeError);
    expect(() => fromDayNumber(DAY_COUNT)).toThrow(RangeError);
    expect(() => fromDayNumber(1.5)).toThrow(RangeError);
  });
});
