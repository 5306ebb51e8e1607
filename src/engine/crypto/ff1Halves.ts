import { BigIntHalves } from './ff1BigIntHalves.js';
import { ByteHalves } from './ff1ByteHalves.js';
import type { FeistelHalves } from './ff1FeistelHalves.js';
import { NumberHalves, NUMBER_HALVES_MAX_MODULUS } from './ff1NumberHalves.js';

/** Which arithmetic a (radix, length) gets: (a) exact JS numbers, (b) radix-256 bytes, (c) BigInt. */
export type FeistelArithmetic = 'number' | 'bytes' | 'bigint';

export function feistelArithmeticFor(radix: number, length: number): FeistelArithmetic {
  const v = length - (length >> 1);
  let modulus = 1;
  for (let p = 0; p < v && modulus <= NUMBER_HALVES_MAX_MODULUS; p++) modulus *= radix;
  if (modulus <= NUMBER_HALVES_MAX_MODULUS) return 'number';
  return radix === 256 ? 'bytes' : 'bigint';
}

export function loadFeistelHalves(
  values: readonly Uint16Array[], radix: number, u: number, v: number, decrypt: boolean,
): FeistelHalves {
  switch (feistelArithmeticFor(radix, u + v)) {
    case 'number': return new NumberHalves(values, radix, u, v, decrypt);
    case 'bytes': return new ByteHalves(values, u, v, decrypt);
    case 'bigint': return new BigIntHalves(values, radix, u, v, decrypt);
  }
}
