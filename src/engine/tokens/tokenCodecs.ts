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
/** Longer decimal text is no token (a long one would cost the quadratic BigInt decoding). */
const MAX_DECIMAL_TOKEN = 32_768;

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
      if (token.length > MAX_DECIMAL_TOKEN) return null;
      // Without a space the decoder's own check is the pattern's: digits only.
      if (!token.includes(' ')) return DECIMAL.decode(token);
      return DIGIT_GROUPS.test(token) ? DECIMAL.decode(token.replaceAll(' ', '')) : null;
    },
  };
}

const LETTERS_ONLY = /^[a-z]+$/;
const TLD_BASE36_WIDTH = 3;
const TLD_LETTERS_WIDTH = 4;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The token's last three base-36 characters become its top-level domain. Validators downstream
 * want a TLD of letters: three letters stay as they are, and three characters with a digit are
 * written as four letters (their base-36 number in base 26). Tokens written before that, with a
 * digit in a three-character TLD, still read back.
 */
function lettersOnlyTld(base36: string): string {
  if (/^[a-z]+$/.test(base36)) return base36;
  let n = 0;
  for (const c of base36) n = n * 36 + FIXED_WIDTH_ALPHABETS.base36.indexOf(c);
  let letters = '';
  for (let i = 0; i < TLD_LETTERS_WIDTH; i++) {
    letters = LETTERS.charAt(n % 26) + letters;
    n = Math.floor(n / 26);
  }
  return letters;
}

/** The three base-36 characters a TLD stands for; null for four letters no token is written as. */
function tldBase36(tld: string): string | null {
  if (tld.length === TLD_BASE36_WIDTH) return tld;
  let n = 0;
  for (const c of tld) n = n * 26 + LETTERS.indexOf(c);
  if (n >= 36 ** TLD_BASE36_WIDTH) return null;
  let base36 = '';
  for (let i = 0; i < TLD_BASE36_WIDTH; i++) {
    base36 = FIXED_WIDTH_ALPHABETS.base36.charAt(n % 36) + base36;
    n = Math.floor(n / 36);
  }
  // Three letters are written as themselves, so their four-letter spelling is not a token.
  return /^[a-z]+$/.test(base36) ? null : base36;
}

/** Basic Latin in the local@domain.tld form: the base-36 text cut in three, the TLD letters only. */
const emailCodec: TokenCodec = {
  render(bytes) {
    const text = BASE36.encode(bytes);
    const tld = TLD_BASE36_WIDTH;
    const local = Math.max(1, Math.floor((text.length - tld) * 0.6));
    return `${text.slice(0, local)}@${text.slice(local, text.length - tld)}.${lettersOnlyTld(text.slice(text.length - tld))}`;
  },
  parse(token) {
    // local@domain.tld, each part non-empty: what is left (their characters) the decoder checks.
    const at = token.indexOf('@');
    const dot = token.lastIndexOf('.');
    if (at < 1 || dot < at + 2) return null;
    const tldWidth = token.length - dot - 1;
    const tld = tldWidth === TLD_BASE36_WIDTH ? token.slice(dot + 1)
      : tldWidth === TLD_LETTERS_WIDTH && LETTERS_ONLY.test(token.slice(dot + 1)) ? tldBase36(token.slice(dot + 1)) : null;
    return tld === null ? null : BASE36.decode(token.slice(0, at) + token.slice(at + 1, dot) + tld);
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

/**
 * A token in the spelling pgveil writes today: an email token with a digit in a three-character
 * TLD comes back with its letters-only TLD; every other text comes back as it is.
 */
export function currentTokenSpelling(kind: Kind, token: string): string {
  if (kind !== 'email') return token;
  const bytes = emailCodec.parse(token);
  return bytes === null ? token : emailCodec.render(bytes, '', 'en');
}
