import type { Kind, Lang } from '../types.js';
import { detectScript } from '../scripts/index.js';
import { decodeScriptToken, encodeTokenInScript } from './scriptToken.js';
import { FixedWidthBase } from './fixedWidthBase.js';

/** Renders token bytes in a kind's output alphabet, and reads them back. */
export interface TokenCodec {
  render(bytes: Uint8Array, plaintext: string, lang: Lang): string;
  /** null when the text cannot be a token of this kind; else a new array the caller may modify. */
  parse(token: string): Uint8Array | null;
}

/** The fixed-width alphabets of the non-text kinds; part of the token format, never change one. */
export const FIXED_WIDTH_ALPHABETS = {
  decimal: '0123456789',
  base36: 'abcdefghijklmnopqrstuvwxyz0123456789',
  base62: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
} as const;

const DECIMAL = new FixedWidthBase(FIXED_WIDTH_ALPHABETS.decimal);
const BASE36 = new FixedWidthBase(FIXED_WIDTH_ALPHABETS.base36);
const BASE62 = new FixedWidthBase(FIXED_WIDTH_ALPHABETS.base62);

const DIGIT_GROUPS = /^[0-9]+(?: [0-9]+)*$/;

type Grouping = 'none' | 'halves' | 'fours';

/** Digits only, optionally in space-separated groups (the seed's phone and ccn listings). */
function decimalCodec(grouping: Grouping): TokenCodec {
  return {
    render(bytes) {
      const digits = DECIMAL.encode(bytes);
      if (grouping === 'halves') {
        const cut = Math.ceil(digits.length / 2);
        return `${digits.slice(0, cut)} ${digits.slice(cut)}`;
      }
      if (grouping === 'fours') return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
      return digits;
    },
    parse(token) {
      if (token.length > 32_768 || !DIGIT_GROUPS.test(token)) return null;
      return DECIMAL.decode(token.replaceAll(' ', ''));
    },
  };
}

const EMAIL_TOKEN = /^([a-z0-9]+)@([a-z0-9]+)\.([a-z0-9]+)$/;

/** Basic Latin in the local@domain.tld form: the base-36 text cut in three. */
const emailCodec: TokenCodec = {
  render(bytes) {
    const text = BASE36.encode(bytes);
    const tld = 3;
    const local = Math.max(1, Math.floor((text.length - tld) * 0.6));
    return `${text.slice(0, local)}@${text.slice(local, text.length - tld)}.${text.slice(text.length - tld)}`;
  },
  parse(token) {
    const m = EMAIL_TOKEN.exec(token);
    return m ? BASE36.decode(`${m[1]}${m[2]}${m[3]}`) : null;
  },
};

/** Letters and digits, no hyphens. */
const alphanumericCodec: TokenCodec = {
  render: (bytes) => BASE62.encode(bytes),
  parse: (token) => (/^[0-9A-Za-z]+$/.test(token) ? BASE62.decode(token) : null),
};

/** The input's own Unicode script, in space-separated groups (address, text, name, city). */
const scriptCodec: TokenCodec = {
  render: (bytes, plaintext, lang) => encodeTokenInScript(bytes, detectScript(plaintext, lang)),
  parse: (token) => decodeScriptToken(token),
};

export const TOKEN_CODECS: Readonly<Record<Kind, TokenCodec>> = {
  address: scriptCodec,
  text: scriptCodec,
  name: scriptCodec,
  city: scriptCodec,
  email: emailCodec,
  uuid: alphanumericCodec,
  phone: decimalCodec('halves'),
  ccn: decimalCodec('fours'),
  ipv4: decimalCodec('none'),
  ssn: decimalCodec('none'),
  price: decimalCodec('none'),
  date: decimalCodec('none'),
  latlng: decimalCodec('none'),
  numeric: decimalCodec('none'),
};
