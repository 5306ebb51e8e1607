import type { Kind, Lang } from '../engine/index.js';

/**
 * Sample values for sizing tokens against varchar(n)/char(n) columns. Tokens are longer than
 * their input and grow with it, so the estimate tokenises the longest value a column can be
 * expected to hold:
 * - kinds with a bounded form use their longest form (a 19-digit card, a 20-digit phone...);
 * - free-form kinds use a value as long as the column allows, up to a cap (name 64, city 64,
 *   email 64, address 128, text 1000, numeric 30, price 24 characters), in the script of the
 *   policy's `lang` (Latin without one): scripts with combining marks give longer tokens.
 * The caps keep varchar(255) name columns usable; a value longer than its cap may then get a
 * token the column cannot hold, and PostgreSQL refuses that write (nothing is lost).
 */
export const SIZING_CAPS: Readonly<Partial<Record<Kind, number>>> = {
  name: 64, city: 64, email: 64, address: 128, text: 1000, numeric: 30, price: 24, latlng: 25,
};

const LONGEST_FORM: Readonly<Partial<Record<Kind, string>>> = {
  ssn: '123-45-6789',
  ccn: '4111 1111 1111 1111 111',
  phone: '+12 (345) 678 9012 3456 7890',
  date: '12/31/2024',
  ipv4: '255.255.255.255/32',
  uuid: 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
};

/** Words in each lang's script, marks and all, repeated to the length wanted. */
const SCRIPT_WORDS: Readonly<Record<Lang, string>> = {
  en: 'Bartholomew Featherstonehaugh',
  de: 'Friedrich Müller-Lüdenscheidt Straße',
  fr: 'Hélène Côté-Lefèvre à Besançon',
  es: 'José Núñez de Peñalosa',
  it: 'Niccolò Bellè di Forlì',
  ru: 'Санкт-Петербург Александровский',
  ar: 'عبد الرحمن الإسكندرية',
  si: 'ශ්‍රී ජයවර්ධනපුර කෝට්ටේ',
  th: 'กรุงเทพมหานคร สวัสดีครับ',
  hi: 'नई दिल्ली नमस्ते दुनिया',
  ja: 'とうきょうと しぶやく やまだ たろう',
  ko: '서울특별시 강남구 홍길동',
  zh: '北京市朝阳区 张伟',
  te: 'హైదరాబాద్ తెలంగాణ',
  kn: 'ಬೆಂಗಳೂರು ಕರ್ನಾಟಕ',
  ta: 'சென்னை தமிழ்நாடு',
  bn: 'কলকাতা পশ্চিমবঙ্গ',
  pa: 'ਅੰਮ੍ਰਿਤਸਰ ਪੰਜਾਬ',
  gu: 'અમદાવાદ ગુજરાત',
  or: 'ଭୁବନେଶ୍ୱର ଓଡ଼ିଶା',
  ml: 'തിരുവനന്തപുരം കേരളം',
};

const DIGITS = '1234567890';

function repeatTo(base: string, length: number): string {
  const chars = [...base];
  const out: string[] = [];
  while (out.length < length) out.push(...chars, ' ');
  // A value never ends in a space (trimmed by many apps), so replace one there.
  const cut = out.slice(0, Math.max(1, length));
  if (cut[cut.length - 1] === ' ') cut[cut.length - 1] = chars[0] ?? 'a';
  return cut.join('');
}

function digits(count: number): string {
  return DIGITS.repeat(Math.ceil(Math.max(1, count) / DIGITS.length)).slice(0, Math.max(1, count));
}

/** The length the sample should have: the column's, up to the kind's cap. */
export function sampleLength(kind: Kind, maxChars: number): number {
  const cap = SIZING_CAPS[kind];
  return cap === undefined ? maxChars : Math.min(maxChars, cap);
}

/** A value of `kind` about `maxChars` characters long (or the kind's longest form). */
export function sizingSample(kind: Kind, maxChars: number, lang: Lang | undefined): string {
  const fixed = LONGEST_FORM[kind];
  if (fixed !== undefined) return fixed;
  const length = sampleLength(kind, maxChars);
  switch (kind) {
    case 'numeric':
      return length < 5 ? digits(length) : `-${digits(length - 4)}.99`;
    case 'price':
      return length < 6 ? digits(length) : `-${digits(length - 4)}.99`;
    case 'latlng':
      return length < 6 ? '-179' : `-179.${digits(Math.min(20, length - 5))}`;
    case 'email': {
      const local = 'janedoe'.padEnd(Math.max(1, length - 12), DIGITS);
      return `${local.slice(0, Math.max(1, length - 12))}@example.com`;
    }
    default:
      return repeatTo(SCRIPT_WORDS[lang ?? 'en'], length);
  }
}

/** A short, typical value of the kind, for examples in messages. */
export function exampleValue(kind: Kind): string {
  const fixed = LONGEST_FORM[kind];
  if (kind === 'ccn') return '4111 1111 1111 1111';
  if (kind === 'phone') return '+1 (555) 010-4477';
  if (kind === 'ipv4') return '192.168.10.4';
  if (kind === 'date') return '2024-12-31';
  if (fixed !== undefined) return fixed;
  const examples: Partial<Record<Kind, string>> = {
    numeric: '12345.67', price: '1234.56', latlng: '-33.8688', email: 'jane.doe@example.com',
    name: 'Jane Doe', city: 'London', address: '221B Baker Street', text: 'a note',
  };
  return examples[kind] ?? 'value';
}
