/**
 * Numbers written in mixed radix (each digit with its own base), to and from BigInt. fpe reads a
 * text's classed characters as such a number; tokens write bytes in a script's alphabet the same
 * way with one base throughout. Both split the digits in halves recursively (a product tree), so
 * long texts cost about as much as BigInt multiplication, not the quadratic digit-by-digit loop.
 */

/** Below this many digits the plain loop is faster than splitting further. */
const LEAF_DIGITS = 24;

interface ProductNode {
  readonly lo: number;
  readonly hi: number;
  readonly product: bigint;
  readonly left?: ProductNode;
  readonly right?: ProductNode;
}

function productTree(radices: ArrayLike<number>, lo: number, hi: number): ProductNode {
  if (hi - lo <= LEAF_DIGITS) {
    let product = 1n;
    for (let i = lo; i < hi; i++) product *= BigInt(radices[i] as number);
    return { lo, hi, product };
  }
  const mid = (lo + hi) >>> 1;
  const left = productTree(radices, lo, mid);
  const right = productTree(radices, mid, hi);
  return { lo, hi, product: left.product * right.product, left, right };
}

/** The number of values the digits can take: the product of the radices. */
export function mixedRadixDomain(radices: ArrayLike<number>): bigint {
  return productTree(radices, 0, radices.length).product;
}

/** Σ digit[i] · Π radix[j>i] (the first digit is the most significant). */
export function fromMixedRadix(digits: ArrayLike<number>, radices: ArrayLike<number>): bigint {
  if (digits.length !== radices.length) throw new RangeError('one radix per digit');
  const walk = (lo: number, hi: number): { value: bigint; product: bigint } => {
    if (hi - lo <= LEAF_DIGITS) {
      let value = 0n;
      let product = 1n;
      for (let i = lo; i < hi; i++) {
        const radix = BigInt(radices[i] as number);
        value = value * radix + BigInt(digits[i] as number);
        product *= radix;
      }
      return { value, product };
    }
    const mid = (lo + hi) >>> 1;
    const left = walk(lo, mid);
    const right = walk(mid, hi);
    return { value: left.value * right.product + right.value, product: left.product * right.product };
  };
  return walk(0, digits.length).value;
}

/** The digits of `value` in the given radices; throws when it does not fit their domain. */
export function toMixedRadix(value: bigint, radices: ArrayLike<number>): number[] {
  const tree = productTree(radices, 0, radices.length);
  if (value < 0n || value >= tree.product) throw new RangeError('value outside the mixed-radix domain');
  const digits = new Array<number>(radices.length).fill(0);
  const walk = (node: ProductNode, x: bigint): void => {
    if (!node.left || !node.right) {
      for (let i = node.hi - 1; i >= node.lo; i--) {
        const radix = BigInt(radices[i] as number);
        digits[i] = Number(x % radix);
        x /= radix;
      }
      return;
    }
    walk(node.left, x / node.right.product);
    walk(node.right, x % node.right.product);
  };
  walk(tree, value);
  return digits;
}

/** `value` (> 0) in base `base`, most significant digit first, no leading zero. */
export function toBaseDigits(value: bigint, base: number): number[] {
  if (value <= 0n) throw new RangeError('value must be positive');
  const bits = value.toString(16).length * 4;
  // An upper bound on the digit count; the extra leading zeros are cut below.
  const width = Math.ceil(bits / Math.log2(base)) + 1;
  const digits = toMixedRadix(value, new Array<number>(width).fill(base));
  const first = digits.findIndex((d) => d !== 0);
  return digits.slice(first);
}

export function fromBaseDigits(digits: ArrayLike<number>, base: number): bigint {
  return fromMixedRadix(digits, new Array<number>(digits.length).fill(base));
}
