import { createSecretKey, type KeyObject } from 'node:crypto';
import { FF1 } from './ff1.js';
import { FF1_MAX_RADIX, minLengthForDomain } from './ff1Params.js';
import {
  FF1_MIN_DOMAIN, MIN_DOMAIN, type FpeCipher, type NumeralConstraint, type Tweak, type Tweaks,
} from './fpeCipher.js';
import {
  TweakMode, checkTweakCount, ff1NumeralsTweaks, integerPrefix, integerTweaks, permutationNumeralsPrefix, tweakAt,
  tweaksAt, type NumeralsMode,
} from './fpeTweaks.js';
import {
  bigIntToNumerals, numberToNumerals, numeralsToBigInt, numeralsToNumber, numeralViews,
} from './numerals.js';
import { nativeFf1, type NativeFf1 } from './nativeFf1.js';
import { MAX_INTEGER_RUN_DOMAIN, cryptIntegerRunWith } from './integerRuns.js';
import { sharedPermutationTables, type PermutationTable } from './smallDomain.js';

/**
 * The FpeCipher for one subkey (AES-128/192/256 by its length; the keyring gives 32 bytes).
 * Numerals: FF1 when radix^length >= 10^6, the small-domain permutation below, null below
 * MIN_DOMAIN. Integers in [0, domain): the permutation below 10^6, else FF1 radix 2 over the bit
 * length of domain - 1 with cycle walking. Every call is batched: one FF1 call per pass, and
 * cycle walking re-encrypts only the values that need it. Values that break the call's own
 * contract (a numeral >= radix, an integer outside the domain, a leading 0 under
 * leadingNonZero) are a RangeError: the message never contains the value.
 */
export function createFpeCipher(key: Buffer, addon: NativeFf1 | null = nativeFf1 ?? null): FpeCipher {
  return new AesFpeCipher(key, addon);
}

const MIN_DOMAIN_BIG = BigInt(MIN_DOMAIN);
const FF1_MIN_DOMAIN_BIG = BigInt(FF1_MIN_DOMAIN);
/** Up to this many bits an integer converts through a plain number (exact below 2^53). */
const NUMBER_BITS = 52;
type RejectOutput = (x: Uint16Array) => boolean;

class AesFpeCipher implements FpeCipher {
  private readonly secret: KeyObject;
  private readonly ff1ByRadix = new Map<number, FF1>();

  /** `addon`: FF1's native rounds where they apply, null for TypeScript only (tests, comparisons). */
  constructor(key: Buffer, private readonly addon: NativeFf1 | null) {
    if (key.length !== 16 && key.length !== 24 && key.length !== 32) {
      throw new RangeError(`an fpe key is 16, 24 or 32 bytes; got ${key.length}`);
    }
    this.secret = createSecretKey(key);
  }

  encryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint): (Uint16Array | null)[] {
    return this.cryptNumerals(radix, values, tweak, constraint?.leadingNonZero === true, false);
  }

  decryptNumerals(radix: number, values: readonly Uint16Array[], tweak: Tweaks, constraint?: NumeralConstraint): (Uint16Array | null)[] {
    return this.cryptNumerals(radix, values, tweak, constraint?.leadingNonZero === true, true);
  }

  cryptNumeralsInto(radix: number, x: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array, constraint?: NumeralConstraint): boolean {
    const leadingNonZero = constraint?.leadingNonZero === true;
    requireRadix(radix);
    const mode: NumeralsMode = leadingNonZero ? TweakMode.numeralsLeadingNonZero : TweakMode.numerals;
    const { minLength, ff1MinLength } = numeralLengths(radix, leadingNonZero);
    const n = x.length;
    if (n < minLength) return false;
    if (leadingNonZero && x[0] === 0) throw new RangeError('leadingNonZero: a value starts with numeral 0');
    if (out.length !== n || out === x) throw new RangeError('the output must be another array of the input\'s length');
    if (n < ff1MinLength) {
      for (let p = 0; p < n; p++) {
        if ((x[p] as number) >= radix) throw new RangeError(`numeral out of range for radix ${radix}`);
      }
      numberToNumerals(this.permuteOne(radix, x, tweak, mode, leadingNonZero, decrypt), radix, out, 0, n);
      return true;
    }
    // As ff1Walk: again over the output while it starts with 0 (leadingNonZero only).
    const ff1 = this.ff1For(radix);
    const prefixed = ff1NumeralsTweaks(mode).of(tweak);
    ff1.cryptInto(x, prefixed, decrypt, out);
    while (leadingNonZero && out[0] === 0) ff1.cryptInto(Uint16Array.from(out), prefixed, decrypt, out);
    return true;
  }

  cryptNumeralRun(radix: number, n: number, values: Uint16Array, tweak: Tweak, decrypt: boolean, out: Uint16Array): boolean {
    requireRadix(radix);
    if (n < numeralLengths(radix, false).ff1MinLength) return false;
    this.ff1For(radix).cryptRun(n, values, ff1NumeralsTweaks(TweakMode.numerals).of(tweak), decrypt, out);
    return true;
  }

  cryptDigitsInPlace(
    template: Uint8Array, luhn: boolean, tweak: Tweak, decrypt: boolean, bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, handled: Uint8Array,
  ): boolean {
    return this.ff1For(10).cryptDigitsInPlace(template, luhn, ff1NumeralsTweaks(TweakMode.numerals).of(tweak), decrypt, bytes, starts, lengths, handled);
  }

  cryptIntegerRun(domain: number, values: Int32Array, tweak: Tweak, decrypt: boolean, out: Int32Array): boolean {
    if (!Number.isInteger(domain) || domain < FF1_MIN_DOMAIN || domain > MAX_INTEGER_RUN_DOMAIN) return false;
    const count = values.length;
    if (out.length !== count) throw new RangeError('the output must have the input\'s length');
    for (let j = 0; j < count; j++) {
      const x = values[j] as number;
      if (x < 0 || x >= domain) throw new RangeError('an integer is outside [0, domain)');
    }
    // As cryptIntegers: FF1 radix 2 over the bits of domain - 1, cycle walking what lands past it.
    const bits = (domain - 1).toString(2).length;
    cryptIntegerRunWith(this.ff1For(2), bits, domain, values, integerTweaks(BigInt(domain)).of(tweak), decrypt, out);
    return true;
  }

  encryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks): (bigint | null)[] {
    return this.cryptIntegers(domain, values, tweak, false);
  }

  decryptInteger(domain: bigint, values: readonly bigint[], tweak: Tweaks): (bigint | null)[] {
    return this.cryptIntegers(domain, values, tweak, true);
  }

  private cryptNumerals(
    radix: number, values: readonly Uint16Array[], tweak: Tweaks, leadingNonZero: boolean, decrypt: boolean,
  ): (Uint16Array | null)[] {
    requireRadix(radix);
    checkTweakCount(tweak, values.length);
    const mode: NumeralsMode = leadingNonZero ? TweakMode.numeralsLeadingNonZero : TweakMode.numerals;
    const { minLength, ff1MinLength } = numeralLengths(radix, leadingNonZero);
    const out = new Array<Uint16Array | null>(values.length).fill(null);
    const ff1Indexes: number[] = [];
    const smallIndexes: number[] = [];
    for (let j = 0; j < values.length; j++) {
      const x = values[j] as Uint16Array;
      if (x.length < minLength) continue;
      if (leadingNonZero && x[0] === 0) throw new RangeError('leadingNonZero: a value starts with numeral 0');
      (x.length < ff1MinLength ? smallIndexes : ff1Indexes).push(j);
    }

    if (ff1Indexes.length > 0) {
      const all = ff1Indexes.length === values.length;
      const inputs = all ? values : ff1Indexes.map((j) => values[j] as Uint16Array);
      const tweaks = ff1NumeralsTweaks(mode).all(all ? tweak : tweaksAt(tweak, ff1Indexes));
      const results = this.ff1Walk(radix, inputs, tweaks, decrypt, leadingNonZero ? startsWithZero : undefined);
      ff1Indexes.forEach((j, g) => { out[j] = results[g] as Uint16Array; });
    }
    if (smallIndexes.length > 0) {
      const tables = new TableMemo(this.secret);
      for (const j of smallIndexes) {
        const x = values[j] as Uint16Array;
        const n = x.length;
        for (let p = 0; p < n; p++) {
          if ((x[p] as number) >= radix) throw new RangeError(`numeral out of range for radix ${radix}`);
        }
        const table = tables.get(radix ** n, tweakAt(tweak, j), () => permutationNumeralsPrefix(mode, radix, n));
        const result = new Uint16Array(n);
        numberToNumerals(permuted(table, radix, x, leadingNonZero, decrypt), radix, result, 0, n);
        out[j] = result;
      }
    }
    return out;
  }

  /** The small-domain permutation of one value (no memo: one table lookup). */
  private permuteOne(radix: number, x: Uint16Array, tweak: Tweak, mode: NumeralsMode, leadingNonZero: boolean, decrypt: boolean): number {
    const n = x.length;
    return permuted(new TableMemo(this.secret).get(radix ** n, tweak, () => permutationNumeralsPrefix(mode, radix, n)), radix, x, leadingNonZero, decrypt);
  }

  private cryptIntegers(domain: bigint, values: readonly bigint[], tweak: Tweaks, decrypt: boolean): (bigint | null)[] {
    checkTweakCount(tweak, values.length);
    if (domain < MIN_DOMAIN_BIG) return values.map(() => null);
    for (const x of values) {
      if (typeof x !== 'bigint' || x < 0n || x >= domain) throw new RangeError('an integer is outside [0, domain)');
    }
    if (values.length === 0) return [];

    if (domain < FF1_MIN_DOMAIN_BIG) {
      const size = Number(domain);
      const tables = new TableMemo(this.secret);
      return values.map((x, j) => {
        const table = tables.get(size, tweakAt(tweak, j), () => integerPrefix(domain));
        return BigInt((decrypt ? table.inverse : table.forward)[Number(x)] as number);
      });
    }

    const bits = (domain - 1n).toString(2).length;
    const { buffer, views } = numeralViews(values.length, bits);
    values.forEach((x, j) => {
      if (bits <= NUMBER_BITS) numberToNumerals(Number(x), 2, buffer, j * bits, bits);
      else bigIntToNumerals(x, 2, buffer, j * bits, bits);
    });
    // Cycle walk the values that land in [domain, 2^bits): fewer than half of them.
    let reject: RejectOutput | undefined;
    if (domain !== 1n << BigInt(bits)) {
      const limit = new Uint16Array(bits);
      bigIntToNumerals(domain, 2, limit, 0, bits);
      reject = (x) => !numeralsBelow(x, limit);
    }
    const results = this.ff1Walk(2, views, integerTweaks(domain).all(tweak), decrypt, reject);
    return results.map((x) => (bits <= NUMBER_BITS ? BigInt(numeralsToNumber(x, 0, bits, 2)) : numeralsToBigInt(x, 0, bits, 2)));
  }

  /** FF1 over the batch, then again over only the outputs `reject` refuses, until none is left. */
  private ff1Walk(
    radix: number, inputs: readonly Uint16Array[], tweaks: Tweaks, decrypt: boolean, reject: RejectOutput | undefined,
  ): Uint16Array[] {
    const ff1 = this.ff1For(radix);
    const results = decrypt ? ff1.decrypt(inputs, tweaks) : ff1.encrypt(inputs, tweaks);
    if (!reject) return results;
    let pending: number[] = [];
    for (let j = 0; j < results.length; j++) if (reject(results[j] as Uint16Array)) pending.push(j);
    while (pending.length > 0) {
      const again = pending.map((j) => results[j] as Uint16Array);
      const next = decrypt ? ff1.decrypt(again, tweaksAt(tweaks, pending)) : ff1.encrypt(again, tweaksAt(tweaks, pending));
      pending.forEach((j, g) => { results[j] = next[g] as Uint16Array; });
      pending = pending.filter((j) => reject(results[j] as Uint16Array));
    }
    return results;
  }

  private ff1For(radix: number): FF1 {
    let ff1 = this.ff1ByRadix.get(radix);
    if (!ff1) {
      const key = this.secret.export();
      try {
        ff1 = new FF1(key, radix, this.addon);
      } finally {
        key.fill(0);
      }
      this.ff1ByRadix.set(radix, ff1);
    }
    return ff1;
  }

  toJSON(): string {
    return '[FpeCipher]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'FpeCipher {}';
  }
}

