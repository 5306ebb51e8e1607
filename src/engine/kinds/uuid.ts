/**
 * The `uuid` kind: 8-4-4-4-12 hex digits with hyphens (`f47ac10b-58cc-4372-a567-0e02b2c3d479`),
 * the form PostgreSQL prints; the unhyphenated and braced forms are not accepted.
 *
 * Case: an input whose letters are all uppercase gives uppercase output; any other input
 * (lowercase, digits only, or mixed case) gives lowercase output, PostgreSQL's canonical form.
 * So lowercase and uppercase values round-trip exactly; a mixed-case value comes back lowercase
 * (the same uuid). Rarely, an uppercase value's ciphertext has no letters at all; it then
 * decrypts to the lowercase form.
 *
 * fpe keeps the version nibble (first hex digit of the third group) and the two top bits of the
 * variant nibble (first hex digit of the fourth group), and encrypts the other 122 bits as one
 * integer; the kept bits are bound in the tweak. The output is a uuid of the same version and
 * variant.
 *
 * mask: every hex digit but the last four → 0, hyphens kept. redact: hyphens kept.
 */
import type { FpeCipher, Tweak } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';

export interface ParsedUuid {
  /** The 128 bits, most significant first as written. */
  readonly bits: bigint;
  readonly upperCase: boolean;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HAS_LOWER = /[a-f]/;
const HAS_UPPER = /[A-F]/;

// Bit positions, counted from the least significant bit of the 128.
const VERSION_SHIFT = 76n;  // hex digit 13: bits 76–79
const VARIANT_SHIFT = 62n;  // top two bits of hex digit 17: bits 62–63
const LOW_BITS = 62n;       // bits 0–61, below the variant
const MIDDLE_BITS = 12n;    // bits 64–75, between variant and version
const FREE_BITS_DOMAIN = 2n ** 122n;

function mask(bitCount: bigint): bigint {
  return (1n << bitCount) - 1n;
}

export function parseUuid(value: string): ParsedUuid | undefined {
  if (!UUID.test(value)) return undefined;
  return {
    bits: BigInt('0x' + value.replaceAll('-', '')),
    upperCase: HAS_UPPER.test(value) && !HAS_LOWER.test(value),
  };
}

export function formatUuid(bits: bigint, upperCase: boolean): string {
  const hex = bits.toString(16).padStart(32, '0');
  const text = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return upperCase ? text.toUpperCase() : text;
}

/** The kept bits: version nibble and variant top bits, in place, everything else zero. */
function keptBits(bits: bigint): bigint {
  return bits & ((0xfn << VERSION_SHIFT) | (0x3n << VARIANT_SHIFT));
}

/** The 122 other bits, packed into one integer in [0, 2^122). */
function freeBits(bits: bigint): bigint {
  const low = bits & mask(LOW_BITS);
  const middle = (bits >> 64n) & mask(MIDDLE_BITS);
  const high = bits >> 80n;
  return low | (middle << LOW_BITS) | (high << (LOW_BITS + MIDDLE_BITS));
}

/** The inverse of freeBits, with the kept bits put back. */
function withFreeBits(kept: bigint, free: bigint): bigint {
  const low = free & mask(LOW_BITS);
  const middle = (free >> LOW_BITS) & mask(MIDDLE_BITS);
  const high = free >> (LOW_BITS + MIDDLE_BITS);
  return kept | low | (middle << 64n) | (high << 80n);
}

const TWEAK_LABEL = new TextEncoder().encode('uuid:');

/** Binds the version nibble and variant bits: the public part of the value. */
function tweakFor(bits: bigint): Tweak {
  const version = Number((bits >> VERSION_SHIFT) & 0xfn);
  const variant = Number((bits >> VARIANT_SHIFT) & 0x3n);
  const tweak = new Uint8Array(TWEAK_LABEL.length + 2);
  tweak.set(TWEAK_LABEL);
  tweak[TWEAK_LABEL.length] = version;
  tweak[TWEAK_LABEL.length + 1] = variant;
  return tweak;
}

function fpeUuids(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
  const results: (string | ElementFailure)[] = values.map(() => INVALID_VALUE);
  const indexes: number[] = [];
  const parsed: ParsedUuid[] = [];
  values.forEach((value, index) => {
    const uuid = parseUuid(value);
    if (!uuid) return;
    indexes.push(index);
    parsed.push(uuid);
  });
  if (parsed.length === 0) return results;
  // One cipher call for the whole request: one domain, a tweak per value.
  const inputs = parsed.map((u) => freeBits(u.bits));
  const tweaks = parsed.map((u) => tweakFor(u.bits));
  const out = direction === 'encrypt'
    ? cipher.encryptInteger(FREE_BITS_DOMAIN, inputs, tweaks)
    : cipher.decryptInteger(FREE_BITS_DOMAIN, inputs, tweaks);
  indexes.forEach((valueIndex, i) => {
    const free = out[i];
    const uuid = parsed[i];
    results[valueIndex] = free === null || free === undefined || uuid === undefined
      ? DOMAIN_TOO_SMALL
      : formatUuid(withFreeBits(keptBits(uuid.bits), free), uuid.upperCase);
  });
  return results;
}

export const uuidKind: KindHandler = {
  kind: 'uuid',
  hasLang: false,
  isValid: (value) => parseUuid(value) !== undefined,
  fpe: (values, direction, cipher) => fpeUuids(values, direction, cipher),
  mask(value) {
    // Never echo a value that is not a uuid: fall back to its bare layout.
    if (!parseUuid(value)) return redactLayout(value);
    const keepFrom = value.length - 4;
    let out = '';
    for (let i = 0; i < value.length; i++) {
      const ch = value.charAt(i);
      out += ch === '-' || i >= keepFrom ? ch : '0';
    }
    return out;
  },
  redact: (value) => redactLayout(value),
};
