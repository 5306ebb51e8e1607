/**
 * The `date` kind: a calendar date in one of three layouts, each with `/`, `-` or `.` as its
 * (single, repeated) separator:
 *
 * - `MM/DD/YYYY` — the seed's `12/31/2024`; any value whose first field is ≤ 12;
 * - `DD/MM/YYYY` — only when the first field is > 12 (`31/12/1999`), since `05/06/2024` reads as MM/DD;
 * - `YYYY-MM-DD` — ISO, what PostgreSQL prints for a `date` column (`/` and `.` accepted too).
 *
 * Fields have fixed widths (2, 2, 4 digits): `1/2/2024` is not a date of this kind. Years 0001–9999.
 *
 * fpe encrypts the date, not its spelling: the day number goes through `encryptInteger` and comes
 * back as a real date printed in the input's layout and separators. The layout must be readable
 * from the output so that decrypt picks the same domain:
 * - MM/DD and ISO share one domain (every date) and one tweak, so a date column round-trips
 *   whichever of the two forms PostgreSQL's DateStyle prints it in;
 * - DD/MM values are ranked among the dates whose day is ≥ 13 only, with their own tweak, so the
 *   output again has a first field > 12 and reads as DD/MM.
 *
 * mask keeps only the year; month and day → 01 (`12/31/2024` → `01/01/2024`, `2024-12-31` → `2024-01-01`),
 * still a real date in the same layout; redact keeps the separators.
 */
import type { FpeCipher, Tweak } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { redactLayout } from '../methods/redact.js';
import {
  DAY_COUNT, MONTH_COUNT, fromDayNumber, fromMonthIndex, isRealDate, toDayNumber, toMonthIndex,
  type CalendarDate,
} from './calendar.js';
import type { FpeDirection, KindHandler } from './kind.js';

export type DateLayout = 'month-first' | 'day-first' | 'year-first';
export type DateSeparator = '/' | '-' | '.';

export interface ParsedDate extends CalendarDate {
  readonly layout: DateLayout;
  readonly separator: DateSeparator;
}

/** The smallest day a day-first (DD/MM) value can have: below it, the first field reads as a month. */
const DAY_FIRST_MIN_DAY = 13;

const YEAR_FIRST = /^([0-9]{4})([/.-])([0-9]{2})\2([0-9]{2})$/;
const YEAR_LAST = /^([0-9]{2})([/.-])([0-9]{2})\2([0-9]{4})$/;

export function parseDate(value: string): ParsedDate | undefined {
  const iso = YEAR_FIRST.exec(value);
  if (iso) {
    const [, y, sep, m, d] = iso;
    return checked(Number(y), Number(m), Number(d), 'year-first', sep as DateSeparator);
  }
  const us = YEAR_LAST.exec(value);
  if (us) {
    const [, first, sep, second, y] = us;
    const firstField = Number(first);
    return firstField <= 12
      ? checked(Number(y), firstField, Number(second), 'month-first', sep as DateSeparator)
      : checked(Number(y), Number(second), firstField, 'day-first', sep as DateSeparator);
  }
  return undefined;
}

function checked(year: number, month: number, day: number, layout: DateLayout, separator: DateSeparator): ParsedDate | undefined {
  return isRealDate(year, month, day) ? { year, month, day, layout, separator } : undefined;
}

export function formatDate(date: CalendarDate, layout: DateLayout, separator: DateSeparator): string {
  const y = String(date.year).padStart(4, '0');
  const m = String(date.month).padStart(2, '0');
  const d = String(date.day).padStart(2, '0');
  switch (layout) {
    case 'year-first': return `${y}${separator}${m}${separator}${d}`;
    case 'month-first': return `${m}${separator}${d}${separator}${y}`;
    case 'day-first': return `${d}${separator}${m}${separator}${y}`;
  }
}

/** A set of dates numbered 0 … size-1, and the tweak that binds it. */
interface DateDomain {
  readonly size: number;
  readonly tweak: Tweak;
  rank(date: CalendarDate): number;
  unrank(rank: number): CalendarDate;
}

const ALL_DATES: DateDomain = {
  size: DAY_COUNT,
  tweak: new TextEncoder().encode('date:all-days'),
  rank: toDayNumber,
  unrank: fromDayNumber,
};

/**
 * Rank of the first late day (the 13th) of month `index` among all late days: the days before that
 * month, less the twelve early days of each earlier month.
 */
function lateDaysBeforeMonth(index: number): number {
  const { year, month } = fromMonthIndex(index);
  return toDayNumber({ year, month, day: 1 }) - (DAY_FIRST_MIN_DAY - 1) * index;
}

const LATE_DAY_COUNT = DAY_COUNT - (DAY_FIRST_MIN_DAY - 1) * MONTH_COUNT;

const LATE_DAYS: DateDomain = {
  size: LATE_DAY_COUNT,
  tweak: new TextEncoder().encode('date:day-first-late-days'),
  rank: (date) => lateDaysBeforeMonth(toMonthIndex(date.year, date.month)) + date.day - DAY_FIRST_MIN_DAY,
  unrank(rank) {
    if (!Number.isInteger(rank) || rank < 0 || rank >= LATE_DAY_COUNT) throw new RangeError('rank out of range');
    // The last month whose first late day ranks ≤ rank.
    let lo = 0;
    let hi = MONTH_COUNT - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (lateDaysBeforeMonth(mid) <= rank) lo = mid;
      else hi = mid - 1;
    }
    const { year, month } = fromMonthIndex(lo);
    return { year, month, day: rank - lateDaysBeforeMonth(lo) + DAY_FIRST_MIN_DAY };
  },
};

function domainOf(layout: DateLayout): DateDomain {
  return layout === 'day-first' ? LATE_DAYS : ALL_DATES;
}

function fpeDates(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
  const results: (string | ElementFailure)[] = values.map(() => INVALID_VALUE);
  // At most two cipher calls per request: one per domain.
  const groups = new Map<DateDomain, { indexes: number[]; dates: ParsedDate[] }>();
  values.forEach((value, index) => {
    const date = parseDate(value);
    if (!date) return;
    const domain = domainOf(date.layout);
    let group = groups.get(domain);
    if (!group) groups.set(domain, (group = { indexes: [], dates: [] }));
    group.indexes.push(index);
    group.dates.push(date);
  });
  for (const [domain, { indexes, dates }] of groups) {
    const ranks = dates.map((d) => BigInt(domain.rank(d)));
    const size = BigInt(domain.size);
    const out = direction === 'encrypt'
      ? cipher.encryptInteger(size, ranks, domain.tweak)
      : cipher.decryptInteger(size, ranks, domain.tweak);
    indexes.forEach((valueIndex, i) => {
      const rank = out[i];
      const date = dates[i];
      if (rank === null || rank === undefined || date === undefined) {
        results[valueIndex] = DOMAIN_TOO_SMALL;
        return;
      }
      results[valueIndex] = formatDate(domain.unrank(Number(rank)), date.layout, date.separator);
    });
  }
  return results;
}

export const dateKind: KindHandler = {
  kind: 'date',
  hasLang: false,
  isValid: (value) => parseDate(value) !== undefined,
  fpe: (values, direction, cipher) => fpeDates(values, direction, cipher),
  mask(value) {
    const date = parseDate(value);
    // Never echo a value that is not a date: fall back to its bare layout.
    if (!date) return redactLayout(value);
    return formatDate({ year: date.year, month: 1, day: 1 }, date.layout, date.separator);
  },
  redact: (value) => redactLayout(value),
};
