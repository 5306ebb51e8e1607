/**
 * One coordinate, latitude or longitude, in decimal degrees: an optional sign, 1–3 integer digits,
 * an optional "." with up to 20 fraction digits, |value| ≤ 180 ("-33.8688", "151.2093", "+7.5").
 *
 * fpe keeps the sign, the layout and a range the layout implies, so the output is still a valid
 * coordinate of the same kind. Leading zeros of the integer part ("005.25", "-033.8688") stay as
 * they are, except the last integer digit; the significant integer digit count picks the band:
 * - 1 digit:  [0, 10)            (e.g. 0.5, 7.25)
 * - 2 digits: [10, 90] when the input is at most 90 (a latitude stays a latitude), else (90, 100)
 * - 3 digits: [100, 180]
 * The magnitude, as an integer of all its digits, maps to its offset in the band, which goes
 * through encryptInteger with the band's size as domain.
 */
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';
import { LayoutTweaks, digitRunLayout, isDigitCode } from './digitTemplate.js';

const LATLNG = /^([-+]?)(\d{1,3})(?:\.(\d{1,20}))?$/;

interface Band {
  readonly name: string;
  readonly low: bigint;  // inclusive, in units of 10^-fractionDigits
  readonly high: bigint; // inclusive
}

interface Coordinate {
  /** Characters before the significant digits: sign and fixed leading zeros. */
  readonly head: string;
  readonly significantIntDigits: number;
  readonly fractionDigits: number;
  readonly magnitude: bigint;
  readonly band: Band;
  readonly layout: string;
}

function bandOf(significantIntDigits: number, fractionDigits: number, magnitude: bigint): Band {
  const unit = 10n ** BigInt(fractionDigits);
  if (significantIntDigits === 1) return { name: 'units', low: 0n, high: 10n * unit - 1n };
  if (significantIntDigits === 2) {
    return magnitude <= 90n * unit
      ? { name: 'tens', low: 10n * unit, high: 90n * unit }
      : { name: 'nineties', low: 90n * unit + 1n, high: 100n * unit - 1n };
  }
  return { name: 'hundreds', low: 100n * unit, high: 180n * unit };
}

function parseCoordinate(value: string): Coordinate | null {
  const match = LATLNG.exec(value);
  if (!match) return null;
  const [, sign = '', integer = '', fraction = ''] = match;
  // Leading zeros are fixed, but at least one integer digit is encrypted.
  let zeros = 0;
  while (zeros < integer.length - 1 && integer.charCodeAt(zeros) === 48) zeros++;
  const significant = integer.slice(zeros);
  const magnitude = BigInt(significant + fraction);
  const band = bandOf(significant.length, fraction.length, magnitude);
  if (magnitude < band.low || magnitude > band.high) return null; // above 180
  return {
    head: sign + integer.slice(0, zeros),
    significantIntDigits: significant.length,
    fractionDigits: fraction.length,
    magnitude,
    band,
    layout: `${zeros}/${band.name}/${digitRunLayout(value)}`,
  };
}

function formatCoordinate(c: Coordinate, magnitude: bigint): string {
  const digits = magnitude.toString().padStart(c.significantIntDigits + c.fractionDigits, '0');
  if (c.fractionDigits === 0) return c.head + digits;
  return `${c.head}${digits.slice(0, c.significantIntDigits)}.${digits.slice(c.significantIntDigits)}`;
}

const tweaks = new LayoutTweaks();

export const latlngKind: KindHandler = {
  kind: 'latlng',
  hasLang: false,

  isValid(value: string): boolean {
    return parseCoordinate(value) !== null;
  },

  /** Same sign, layout and band (see the file comment); one cipher call per band size. */
  fpe(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
    const out = new Array<string | ElementFailure>(values.length).fill(INVALID_VALUE);
    const byDomain = new Map<bigint, { indexes: number[]; coordinates: Coordinate[] }>();
    values.forEach((value, i) => {
      const coordinate = parseCoordinate(value);
      if (!coordinate) return;
      const domain = coordinate.band.high - coordinate.band.low + 1n;
      let group = byDomain.get(domain);
      if (!group) byDomain.set(domain, (group = { indexes: [], coordinates: [] }));
      group.indexes.push(i);
      group.coordinates.push(coordinate);
    });
    for (const [domain, { indexes, coordinates }] of byDomain) {
      const offsets = coordinates.map((c) => c.magnitude - c.band.low);
      const valueTweaks = coordinates.map((c) => tweaks.get(c.layout));
      const results = direction === 'encrypt'
        ? cipher.encryptInteger(domain, offsets, valueTweaks)
        : cipher.decryptInteger(domain, offsets, valueTweaks);
      indexes.forEach((index, k) => {
        const offset = results[k];
        const coordinate = coordinates[k];
        out[index] = offset === null || offset === undefined || !coordinate
          ? DOMAIN_TOO_SMALL
          : formatCoordinate(coordinate, coordinate.band.low + offset);
      });
    }
    return out;
  },

  /** Keeps sign and integer degrees; fraction digits become 0: "-33.8688" → "-33.0000". */
  mask(value: string): string {
    const dot = value.indexOf('.');
    if (dot < 0) return value;
    let out = value.slice(0, dot + 1);
    for (let i = dot + 1; i < value.length; i++) out += isDigitCode(value.charCodeAt(i)) ? '0' : value[i];
    return out;
  },

  redact(value: string): string {
    return redactLayout(value);
  },
};
