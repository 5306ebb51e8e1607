/**
 * Sizes that SP 800-38G FF1 derives from the radix and the length, computed exactly, and the
 * minimum length for a domain size.
 */

/** SP 800-38G Rev.1: FF1 needs radix^length >= 10^6. */
export const FF1_MIN_DOMAIN_SIZE = 1_000_000;
export const FF1_MAX_RADIX = 65_536;

/**
 * b = ceil(ceil(v * log2(radix)) / 8): the bytes of [NUM_radix(B)]^b. Exactly, that is the byte
 * length of radix^v - 1 (for a power-of-two radix, v*log2(radix) is an integer; otherwise
 * ceil(v*log2(radix)) is the bit length of radix^v, equal to that of radix^v - 1).
 */
export function numeralStringBytes(radix: number, v: number): number {
  if (v === 0) return 0;
  if ((radix & (radix - 1)) === 0) return Math.ceil((Math.log2(radix) * v) / 8);
  const estimate = v * Math.log2(radix);
  // Only when the float lands close to an integer could rounding pick the wrong side: ask BigInt.
  if (Math.abs(estimate - Math.round(estimate)) > 1e-6) return Math.ceil(Math.ceil(estimate) / 8);
  const bits = (BigInt(radix) ** BigInt(v) - 1n).toString(2).length;
  return Math.ceil(bits / 8);
}

/** d = 4 * ceil(b / 4) + 4: the bytes of S that feed y. */
export function feistelOutputBytes(b: number): number {
  return 4 * Math.ceil(b / 4) + 4;
}

/** The smallest length n with radix^n >= domainSize (domainSize a safe integer). */
export function minLengthForDomain(radix: number, domainSize: number): number {
  let length = 0;
  for (let size = 1; size < domainSize; size *= radix) length++;
  return length;
}
