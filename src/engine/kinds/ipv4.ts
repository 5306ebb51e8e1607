/**
 * The `ipv4` kind: four decimal octets 0–255 without leading zeros (`192.168.10.4`), optionally
 * followed by a prefix length `/0`–`/32` (`10.0.0.0/8`), as PostgreSQL prints `inet`.
 *
 * fpe encrypts the 32-bit address as one integer in [0, 2^32) and prints the result as four octets
 * 0–255, so it is always a valid address; the prefix length is kept as it is, not encrypted.
 * The text length may change (`10.0.0.1` may become `203.117.64.211`): the seed allows group
 * lengths to differ, and a fixed-width output would not be a valid address.
 * Host bits are encrypted too, so a `cidr` value (host bits zero) does not stay a valid `cidr`.
 *
 * mask keeps the first two octets, the rest → 0 (`192.168.10.4` → `192.168.0.0`), prefix kept.
 */
import type { FpeCipher } from '../crypto/fpeCipher.js';
import { DOMAIN_TOO_SMALL, INVALID_VALUE, type ElementFailure } from '../errors.js';
import { redactLayout } from '../methods/redact.js';
import type { FpeDirection, KindHandler } from './kind.js';

export interface ParsedIpv4 {
  /** The address as an unsigned 32-bit integer. */
  readonly address: number;
  /** `/8` etc. exactly as written, or '' when absent. */
  readonly prefix: string;
}

const OCTET = '(0|[1-9][0-9]{0,2})';
const IPV4 = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}(/(?:[0-9]|[12][0-9]|3[0-2]))?$`);

const ADDRESS_COUNT = 2n ** 32n;
const TWEAK = new TextEncoder().encode('ipv4:address');

export function parseIpv4(value: string): ParsedIpv4 | undefined {
  const match = IPV4.exec(value);
  if (!match) return undefined;
  let address = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(match[i]);
    if (octet > 255) return undefined;
    address = address * 256 + octet;
  }
  return { address, prefix: match[5] ?? '' };
}

export function formatIpv4(address: number, prefix: string): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.') + prefix;
}

function fpeAddresses(values: readonly string[], direction: FpeDirection, cipher: FpeCipher): (string | ElementFailure)[] {
  const results: (string | ElementFailure)[] = values.map(() => INVALID_VALUE);
  const indexes: number[] = [];
  const parsed: ParsedIpv4[] = [];
  values.forEach((value, index) => {
    const ip = parseIpv4(value);
    if (!ip) return;
    indexes.push(index);
    parsed.push(ip);
  });
  if (parsed.length === 0) return results;
  // One cipher call for the whole request: every address shares the domain and the tweak.
  const inputs = parsed.map((ip) => BigInt(ip.address));
  const out = direction === 'encrypt'
    ? cipher.encryptInteger(ADDRESS_COUNT, inputs, TWEAK)
    : cipher.decryptInteger(ADDRESS_COUNT, inputs, TWEAK);
  indexes.forEach((valueIndex, i) => {
    const address = out[i];
    const ip = parsed[i];
    results[valueIndex] = address === null || address === undefined || ip === undefined
      ? DOMAIN_TOO_SMALL
      : formatIpv4(Number(address), ip.prefix);
  });
  return results;
}

export const ipv4Kind: KindHandler = {
  kind: 'ipv4',
  hasLang: false,
  isValid: (value) => parseIpv4(value) !== undefined,
  fpe: (values, direction, cipher) => fpeAddresses(values, direction, cipher),
  mask(value) {
    const ip = parseIpv4(value);
    // Never echo a value that is not an address: fall back to its bare layout.
    if (!ip) return redactLayout(value);
    return formatIpv4(ip.address - (ip.address % 65536), ip.prefix);
  },
  redact: (value) => redactLayout(value),
};
