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
  DAY_COUNT, MONTH_COUNT, dayNumberOf, fromDayNumber, fromMonthIndex, isRealDate, packedDateOf, toDayNumber, toMonthIndex,
  type CalendarDate,
} from './calendar.js';
import type { ByteFields, FpeDirection, KindHandler } from './kind.js';

export type DateLayout = 'month-first' | 'day-first' | 'year-first';
export type DateSeparator = '/' | '-' | '.';

export interface ParsedDate extends CalendarDate {
  readonly layout: DateLayout;
  readonly separator: DateSeparator;
}

/** The smallest day a day-first (DD/MM) value can have: below it, the first field reads as a month. */
const DAY_FIRST_MIN_DAY = 13;

/**
 * `YYYY?MM?DD` or `NN?NN?YYYY` with one separator (/ . -) used twice, read by character code: a
 * read path parses a date per row, and two regular expressions with their match arrays cost more
 * than the rest of the date's fpe outside the cipher.
 */
export function parseDate(value: string): ParsedDate | undefined {
  if (value.length !== 10) return undefined;
  const c4 = value.charCodeAt(4);
  if (isSeparatorCode(c4)) {
    if (value.charCodeAt(7) !== c4) return undefined;
    const y = digitsAt(value, 0, 4);
    const m = digitsAt(value, 5, 2);
    const d = digitsAt(value, 8, 2);
    if (y < 0 || m < 0 || d < 0) return undefined;
    return checked(y, m, d, 'year-first', String.fromCharCode(c4) as DateSeparator);
  }
  const c2 = value.charCodeAt(2);
  if (!isSeparatorCode(c2) || value.charCodeAt(5) !== c2) return undefined;
  const first = digitsAt(value, 0, 2);
  const second = digitsAt(value, 3, 2);
  const y = digitsAt(value, 6, 4);
  if (first < 0 || second < 0 || y < 0) return undefined;
  const separator = String.fromCharCode(c2) as DateSeparator;
  return first <= 12 ? checked(y, first, second, 'month-first', separator) : checked(y, second, first, 'day-first', separator);
}

function isSeparatorCode(code: number): boolean {
  return code === 0x2f || code === 0x2d || code === 0x2e; // / - .
}

/** The number spelled by value[start, start + count), all ASCII digits; -1 otherwise. */
function digitsAt(value: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    // A character past the end (NaN) is no digit either.
    const digit = value.charCodeAt(i) - 0x30;
    if (!(digit >= 0 && digit <= 9)) return -1;
    n = n * 10 + digit;
  }
  return n;
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

const HYPHEN = 0x2d;
const CODE_0 = 0x30;

/** The two ASCII digits at bytes[at, at + 2) as a number, or -1. */
function twoDigitsAt(bytes: Uint8Array, at: number): number {
  // A byte past the buffer (undefined) gives NaN: no digit either.
  const tens = (bytes[at] as number) - CODE_0;
  const ones = (bytes[at + 1] as number) - CODE_0;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/** The day number of the ISO date YYYY-MM-DD at bytes[start, start + 10), or -1 when it spells none. */
function isoDayNumberAt(bytes: Uint8Array, start: number): number {
  if (bytes[start + 4] !== HYPHEN || bytes[start + 7] !== HYPHEN) return -1;
  const century = twoDigitsAt(bytes, start);
  const yearOfCentury = twoDigitsAt(bytes, start + 2);
  const month = twoDigitsAt(bytes, start + 5);
  const day = twoDigitsAt(bytes, start + 8);
  if (century < 0 || yearOfCentury < 0 || month < 0 || day < 0) return -1;
  const year = century * 100 + yearOfCentury;
  return isRealDate(year, month, day) ? dayNumberOf(year, month, day) : -1;
}

/** Writes day number `dayNumber`'s date as YYYY-MM-DD over bytes[start, start + 10) (its hyphens are in place). */
function writeIsoDateAt(bytes: Uint8Array, start: number, dayNumber: number): void {
  // Non-negative int32 throughout: `(a / b) | 0` is floor, and V8 keeps it in integers.
  const packed = packedDateOf(dayNumber); // YYYYMMDD
  const year = (packed / 10_000) | 0;
  const monthDay = packed - year * 10_000;
  const month = (monthDay / 100) | 0;
  const day = monthDay - month * 100;
  const century = (year / 100) | 0;
  const yearOfCentury = year - century * 100;
  writeTwoDigits(bytes, start, century);
  writeTwoDigits(bytes, start + 2, yearOfCentury);
  writeTwoDigits(bytes, start + 5, month);
  writeTwoDigits(bytes, start + 8, day);
}

/** Writes 0 ≤ value < 100 as two ASCII digits at bytes[at, at + 2). */
function writeTwoDigits(bytes: Uint8Array, at: number, value: number): void {
  const tens = (value / 10) | 0;
  bytes[at] = CODE_0 + tens;
  bytes[at + 1] = CODE_0 + value - tens * 10;
}

/** The day numbers and members of one in-place call: synchronous, so one set serves every call (grown as needed). */
let rankScratch = new Int32Array(512);
let outScratch = new Int32Array(512);
let memberScratch = new Int32Array(512);

/** fpe in place of the ISO spelling YYYY-MM-DD (what PostgreSQL prints); other spellings go to fpeDates. */
function fpeIsoDatesInPlace(fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array): void {
  const { count, buffers, starts, lengths } = fields;
  handled.fill(0, 0, count);
  if (cipher.cryptIntegerRun === undefined) return;
  if (rankScratch.length < count) {
    rankScratch = new Int32Array(count);
    outScratch = new Int32Array(count);
    memberScratch = new Int32Array(count);
  }
  const ranks = rankScratch;
  const out = outScratch;
  const members = memberScratch;
  let found = 0;
  try {
    for (let i = 0; i < count; i++) {
      if (lengths[i] !== 10) continue;
      const dayNumber = isoDayNumberAt(buffers[i] as Uint8Array, starts[i] as number);
      if (dayNumber < 0) continue;
      ranks[found] = dayNumber;
      members[found++] = i;
    }
    if (found === 0) return;
    if (!cipher.cryptIntegerRun(ALL_DATES.size, ranks.subarray(0, found), ALL_DATES.tweak, direction === 'decrypt', out.subarray(0, found))) return;
    for (let k = 0; k < found; k++) {
      const i = members[k] as number;
      writeIsoDateAt(buffers[i] as Uint8Array, starts[i] as number, out[k] as number);
      handled[i] = 1;
    }
  } finally {
    ranks.fill(0, 0, found);
    out.fill(0, 0, found);
  }
}

export const dateKind: KindHandler = {
  kind: 'date',
  hasLang: false,
  isValid: (value) => parseDate(value) !== undefined,
  fpe: (values, direction, cipher) => fpeDates(values, direction, cipher),
  fpeInPlace: fpeIsoDatesInPlace,
  mask(value) {
    const date = parseDate(value);
    // Never echo a value that is not a date: fall back to its bare layout.
    if (!date) return redactLayout(value);
    return formatDate({ year: date.year, month: 1, day: 1 }, date.layout, date.separator);
  },
  redact: (value) => redactLayout(value),
};
