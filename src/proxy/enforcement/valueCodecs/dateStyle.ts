/**
 * Date text as the session's DateStyle writes and reads it. The engine works on ISO dates; a
 * session in `SQL, DMY` or `German` prints `17/05/1990` or `17.05.1990`, which the date kind would
 * read month-first when the day is 12 or less. Dates are turned into ISO before the engine and
 * back into the session's style after it (ISO input is accepted under every DateStyle).
 */

export interface DateStyle {
  /** How dates are printed: ISO, SQL, German or Postgres. */
  readonly output: 'ISO' | 'SQL' | 'German' | 'Postgres';
  /** How ambiguous input is read (and SQL/Postgres output ordered). */
  readonly order: 'MDY' | 'DMY' | 'YMD';
}

export const DEFAULT_DATE_STYLE: DateStyle = { output: 'ISO', order: 'MDY' };

/** Parses a DateStyle setting such as `ISO, MDY` or `German, DMY`. */
export function parseDateStyle(setting: string): DateStyle {
  const parts = setting.split(',').map((part) => part.trim().toUpperCase());
  const output = parts.includes('SQL') ? 'SQL' : parts.includes('GERMAN') ? 'German' : parts.includes('POSTGRES') ? 'Postgres' : 'ISO';
  const order = parts.includes('DMY') || parts.includes('EURO') || parts.includes('EUROPEAN') ? 'DMY' : parts.includes('YMD') ? 'YMD' : 'MDY';
  return { output, order };
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})$/;
const FIELDS = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})$/;

function two(value: string): string {
  return value.padStart(2, '0');
}

/** The ISO form of a date written in `style` (as printed, or as typed), or undefined. */
export function toIsoDate(text: string, style: DateStyle): string | undefined {
  const trimmed = text.trim();
  if (ISO.test(trimmed)) return trimmed;
  const match = FIELDS.exec(trimmed);
  if (!match) return undefined;
  const [, first, separator, second, year] = match as unknown as [string, string, string, string, string];
  // German output is always day-first; otherwise the order setting decides.
  const dayFirst = separator === '.' || style.order === 'DMY';
  return dayFirst ? `${year}-${two(second)}-${two(first)}` : `${year}-${two(first)}-${two(second)}`;
}

/** An ISO date as the session prints it. */
export function fromIsoDate(iso: string, style: DateStyle): string {
  const match = ISO.exec(iso);
  if (!match) return iso;
  const [, year, month, day] = match as unknown as [string, string, string, string];
  switch (style.output) {
    case 'ISO': return iso;
    case 'German': return `${day}.${month}.${year}`;
    case 'SQL': return style.order === 'DMY' ? `${day}/${month}/${year}` : `${month}/${day}/${year}`;
    case 'Postgres': return style.order === 'DMY' ? `${day}-${month}-${year}` : `${month}-${day}-${year}`;
  }
}
