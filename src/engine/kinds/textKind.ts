/**
 * The four text kinds (address, text, name, city): free text in any supported script.
 *
 * fpe maps each letter and digit to another of its class (see scripts/charClassSpecs.ts) and
 * leaves everything else where it is: combining marks, joiners, spaces, punctuation. The classed
 * positions of a value form one mixed-radix number (each position's radix its class size), which
 * the cipher encrypts as a whole; values whose domains are equal share one batched call. A letter
 * or digit of an unsupported script makes the value fail (invalid_value) rather than stay readable.
 *
 * mask keeps the first letter of each word: "Jean-Luc Picard" → "J***-L** P*****".
 */
import { MIN_DOMAIN, type FpeCipher, type Tweak } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { MASK_CHAR, isAscii, redactLayout } from '../methods/redact.js';
import { analyseLetters, renderLetters, type LetterPattern } from '../scripts/letterPattern.js';
import { fromMixedRadix, mixedRadixDomain, toMixedRadix } from '../scripts/mixedRadix.js';
import type { Kind } from '../types.js';
import type { FpeDirection, KindHandler } from './kind.js';

export type TextKindName = Extract<Kind, 'address' | 'text' | 'name' | 'city'>;

export interface TextKindOptions {
  /** Whether tab, line feed and carriage return are allowed (multi-line addresses and texts). */
  readonly allowLineBreaks: boolean;
}

const CONTROL = /\p{Cc}/u;
const CONTROL_EXCEPT_LINE_BREAKS = /(?![\t\n\r])\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const MARK = /^\p{M}$/u;
const JOINER = /^[\u200c\u200d]$/u;
const LETTER = /^\p{L}$/u;

interface PendingValue {
  readonly index: number;
  readonly pattern: LetterPattern;
  readonly numeral: bigint;
}

function isValidText(value: string, options: TextKindOptions): boolean {
  if (typeof value !== 'string' || value.length === 0 || LONE_SURROGATE.test(value)) return false;
  return !(options.allowLineBreaks ? CONTROL_EXCEPT_LINE_BREAKS : CONTROL).test(value);
}

function fpeTexts(
  values: readonly string[], direction: FpeDirection, cipher: FpeCipher, options: TextKindOptions,
): (string | ElementFailure)[] {
  const results: (string | ElementFailure)[] = values.map(() => INVALID_VALUE);
  // Grouped by domain size, so each distinct domain is one cipher call for the whole request.
  const byDomain = new Map<bigint, PendingValue[]>();
  values.forEach((value, index) => {
    if (!isValidText(value, options)) return;
    const pattern = analyseLetters(value.normalize('NFC'));
    if (!pattern) return;
    const domain = mixedRadixDomain(pattern.radices);
    if (domain < BigInt(MIN_DOMAIN)) {
      results[index] = DOMAIN_TOO_SMALL;
      return;
    }
    const group = byDomain.get(domain) ?? [];
    group.push({ index, pattern, numeral: fromMixedRadix(pattern.numerals, pattern.radices) });
    byDomain.set(domain, group);
  });

  for (const [domain, group] of byDomain) {
    const numerals = group.map((g) => g.numeral);
    const tweaks: Tweak[] = group.map((g) => g.pattern.tweak);
    const out = direction === 'encrypt'
      ? cipher.encryptInteger(domain, numerals, tweaks)
      : cipher.decryptInteger(domain, numerals, tweaks);
    group.forEach(({ index, pattern }, k) => {
      const mapped = out[k];
      if (mapped === null || mapped === undefined) {
        results[index] = DOMAIN_TOO_SMALL;
        return;
      }
      const text = renderLetters(pattern, toMixedRadix(mapped, pattern.radices));
      // The classes exclude every member NFC would compose with the marks after it, so this
      // holds; were it ever not to, the value could not decrypt, so fail it instead.
      results[index] = text.normalize('NFC') === text ? text : INVALID_VALUE;
    });
  }
  return results;
}

/**
 * The first letter of each word stays, every other letter and digit becomes MASK_CHAR; the
 * combining marks and joiners of a hidden letter go with it. A word is a run of letters, digits,
 * marks and joiners; a word that starts with a digit shows nothing.
 */
export function maskText(value: string): string {
  if (isAscii(value)) return maskAscii(value);
  // Pieces joined once: `+=` per character leaves a chain of thousands of string pieces per value,
  // which a batch of long values keeps alive (hundreds of MB for the collector) until it is written.
  const out: string[] = [];
  let inWord = false;
  let baseKept = false;
  // A joiner after the kept letter binds it to the next one, which is hidden: it is shown only
  // when the word ends there (a chillu written with ZWJ, say).
  let joiners = '';
  for (const ch of value.normalize('NFC')) {
    if (LETTER_OR_NUMBER.test(ch)) {
      baseKept = !inWord && LETTER.test(ch);
      inWord = true;
      joiners = '';
      out.push(baseKept ? ch : MASK_CHAR);
    } else if (JOINER.test(ch)) {
      if (inWord && baseKept) joiners += ch;
    } else if (MARK.test(ch)) {
      if (inWord && baseKept) out.push(joiners, ch);
      joiners = '';
    } else {
      out.push(joiners, ch);
      inWord = false;
      baseKept = false;
      joiners = '';
    }
  }
  out.push(joiners);
  return out.join('');
}

const MASK_BYTE = MASK_CHAR.charCodeAt(0);

/** maskText of 7-bit text, byte by byte: its words are runs of letters and digits. */
function maskAscii(value: string): string {
  const bytes = Buffer.from(value, 'latin1');
  let inWord = false;
  for (let at = 0; at < bytes.length; at++) {
    const code = bytes[at] as number;
    const lower = code | 0x20;
    const letter = lower >= 0x61 && lower <= 0x7a;
    if (letter || (code >= 0x30 && code <= 0x39)) {
      // The first character of a word stays if it is a letter; every other one is hidden.
      if (inWord || !letter) bytes[at] = MASK_BYTE;
      inWord = true;
    } else {
      inWord = false;
    }
  }
  return bytes.toString('latin1');
}

export function createTextKind(kind: TextKindName, options: TextKindOptions): KindHandler {
  return {
    kind,
    hasLang: true,
    isValid: (value) => isValidText(value, options),
    fpe: (values, direction, cipher) => fpeTexts(values, direction, cipher, options),
    mask: (value) => maskText(value),
    redact: (value) => redactLayout(value),
  };
}
