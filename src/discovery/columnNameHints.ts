/**
 * What a column's name suggests it holds. Names are split into lower-case words (snake_case,
 * camelCase, digits): `cardNumber` and `card_number` both give card, number. A kind's hint is one
 * of its words, or one of its compounds written as one word (`birthdate`, `fullname`).
 */
import type { Kind } from '../engine/index.js';

interface HintWords {
  /** Words that hint at the kind on their own. */
  readonly words: readonly string[];
  /** Words that hint at it only next to `name` (first_name, holder_name), not alone. */
  readonly withName?: readonly string[];
  /** Words that rule the kind out even when a hint word is there (ip_address is no postal address). */
  readonly unless?: readonly string[];
}

const HINTS: Readonly<Partial<Record<Kind, HintWords>>> = {
  email: { words: ['email', 'mail', 'emailaddress'] },
  ccn: { words: ['card', 'ccn', 'pan', 'creditcard', 'cardnumber', 'cardno'] },
  ssn: { words: ['ssn', 'social', 'socialsecurity'] },
  phone: { words: ['phone', 'tel', 'telephone', 'mobile', 'cell', 'fax', 'msisdn', 'phonenumber'] },
  ipv4: { words: ['ip', 'ipv4', 'ipaddress', 'ipaddr'] },
  uuid: { words: ['external', 'public', 'customer', 'user', 'person', 'patient', 'member', 'citizen', 'employee'] },
  date: { words: ['birth', 'dob', 'born', 'birthday', 'birthdate', 'death', 'deceased'] },
  latlng: { words: ['lat', 'lng', 'lon', 'latitude', 'longitude'] },
  price: { words: ['salary', 'income', 'wage', 'wages', 'compensation', 'bonus'] },
  numeric: { words: ['age', 'weight', 'height'] },
  name: {
    words: ['fullname', 'firstname', 'lastname', 'surname', 'forename', 'givenname', 'familyname', 'middlename', 'maidenname'],
    withName: ['full', 'first', 'last', 'given', 'family', 'middle', 'maiden', 'customer', 'person', 'contact', 'patient', 'holder', 'owner'],
  },
  city: { words: ['city', 'town', 'municipality', 'birthplace', 'locality'] },
  address: {
    words: ['address', 'street', 'addr', 'residence'],
    unless: ['ip', 'ipv4', 'ipv6', 'mac', 'email', 'mail', 'web', 'url', 'wallet'],
  },
};

/** `cardNumber2` → card, number, 2; `BIRTH_DATE` → birth, date. */
export function nameWords(column: string): string[] {
  return column
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .flatMap((word) => word.split(/(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u))
    .filter((word) => word.length > 0);
}

/** The words of `column`'s name that hint at `kind`, in name order; empty when none (or a veto word). */
export function hintsFor(kind: Kind, column: string): string[] {
  const hint = HINTS[kind];
  if (hint === undefined) return [];
  const words = nameWords(column);
  if (hint.unless?.some((word) => words.includes(word))) return [];
  const found = words.filter((word) => hint.words.includes(word));
  if (hint.withName !== undefined && words.includes('name')) {
    const qualifiers = words.filter((word) => hint.withName?.includes(word));
    // A column called just `name` is a weak hint: it names a person as often as a product.
    if (qualifiers.length > 0 || words.length === 1) found.push(...qualifiers, 'name');
  }
  const joined = words.join('');
  if (found.length === 0 && hint.words.includes(joined)) found.push(joined);
  return [...new Set(found)];
}