function requireRadix(radix: number): void {
  if (!Number.isInteger(radix) || radix < 2 || radix > FF1_MAX_RADIX) {
    throw new RangeError(`radix must be an integer from 2 to ${FF1_MAX_RADIX}; got ${String(radix)}`);
  }
}

const lengthsByRadix = new Map<number, { minLength: number; ff1MinLength: number }>();

/** The shortest numeral strings that get a permutation, and that get FF1 (cached: radixes are few). */
function numeralLengths(radix: number, leadingNonZero: boolean): { minLength: number; ff1MinLength: number } {
  const key = leadingNonZero ? -radix : radix;
  let lengths = lengthsByRadix.get(key);
  if (lengths === undefined) {
    // With leadingNonZero only (radix - 1) · radix^(n-1) values are possible: count those.
    let minLength = minLengthForDomain(radix, MIN_DOMAIN);
    if (leadingNonZero && (radix - 1) * radix ** (minLength - 1) < MIN_DOMAIN) minLength++;
    lengths = { minLength, ff1MinLength: minLengthForDomain(radix, FF1_MIN_DOMAIN) };
    if (lengthsByRadix.size >= 1024) lengthsByRadix.clear();
    lengthsByRadix.set(key, lengths);
  }
  return lengths;
}

/** x through the permutation table, as a number; leadingNonZero walks on past values below radix^(n-1). */
function permuted(table: PermutationTable, radix: number, x: Uint16Array, leadingNonZero: boolean, decrypt: boolean): number {
  const n = x.length;
  const map = decrypt ? table.inverse : table.forward;
  let y = map[numeralsToNumber(x, 0, n, radix)] as number;
  // Cycle walk inside the permutation: x itself qualifies, so its cycle has a way out.
  const lowest = leadingNonZero ? radix ** (n - 1) : 0;
  while (y < lowest) y = map[y] as number;
  return y;
}

function startsWithZero(x: Uint16Array): boolean {
  return x[0] === 0;
}

/** x < limit, both numeral strings of the same length and radix. */
function numeralsBelow(x: Uint16Array, limit: Uint16Array): boolean {
  for (let p = 0; p < x.length; p++) {
    const a = x[p] as number;
    const b = limit[p] as number;
    if (a !== b) return a < b;
  }
  return false;
}

/** Permutation tables of one call, by (user tweak, size): one cache lookup (an HMAC) each. */
class TableMemo {
  private readonly tables = new Map<Tweak, Map<number, PermutationTable>>();

  constructor(private readonly secret: KeyObject) {}

  get(size: number, tweak: Tweak, prefix: () => Uint8Array): PermutationTable {
    let bySize = this.tables.get(tweak);
    if (!bySize) this.tables.set(tweak, (bySize = new Map()));
    let table = bySize.get(size);
    if (!table) {
      const head = prefix();
      const full = new Uint8Array(head.length + tweak.length);
      full.set(head);
      full.set(tweak, head.length);
      table = sharedPermutationTables.get(this.secret, size, full);
      bySize.set(size, table);
    }
    return table;
  }
}
