/**
 * Big-endian byte strings as unsigned integers, converted to and from digits in a radix up to
 * 2^16 by dividing or multiplying them in place by a chunk of digits at a time, in plain
 * doubles: the base conversion of token-sized values. A BigInt built from hex text and divided
 * per chunk costs several times more for a few dozen bytes; it wins on long inputs (both are
 * quadratic, BigInt has native 64-bit limbs), so callers switch to it above 64 bytes.
 *
 * Exactness: with a factor d < 2^45 every intermediate (at most 256·d) stays below 2^53, so
 * every product, sum and difference below is an exact integer; the quotients are exact as
 * their comments say.
 */

/** Factors must stay below this; see above. */
const MAX_FACTOR = 2 ** 45;

/** The most digits k of `radix` with radix^k < MAX_FACTOR, so a chunk of them is one factor. */
function digitsPerFactor(radix: number): number {
  let k = 0;
  for (let power = radix; power < MAX_FACTOR; power *= radix) k++;
  return k;
}

/** powers[i] = radix^i for i up to digitsPerFactor(radix), by radix: `**` calls pow() every time. */
const powersByRadix = new Map<number, readonly number[]>();

function powersOf(radix: number): readonly number[] {
  let powers = powersByRadix.get(radix);
  if (powers === undefined) {
    const built = [1];
    for (let i = digitsPerFactor(radix); i > 0; i--) built.push((built[built.length - 1] as number) * radix);
    powers = built;
    powersByRadix.set(radix, powers);
  }
  return powers;
}

/**
 * Replaces bytes[start..) by its quotient by `divisor` (< MAX_FACTOR) and returns the
 * remainder. Bytes before `start` must be zero; the quotient keeps the same length. The
 * quotient digit comes from a multiply by `inverse` (1 / divisor), cheaper than a division: it
 * is off by at most 2^-44 (a quotient below 256, two roundings), so at most one too high or too
 * low, which the remainder's sign or size shows and one step corrects.
 */
function divideInPlace(bytes: Uint8Array, start: number, divisor: number, inverse: number): number {
  let rest = 0;
  for (let i = start; i < bytes.length; i++) {
    const current = rest * 256 + (bytes[i] as number);
    let quotient = Math.floor(current * inverse);
    rest = current - quotient * divisor;
    if (rest < 0) {
      quotient--;
      rest += divisor;
    } else if (rest >= divisor) {
      quotient++;
      rest -= divisor;
    }
    bytes[i] = quotient;
  }
  return rest;
}

/**
 * Replaces bytes by bytes · factor + addend (addend < factor < MAX_FACTOR, so every carry stays
 * below factor). Bytes before `start` must be zero, and are skipped. Returns where the result
 * starts now, or -1 when it needs more than bytes.length bytes.
 */
function multiplyAddInPlace(bytes: Uint8Array, start: number, factor: number, addend: number): number {
  let carry = addend;
  let i = bytes.length - 1;
  for (; i >= start; i--) {
    const current = (bytes[i] as number) * factor + carry;
    carry = Math.floor(current * (1 / 256)); // exact: a power of two
    bytes[i] = current - carry * 256;
  }
  for (; carry > 0; i--) {
    if (i < 0) return -1;
    const current = carry;
    carry = Math.floor(current * (1 / 256));
    bytes[i] = current - carry * 256;
  }
  return i + 1;
}

/** Index of the first non-zero byte at or after `start` (bytes.length when none). */
function firstNonZero(bytes: Uint8Array, start: number): number {
  while (start < bytes.length && bytes[start] === 0) start++;
  return start;
}

/**
 * The digits in base `radix` of the number in `bytes`, least significant first, up to the
 * highest non-zero one (none for zero). Consumes `bytes`: it is left all zero.
 */
export function takeDigits(bytes: Uint8Array, radix: number): number[] {
  const powers = powersOf(radix);
  const chunk = powers.length - 1;
  const factor = powers[chunk] as number;
  const inverse = 1 / factor;
  const digits: number[] = [];
  let start = firstNonZero(bytes, 0);
  while (start < bytes.length) {
    let part = divideInPlace(bytes, start, factor, inverse);
    start = firstNonZero(bytes, start);
    // A whole chunk while more of the number is left; the top chunk up to its last non-zero digit.
    // part < 2^45, so the double quotient is within 2^-8/radix of the exact one, nearer than
    // the 1/radix between a quotient's fraction and the next integer: the floor is exact.
    for (let i = 0; start < bytes.length ? i < chunk : part > 0; i++) {
      const next = Math.floor(part / radix);
      digits.push(part - next * radix);
      part = next;
    }
  }
  return digits;
}

/**
 * The number whose digits (each below `radix`, most significant first) are given, as
 * `byteCount` big-endian bytes; null when it needs more bytes.
 */
export function digitsToBytes(digits: ArrayLike<number>, radix: number, byteCount: number): Uint8Array | null {
  const powers = powersOf(radix);
  const chunk = powers.length - 1;
  const out = new Uint8Array(byteCount);
  let high = byteCount; // out[0..high) is still zero
  // The first chunk takes the odd digits, so the rest are whole chunks.
  let end = digits.length % chunk || chunk;
  let factor = powers[end] as number;
  for (let start = 0; start < digits.length; start = end, end += chunk, factor = powers[chunk] as number) {
    let part = 0;
    for (let i = start; i < end; i++) part = part * radix + (digits[i] as number);
    high = multiplyAddInPlace(out, high, factor, part);
    if (high < 0) return null;
  }
  return out;
}
