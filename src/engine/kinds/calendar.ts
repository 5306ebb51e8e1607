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

/** Days before the first of each month in a common year. */
const DAYS_BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334] as const;
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

function daysBeforeMonth(year: number, month: number): number {
  return (DAYS_BEFORE_MONTH[month - 1] ?? 0) + (month > 2 && isLeapYear(year) ? 1 : 0);
}

export function toDayNumber(date: CalendarDate): number {
  return daysBeforeYear(date.year) + daysBeforeMonth(date.year, date.month) + date.day - 1;
}

/** Number of days in 0001-01-01 … 9999-12-31 (3 652 059). */
export const DAY_COUNT = daysBeforeYear(MAX_YEAR + 1);

/** The inverse of toDayNumber, for 0 ≤ dayNumber < DAY_COUNT. */
export function fromDayNumber(dayNumber: number): CalendarDate {
  if (!Number.isInteger(dayNumber) || dayNumber < 0 || dayNumber >= DAY_COUNT) {
    throw new RangeError('day number out of range');
  }
  // The estimate is off by at most one year either way; correct it exactly.
  let year = Math.min(MAX_YEAR, Math.floor(dayNumber / 365.2425) + 1);
  while (daysBeforeYear(year) > dayNumber) year--;
  while (year < MAX_YEAR && daysBeforeYear(year + 1) <= dayNumber) year++;
  const dayOfYear = dayNumber - daysBeforeYear(year);
  let month = 12;
  while (daysBeforeMonth(year, month) > dayOfYear) month--;
  return { year, month, day: dayOfYear - daysBeforeMonth(year, month) + 1 };
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
