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

/** The number spelled by source[start, start + count) (characters or UTF-8 bytes), all ASCII digits; -1 otherwise. */
function digitsAt(source: string | Uint8Array, start: number, count: number): number {
  const text = typeof source === 'string' ? source : undefined;
  let n = 0;
  for (let i = start; i < start + count; i++) {
    // A byte past the buffer (undefined) gives NaN: no digit either.
    const digit = (text !== undefined ? text.charCodeAt(i) : (source as Uint8Array)[i] as number) - 0x30;
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

/** Writes `value` as `count` ASCII digits at bytes[start..). */
function writeDigitBytes(bytes: Uint8Array, start: number, count: number, value: number): void {
  let rest = value;
  for (let i = start + count - 1; i >= start; i--) {
    bytes[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
}

/** fpe in place of the ISO spelling YYYY-MM-DD (what PostgreSQL prints); other spellings go to fpeDates. */
function fpeIsoDatesInPlace(fields: ByteFields, direction: FpeDirection, cipher: FpeCipher, handled: Uint8Array): void {
  if (cipher.cryptIntegerRun === undefined) return;
  const { count, buffers, starts, lengths } = fields;
  const members: number[] = [];
  const ranks = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const bytes = buffers[i] as Uint8Array;
    const start = starts[i] as number;
    if (lengths[i] !== 10 || bytes[start + 4] !== HYPHEN || bytes[start + 7] !== HYPHEN) continue;
    const year = digitsAt(bytes, start, 4);
    const month = digitsAt(bytes, start + 5, 2);
    const day = digitsAt(bytes, start + 8, 2);
    if (year < 0 || month < 0 || day < 0 || !isRealDate(year, month, day)) continue;
    ranks[members.length] = ALL_DATES.rank({ year, month, day });
    members.push(i);
  }
  const out = new Int32Array(members.length);
  try {
    if (members.length === 0) return;
    if (!cipher.cryptIntegerRun(ALL_DATES.size, ranks.subarray(0, members.length), ALL_DATES.tweak, direction === 'decrypt', out)) return;
    for (let k = 0; k < members.length; k++) {
      const i = members[k] as number;
      const bytes = buffers[i] as Uint8Array;
      const start = starts[i] as number;
      const date = ALL_DATES.unrank(out[k] as number);
      writeDigitBytes(bytes, start, 4, date.year);
      writeDigitBytes(bytes, start + 5, 2, date.month);
      writeDigitBytes(bytes, start + 8, 2, date.day);
      handled[i] = 1;
    }
  } finally {
    ranks.fill(0);
    out.fill(0);
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
