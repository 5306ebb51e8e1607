/**
 * The `email` kind: `local@domain.tld`.
 * - local part: ASCII letters, digits and `.` `_` `%` `+` `-`, 1–64 characters, no leading,
 *   trailing or double dot;
 * - domain: two or more labels of ASCII letters, digits and hyphens (1–63 characters, no leading
 *   or trailing hyphen), at most 253 characters; the last label (TLD) is 2+ letters.
 *
 * fpe keeps the length and the form: every letter and digit of the local part and of every domain
 * label but the TLD maps within its class (lowercase, uppercase, digit); `.` `_` `%` `+` `-` `@`
 * and the TLD stay as they are. The classed positions form one mixed-radix integer, encrypted in
 * the domain of all values with the same pattern; the tweak binds that pattern (which class where,
 * the fixed characters, the TLD). Hyphens never move, so labels keep letters or digits at both ends.
 * A value with too few letters and digits (`_@x.io`) is DOMAIN_TOO_SMALL.
 *
 * mask keeps the first character of the local part and the domain: `j*******@example.co.uk`.
 */
import type { FpeCipher, Tweak } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { MASK_CHAR, redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';

const LOCAL_PART = /^[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const TOP_LEVEL_LABEL = /^[A-Za-z]{2,}$/;
const MAX_LOCAL_LENGTH = 64;
const MAX_LABEL_LENGTH = 63;
const MAX_DOMAIN_LENGTH = 253;

export interface ParsedEmail {
  readonly local: string;
  readonly domain: string;
}

export function parseEmail(value: string): ParsedEmail | undefined {
  const parts = value.split('@');
  if (parts.length !== 2) return undefined;
  const [local = '', domain = ''] = parts;
  if (local.length > MAX_LOCAL_LENGTH || !LOCAL_PART.test(local)) return undefined;
  if (domain.length > MAX_DOMAIN_LENGTH) return undefined;
  const labels = domain.split('.');
  if (labels.length < 2) return undefined;
  if (!labels.every((l) => l.length <= MAX_LABEL_LENGTH && DOMAIN_LABEL.test(l))) return undefined;
  if (!TOP_LEVEL_LABEL.test(labels[labels.length - 1] ?? '')) return undefined;
  return { local, domain };
}

/** A character class that fpe maps within: its size, its first code point, its tweak marker. */
interface CharClass {
  readonly size: number;
  readonly first: number;
  readonly marker: string;
}
const LOWER: CharClass = { size: 26, first: 0x61, marker: 'a' };
const UPPER: CharClass = { size: 26, first: 0x41, marker: 'A' };
const DIGIT: CharClass = { size: 10, first: 0x30, marker: '9' };

function classOf(code: number): CharClass | undefined {
  if (code >= 0x61 && code <= 0x7a) return LOWER;
  if (code >= 0x41 && code <= 0x5a) return UPPER;
  if (code >= 0x30 && code <= 0x39) return DIGIT;
  return undefined;
}

/** A valid email split into the part fpe rewrites and the `.tld` it keeps. */
interface EmailPattern {
  /** `local@labels` without the TLD: the characters fpe may change. */
  readonly body: string;
  /** `.tld`, kept as written. */
  readonly suffix: string;
  /** The class of each body position, undefined for a fixed character. */
  readonly classes: readonly (CharClass | undefined)[];
  /** Product of the class sizes: the size of the domain this value is encrypted in. */
  readonly domainSize: bigint;
  /** `aaaa.aaa@aaaaaaa.aa.uk`: classes as markers, fixed characters and TLD as written. */
  readonly tweakText: string;
}

function patternOf(email: ParsedEmail): EmailPattern {
  const whole = `${email.local}@${email.domain}`;
  const tldStart = whole.lastIndexOf('.');
  const body = whole.slice(0, tldStart);
  const suffix = whole.slice(tldStart);
  const classes: (CharClass | undefined)[] = [];
  let domainSize = 1n;
  let tweakText = '';
  for (let i = 0; i < body.length; i++) {
    const cls = classOf(body.charCodeAt(i));
    classes.push(cls);
    if (cls) domainSize *= BigInt(cls.size);
    tweakText += cls ? cls.marker : body.charAt(i);
  }
  return { body, suffix, classes, domainSize, tweakText: tweakText + suffix };
}

/** The classed characters of `body` as one mixed-radix integer, first position most significant. */
function toInteger(pattern: EmailPattern): bigint {
  let n = 0n;
  pattern.classes.forEach((cls, i) => {
    if (cls) n = n * BigInt(cls.size) + BigInt(pattern.body.charCodeAt(i) - cls.first);
  });
  return n;
}

function fromInteger(pattern: EmailPattern, n: bigint): string {
  const chars = pattern.body.split('');
  let rest = n;
  for (let i = chars.length - 1; i >= 0; i--) {
    const cls = pattern.classes[i];
    if (!cls) continue;
    const radix = BigInt(cls.size);
    chars[i] = String.fromCharCode(cls.first + Number(rest % radix));
    rest /= radix;
  }
  return chars.join('') + pattern.suffix;
}

const encoder = new TextEncoder();

function fpeEmails(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
  const results: (string | ElementFailure)[] = values.map(() => INVALID_VALUE);
  // encryptInteger takes one domain per call: one call per distinct domain size, tweak per value.
  const groups = new Map<bigint, { indexes: number[]; patterns: EmailPattern[] }>();
  values.forEach((value, index) => {
    const email = parseEmail(value);
    if (!email) return;
    const pattern = patternOf(email);
    let group = groups.get(pattern.domainSize);
    if (!group) groups.set(pattern.domainSize, (group = { indexes: [], patterns: [] }));
    group.indexes.push(index);
    group.patterns.push(pattern);
  });
  for (const [domainSize, { indexes, patterns }] of groups) {
    const inputs = patterns.map(toInteger);
    const tweaks: Tweak[] = patterns.map((p) => encoder.encode(`email:${p.tweakText}`));
    const out = direction === 'encrypt'
      ? cipher.encryptInteger(domainSize, inputs, tweaks)
      : cipher.decryptInteger(domainSize, inputs, tweaks);
    indexes.forEach((valueIndex, i) => {
      const n = out[i];
      const pattern = patterns[i];
      results[valueIndex] = n === null || n === undefined || pattern === undefined
        ? DOMAIN_TOO_SMALL
        : fromInteger(pattern, n);
    });
  }
  return results;
}

export const emailKind: KindHandler = {
  kind: 'email',
  hasLang: false,
  isValid: (value) => parseEmail(value) !== undefined,
  fpe: (values, direction, cipher) => fpeEmails(values, direction, cipher),
  mask(value) {
    const email = parseEmail(value);
    // Never echo a value that is not an email: fall back to its bare layout.
    if (!email) return redactLayout(value);
    return email.local.charAt(0) + MASK_CHAR.repeat(email.local.length - 1) + '@' + email.domain;
  },
  redact: (value) => redactLayout(value),
};
