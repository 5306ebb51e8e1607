import fc from 'fast-check';
import type { Kind } from '../../src/engine/types.js';

/** Realistic values of every kind, the shapes the issue names and a few more. */
export const REALISTIC: Readonly<Record<Kind, readonly string[]>> = {
  phone: ['+1 (555) 010-4477', '+44 20 7946 0958', '555-0100', '0049 30 1234567'],
  ipv4: ['192.168.10.4', '10.0.0.1', '255.255.255.255', '8.8.4.4'],
  ssn: ['123-45-6789', '078-05-1120', '123456789'],
  price: ['$1,234.56', '€ 12.345,67', '-$5.00', '1 234,50 €', '£999'],
  date: ['12/31/2024', '2024-02-29', '31/12/1999', '01.02.2003'],
  latlng: ['-33.8688', '151.2093', '51.5074', '-0.1278'],
  ccn: ['4111 1111 1111 1111', '5500-0000-0000-0004', '340000000000009', '4111 1111 1111 1112'],
  numeric: ['1234567', '-12.50', '42000', '3.14159'],
  email: ['jane.doe@example.co.uk', 'J.Doe+tag@Mail-Server.example.org', 'x9@ab.io'],
  uuid: ['f47ac10b-58cc-4372-a567-0e02b2c3d479', 'F47AC10B-58CC-4372-A567-0E02B2C3D479', '00000000-0000-4000-8000-000000000000'],
  address: ['221B Baker Street, London NW1 6XE', 'Unter den Linden 77, 10117 Berlin', '1600 Amphitheatre Pkwy'],
  text: ['Call me back tomorrow at noon.', 'Straße über Brücke', 'Le café est fermé le lundi.'],
  name: ['Jane Doe', 'José Álvarez', 'Zoë Brontë-Smith'],
  city: ['Sydney', 'Zürich', 'São Paulo'],
};

/** Values that are not of the kind. */
export const NOT_OF_KIND: Readonly<Partial<Record<Kind, readonly string[]>>> = {
  ssn: ['hello', '12-345-6789', ''],
  ccn: ['hello', '4111'],
  phone: ['hello'],
  ipv4: ['256.1.1.1', 'hello', '1.2.3'],
  date: ['02/30/2024', 'hello', '2024-13-01'],
  uuid: ['hello', 'f47ac10b58cc4372a5670e02b2c3d479x'],
  email: ['hello', 'a@b'],
  numeric: ['12a', 'hello'],
  latlng: ['200.5', 'hello'],
  price: ['hello'],
  name: [''],
};

const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));
const nonZeroLead = (n: number) => fc.tuple(fc.integer({ min: 1, max: 9 }), digits(n - 1, n - 1)).map(([a, b]) => `${a}${b}`);
const pad = (n: number, w: number) => String(n).padStart(w, '0');
const hex = (n: number) => fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: n, maxLength: n }).map((a) => a.join(''));
const latinWord = fc.array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), { minLength: 2, maxLength: 9 }).map((a) => a.join(''));
const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** Random valid values of every kind, for property tests. */
export const ARBITRARY: Readonly<Record<Kind, fc.Arbitrary<string>>> = {
  ccn: digits(16, 16).map((d) => d.replace(/(\d{4})(?=\d)/g, '$1 ')),
  ssn: fc.tuple(digits(3, 3), digits(2, 2), digits(4, 4)).map(([a, b, c]) => `${a}-${b}-${c}`),
  phone: fc.tuple(digits(1, 3), digits(3, 3), digits(3, 3), digits(4, 4)).map(([c, a, b, d]) => `+${c} (${a}) ${b}-${d}`),
  numeric: fc.tuple(fc.boolean(), nonZeroLead(6), fc.option(digits(1, 4), { nil: undefined }))
    .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac ? '.' + frac : ''}`),
  price: fc.tuple(nonZeroLead(4), digits(2, 2)).map(([int, cents]) => `$${int.slice(0, 1)},${int.slice(1)}.${cents}`),
  latlng: fc.tuple(fc.boolean(), fc.integer({ min: 10, max: 89 }), digits(4, 6)).map(([neg, deg, frac]) => `${neg ? '-' : ''}${deg}.${frac}`),
  ipv4: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
  date: fc.tuple(fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
    .map(([y, m, d]) => `${pad(m, 2)}/${pad(d, 2)}/${y}`),
  uuid: fc.tuple(hex(8), hex(4), hex(3), fc.constantFrom('8', '9', 'a', 'b'), hex(3), hex(12))
    .map(([a, b, c, v, d, e]) => `${a}-${b}-4${c}-${v}${d}-${e}`),
  email: fc.tuple(latinWord, latinWord, latinWord, fc.constantFrom('com', 'org', 'co.uk'))
    .map(([a, b, dom, tld]) => `${a}.${b}@${dom}.${tld}`),
  name: fc.tuple(latinWord, latinWord).map(([a, b]) => `${capital(a)} ${capital(b)}`),
  city: fc.tuple(latinWord, latinWord).map(([a, b]) => capital(a + b)),
  address: fc.tuple(fc.integer({ min: 1, max: 9999 }), latinWord, latinWord).map(([n, a, b]) => `${n} ${capital(a)} ${capital(b)} Street`),
  text: fc.array(latinWord, { minLength: 2, maxLength: 8 }).map((w) => w.join(' ') + '.'),
};

/** The output alphabet of tokenise per kind (the seed's per-kind table). */
export const TOKEN_SHAPE: Readonly<Partial<Record<Kind, RegExp>>> = {
  phone: /^[0-9]+( [0-9]+)*$/,
  ipv4: /^[0-9]+$/,
  ssn: /^[0-9]+$/,
  price: /^[0-9]+$/,
  date: /^[0-9]+$/,
  latlng: /^[0-9]+$/,
  ccn: /^[0-9]+( [0-9]+)*$/,
  numeric: /^[0-9]+$/,
  email: /^[a-z0-9]+@[a-z0-9]+\.[a-z]{3,4}$/,
  uuid: /^[0-9A-Za-z]+$/,
};
