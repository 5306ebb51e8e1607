/**
 * Whether one sampled value looks like a value of a kind, with the engine's own parsers: a value
 * counted here is one the proxy would protect, not refuse. Some kinds accept more than they mean
 * (any digit run of 3–20 is a phone, any nine digits an ssn); without a hint in the column's name,
 * those count only in the layouts people write them in.
 */
import { countDigits, isIssuableSsn, isLuhnValidCcn, isValueOfKind, type Kind } from '../engine/index.js';
import type { TypeFamily } from '../policy/index.js';

/** `hinted`: the column's name hints at the kind. */
type Recogniser = (value: string, hinted: boolean) => boolean;

const MAX_NAME_LENGTH = 60;
const MAX_NAME_WORDS = 4;
const MAX_ADDRESS_LENGTH = 200;
const MIN_UNHINTED_PHONE_DIGITS = 7;

/** Letters, combining marks, and the apostrophes, hyphens and dots inside names; one character each. */
const NAME_CHARACTERS = /^[\p{L}\p{M}'’.\- ]+$/u;
const STARTS_LOWER_CASE = /^\p{Ll}/u;
const HAS_LETTER = /\p{L}/u;
const HAS_DIGIT = /\p{Nd}/u;
const PHONE_LAYOUT_MARK = /[+( .-]/;
const SSN_SEPARATOR = /[ -]/;

/**
 * A proper name's shape: one to four words of letters (any script), no digits, not starting with a
 * lower-case letter. Free text fails it by length, word count or punctuation.
 */
export function looksLikeProperName(value: string): boolean {
  if (value.length === 0 || value.length > MAX_NAME_LENGTH || !NAME_CHARACTERS.test(value)) return false;
  if (STARTS_LOWER_CASE.test(value) || !HAS_LETTER.test(value)) return false;
  return value.split(' ').filter((word) => word.length > 0).length <= MAX_NAME_WORDS;
}

const RECOGNISERS: Readonly<Partial<Record<Kind, Recogniser>>> = {
  email: (value) => isValueOfKind('email', value),
  uuid: (value) => isValueOfKind('uuid', value),
  ipv4: (value) => isValueOfKind('ipv4', value),
  date: (value) => isValueOfKind('date', value),
  ccn: (value) => isLuhnValidCcn(value),
  ssn: (value, hinted) => isIssuableSsn(value) && (hinted || SSN_SEPARATOR.test(value)),
  phone: (value, hinted) => isValueOfKind('phone', value)
    && (hinted || (PHONE_LAYOUT_MARK.test(value) && countDigits(value) >= MIN_UNHINTED_PHONE_DIGITS)),
  latlng: (value) => isValueOfKind('latlng', value),
  price: (value) => isValueOfKind('price', value),
  numeric: (value) => isValueOfKind('numeric', value),
  name: (value) => isValueOfKind('name', value) && looksLikeProperName(value),
  city: (value) => isValueOfKind('city', value) && looksLikeProperName(value),
  // A street address has a number somewhere (house, postcode); notes and names rarely do.
  address: (value) => isValueOfKind('address', value) && value.length <= MAX_ADDRESS_LENGTH && HAS_LETTER.test(value) && HAS_DIGIT.test(value),
};

/**
 * The kinds discovery looks for, most specific first: a value that is a date is also a phone
 * number to the engine, so the first kind whose share passes wins. `text` is absent: every string
 * is text, so no sample can tell free text that matters from free text that does not.
 */
export const DISCOVERED_KINDS: readonly Kind[] = [
  'email', 'uuid', 'ipv4', 'date', 'ccn', 'ssn', 'phone', 'latlng', 'price', 'numeric', 'name', 'city', 'address',
];

/**
 * Kinds whose values alone say too little: a date is sensitive as a birth date, not as an order
 * date; a uuid as a person's identifier, not a request's; any short words could be names.
 */
export const KINDS_NEEDING_A_HINT: ReadonlySet<Kind> = new Set([
  'uuid', 'date', 'latlng', 'price', 'numeric', 'name', 'city', 'address',
]);

/** The column types that are sampled, and the kinds their values can be. */
const KINDS_BY_FAMILY: Readonly<Partial<Record<TypeFamily, readonly Kind[]>>> = {
  text: DISCOVERED_KINDS,
  varchar: DISCOVERED_KINDS,
  char: DISCOVERED_KINDS,
  date: ['date'],
  uuid: ['uuid'],
  inet: ['ipv4'],
  numeric: ['latlng', 'price', 'numeric'],
};

/** The kinds a column of `family` may hold, most specific first; empty when it is not sampled. */
export function kindsForFamily(family: TypeFamily): readonly Kind[] {
  return KINDS_BY_FAMILY[family] ?? [];
}

export function recognises(kind: Kind, value: string, hinted: boolean): boolean {
  return RECOGNISERS[kind]?.(value, hinted) ?? false;
}
