/**
 * The value a constant in SQL text stands for, as PostgreSQL would store it in a text column:
 * strings as the parser decoded them ('' doubling, E'' escapes, U&'', dollar quotes, continued
 * lines), numbers in numeric_out's canonical form (`1_000` → `1000`, `1e3` → `1000`, `.50` → `0.50`).
 */
import type { A_Const } from 'libpg-query';

export type ConstantValue =
  | { readonly kind: 'value'; readonly value: string }
  | { readonly kind: 'null' }
  | { readonly kind: 'unsupported'; readonly reason: string };

export function constantValue(constant: A_Const): ConstantValue {
  if (constant.isnull === true) return { kind: 'null' };
  if (constant.sval !== undefined) return { kind: 'value', value: constant.sval.sval ?? '' };
  if (constant.ival !== undefined) return { kind: 'value', value: String(constant.ival.ival ?? 0) };
  if (constant.fval !== undefined) {
    const value = canonicalNumeric(constant.fval.fval ?? '0');
    return value === undefined
      ? { kind: 'unsupported', reason: 'a numeric constant pgveil cannot read' }
      : { kind: 'value', value };
  }
  if (constant.boolval !== undefined) return { kind: 'value', value: constant.boolval.boolval === true ? 'true' : 'false' };
  if (constant.bsval !== undefined) return { kind: 'unsupported', reason: "a bit-string constant (B'…' or X'…')" };
  return { kind: 'unsupported', reason: 'a constant of unknown form' };
}

const RADIX_PREFIX: Readonly<Record<string, number>> = { x: 16, o: 8, b: 2 };

/**
 * numeric_out's text for a numeric constant: sign, integer digits without leading zeros, and as
 * many fraction digits as the constant's scale (`1.50` keeps two, `1.5e-3` → `0.0015`).
 * Hex/octal/binary integers too large for int4 reach here as text and become decimal.
 */
export function canonicalNumeric(written: string): string | undefined {
  const text = written.replace(/_/g, '');
  const radix = /^(-?)0([xob])([0-9a-f]+)$/i.exec(text);
  if (radix !== null) {
    const base = RADIX_PREFIX[(radix[2] as string).toLowerCase()] as number;
    let value = 0n;
    for (const digit of (radix[3] as string).toLowerCase()) {
      const digitValue = Number.parseInt(digit, base);
      if (Number.isNaN(digitValue)) return undefined;
      value = value * BigInt(base) + BigInt(digitValue);
    }
    return value === 0n ? '0' : `${radix[1] as string}${value.toString()}`;
  }
  const decimal = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (decimal === null) return undefined;
  const integerDigits = decimal[2] ?? '';
  const fractionDigits = decimal[3] ?? '';
  if (integerDigits === '' && fractionDigits === '') return undefined;
  const exponent = decimal[4] === undefined ? 0 : Number.parseInt(decimal[4], 10);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1000) return undefined;
  const digits = integerDigits + fractionDigits;
  const scale = Math.max(0, fractionDigits.length - exponent);
  const pointAt = integerDigits.length + exponent;
  let whole: string;
  let fraction: string;
  if (pointAt <= 0) {
    whole = '0';
    fraction = '0'.repeat(-pointAt) + digits;
  } else if (pointAt >= digits.length) {
    whole = digits + '0'.repeat(pointAt - digits.length);
    fraction = '';
  } else {
    whole = digits.slice(0, pointAt);
    fraction = digits.slice(pointAt);
  }
  whole = whole.replace(/^0+(?=\d)/, '');
  fraction = fraction.padEnd(scale, '0').slice(0, scale);
  const isZero = /^0*$/.test(whole + fraction);
  const sign = decimal[1] === '-' && !isZero ? '-' : '';
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}
