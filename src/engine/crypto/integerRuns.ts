import type { FF1 } from './ff1.js';
import type { Tweak } from './fpeCipher.js';
import { numberToNumerals } from './numerals.js';
import { ScratchNumerals } from './scratchNumerals.js';

/**
 * FpeCipher.cryptIntegerRun's walk: integers in [0, domain) through FF1 radix 2 over `bits` bits,
 * cycle walking what lands past the domain, all values together (one FF1 call per pass). Where
 * FF1 takes bit strings held in integers (the native build) they go as they are; else as one
 * numeral per bit. Calls are synchronous: one set of scratch serves every call, wiped after it.
 */

/** cryptIntegerRun's largest domain: its integers and bit conversions stay in 31 bits. */
export const MAX_INTEGER_RUN_DOMAIN = 2 ** 31;
/** The numeral path's bits, in and out. */
const integerInput = new ScratchNumerals();
const integerOutput = new ScratchNumerals();
/** The cycle walk: the values still walking (indexes, grown as needed), and their bits in and out. */
let pendingScratch = new Int32Array(512);
const integerAgain = new ScratchNumerals();
const integerNext = new ScratchNumerals();
/** The bits path's integers in and out. */
let bitsInScratch = new Uint32Array(512);
let bitsOutScratch = new Uint32Array(512);
/** Past this many values a run gets arrays of its own: one huge batch does not pin its memory. */
const MAX_KEPT_BITS = 1 << 16;

/** The number whose bits (most significant first) are bits[start, start + count), count ≤ 31. */
function bitsToNumber(bits: Uint16Array, start: number, count: number): number {
  let value = 0;
  for (let p = start; p < start + count; p++) value = (value << 1) | (bits[p] as number);
  return value;
}

/**
 * out[j] = FF1 of values[j] (already checked to lie in [0, domain), domain <= 2^bits), cycle
 * walked into the domain; `tweak` is the integer domain's prefixed tweak.
 */
export function cryptIntegerRunWith(ff1: FF1, bits: number, domain: number, values: Int32Array, tweak: Tweak, decrypt: boolean, out: Int32Array): void {
  const count = values.length;
  if (pendingScratch.length < count) pendingScratch = new Int32Array(count);
  if (integerRunAsBits(ff1, bits, domain, values, tweak, decrypt, out)) return;
  integerRunAsNumerals(ff1, bits, domain, values, tweak, decrypt, out);
}

/**
 * Through FF1's bits-in-integers path; false (nothing written) where FF1 has no such path.
 * pendingScratch holds at least values.length entries.
 */
function integerRunAsBits(ff1: FF1, bits: number, domain: number, values: Int32Array, tweak: Tweak, decrypt: boolean, out: Int32Array): boolean {
  const count = values.length;
  if (bitsInScratch.length < count && count <= MAX_KEPT_BITS) {
    bitsInScratch = new Uint32Array(count);
    bitsOutScratch = new Uint32Array(count);
  }
  const input = count <= bitsInScratch.length ? bitsInScratch.subarray(0, count) : new Uint32Array(count);
  const output = count <= bitsOutScratch.length ? bitsOutScratch.subarray(0, count) : new Uint32Array(count);
  const pending = pendingScratch;
  try {
    for (let j = 0; j < count; j++) {
      input[j] = values[j] as number;
      pending[j] = j;
    }
    // Every value goes once; what lands past the domain goes again (input's first entries hold it).
    let walking = count;
    for (let pass = 0; walking > 0; pass++) {
      const next = pass === 0 ? output : output.subarray(0, walking);
      if (!ff1.cryptBitsRun(bits, pass === 0 ? input : input.subarray(0, walking), tweak, decrypt, next)) {
        if (pass > 0) throw new Error('FF1 refused a cycle walk it had begun');
        return false;
      }
      let stillWalking = 0;
      for (let g = 0; g < walking; g++) {
        const y = next[g] as number;
        const j = pending[g] as number;
        if (y < domain) {
          out[j] = y;
          continue;
        }
        pending[stillWalking] = j;
        input[stillWalking++] = y;
      }
      walking = stillWalking;
    }
    return true;
  } finally {
    input.fill(0);
    output.fill(0);
  }
}

/** The same with one numeral per bit. */
function integerRunAsNumerals(ff1: FF1, bits: number, domain: number, values: Int32Array, tweak: Tweak, decrypt: boolean, out: Int32Array): void {
  const count = values.length;
  const input = integerInput.take(count * bits);
  const output = integerOutput.take(count * bits);
  try {
    for (let j = 0; j < count; j++) numberToNumerals(values[j] as number, 2, input, j * bits, bits);
    ff1.cryptRun(bits, input, tweak, decrypt, output);
    // The values that landed past the domain walk again, together, until none is left.
    const pending = pendingScratch;
    let walking = 0;
    for (let j = 0; j < count; j++) {
      const y = bitsToNumber(output, j * bits, bits);
      if (y >= domain) pending[walking++] = j;
      else out[j] = y;
    }
    while (walking > 0) {
      const again = integerAgain.take(walking * bits);
      const next = integerNext.take(walking * bits);
      try {
        for (let g = 0; g < walking; g++) {
          const from = (pending[g] as number) * bits;
          for (let p = 0; p < bits; p++) again[g * bits + p] = output[from + p] as number;
        }
        ff1.cryptRun(bits, again, tweak, decrypt, next);
        let stillWalking = 0;
        for (let g = 0; g < walking; g++) {
          const j = pending[g] as number;
          const y = bitsToNumber(next, g * bits, bits);
          if (y < domain) {
            out[j] = y;
            continue;
          }
          for (let p = 0; p < bits; p++) output[j * bits + p] = next[g * bits + p] as number;
          pending[stillWalking++] = j;
        }
        walking = stillWalking;
      } finally {
        again.fill(0);
        next.fill(0);
      }
    }
  } finally {
    input.fill(0);
    output.fill(0);
  }
}
