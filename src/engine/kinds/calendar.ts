/**
 * Proleptic Gregorian calendar arithmetic for years 0001–9999 (the years a `date` kind accepts),
 * by day number: 0 is 0001-01-01, DAY_COUNT - 1 is 9999-12-31. Integer arithmetic only.
 */

export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

export interface CalendarDate {
  readonly year: number;
  readonly month: number; // 1–12
  readonly day: number;   // 1–31
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
}

/** Whether year/month/day name a real day in 0001-01-01 … 9999-12-31. */
export function isRealDate(year: number, month: number, day: number): boolean {
  return Number.isInteger(year) && Number.isInteger(month) && Number.isInteger(day)
    && year >= MIN_YEAR && year <= MAX_YEAR
    && month >= 1 && month <= 12
    && day >= 1 && day <= daysInMonth(year, month);
}

/** Days from 0001-01-01 to the first of January of `year`. */
function daysBeforeYear(year: number): number {
  const y = year - 1;
  return 365 * y + Math.floor(y / 4) - Math.floor(y / 100) + Math.floor(y / 400);
}

/*
 * Day numbers in closed form over years that start on 1 March (the leap day ends its year), in
 * 400-year eras of 146 097 days; 0000-03-01 is 306 days before day 0. No loop and no table: the
 * read path turns a date into its number and back for every value it reveals.
 */
const MARCH_FIRST_OF_YEAR_ZERO = 306;
const DAYS_PER_ERA = 146_097;

/** The day number of year/month/day (a real date, isRealDate). */
export function dayNumberOf(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * DAYS_PER_ERA + dayOfEra - MARCH_FIRST_OF_YEAR_ZERO;
}

export function toDayNumber(date: CalendarDate): number {
  return dayNumberOf(date.year, date.month, date.day);
}

/** Number of days in 0001-01-01 … 9999-12-31 (3 652 059). */
export const DAY_COUNT = daysBeforeYear(MAX_YEAR + 1);

/**
 * The date of day number `dayNumber` (0 ≤ dayNumber < DAY_COUNT, unchecked) as year * 10 000 +
 * month * 100 + day: one number, so that the caller allocates nothing.
 */
export function packedDateOf(dayNumber: number): number {
  // Every quantity is a non-negative int32: `(a / b) | 0` is floor, and V8 keeps it in integers.
  const z = (dayNumber + MARCH_FIRST_OF_YEAR_ZERO) | 0;
  const era = (z / DAYS_PER_ERA) | 0;
  const dayOfEra = z - era * DAYS_PER_ERA;
  const yearOfEra = ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0));
  const monthFromMarch = ((5 * dayOfYear + 2) / 153) | 0;
  const day = dayOfYear - (((153 * monthFromMarch + 2) / 5) | 0) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return year * 10_000 + month * 100 + day;
}

/** The inverse of toDayNumber, for 0 ≤ dayNumber < DAY_COUNT. */
export function fromDayNumber(dayNumber: number): CalendarDate {
  if (!Number.isInteger(dayNumber) || dayNumber < 0 || dayNumber >= DAY_COUNT) {
    throw new RangeError('day number out of range');
  }
  const packed = packedDateOf(dayNumber);
  const year = Math.floor(packed / 10_000);
  const monthDay = packed - year * 10_000;
  const month = Math.floor(monthDay / 100);
  return { year, month, day: monthDay - month * 100 };
}

/** Months in 0001-01 … 9999-12. */
export const MONTH_COUNT = (MAX_YEAR - MIN_YEAR + 1) * 12;

/** 0 for January 0001, MONTH_COUNT - 1 for December 9999. */
export function toMonthIndex(year: number, month: number): number {
  return (year - MIN_YEAR) * 12 + (month - 1);
}

export function fromMonthIndex(index: number): { year: number; month: number } {
  return { year: MIN_YEAR + Math.floor(index / 12), month: (index % 12) + 1 };
}
