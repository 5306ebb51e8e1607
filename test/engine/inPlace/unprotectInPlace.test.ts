import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type ByteFields } from '../../../src/engine/index.js';
import { KIND_HANDLERS } from '../../../src/engine/kinds/registry.js';
import { createFpeCipher } from '../../../src/engine/crypto/createFpeCipher.js';
import { NumeralGroups } from '../../../src/engine/kinds/numeralGroups.js';

/**
 * Unprotect in place over bytes (the proxy's read path for ssn, ccn and ISO dates) against
 * unprotect of the same values as text: every value it rewrites holds exactly the bytes the
 * text path gives, every value it leaves is untouched, and what it leaves includes everything
 * that is not a plain spelling of the kind (near misses, other bytes, other layouts).
 */
const engine = createEngine({ masterKey: Buffer.alloc(32, 11) });
const options = { method: 'fpe' as const, scope: 'in-place' };

/**
 * The values at odd offsets, each in a buffer of its own, or all in one buffer (`shared`), as
 * the fields of DataRows lie several to a frame: there the cipher may rewrite them itself.
 */
function asFields(values: readonly Buffer[], shared = false): { fields: ByteFields; buffers: Buffer[] } {
  const buffers: Buffer[] = [];
  const starts = new Int32Array(values.length);
  const lengths = new Int32Array(values.length);
  const frame = shared ? Buffer.alloc(values.reduce((total, value) => total + value.length + 7, 0), 0x44) : undefined;
  let at = 0;
  values.forEach((value, i) => {
    const buffer = frame ?? Buffer.alloc(value.length + 7, 0x44);
    const start = (frame === undefined ? 0 : at) + 3 + (i % 4);
    value.copy(buffer, start);
    buffers.push(buffer);
    starts[i] = start;
    lengths[i] = value.length;
    at += value.length + 7;
  });
  return { fields: { count: values.length, buffers, starts, lengths }, buffers };
}

/** Both layouts of the fields: a buffer per value, and one buffer for all. */
async function checkAgainstText(kind: string, values: readonly Buffer[]): Promise<number> {
  const apart = await checkLaidOut(kind, values, false);
  expect(await checkLaidOut(kind, values, true)).toBe(apart);
  return apart;
}

async function checkLaidOut(kind: string, values: readonly Buffer[], shared: boolean): Promise<number> {
  const unprotectInPlace = engine.valueProtection(kind, options).unprotectInPlace;
  if (unprotectInPlace === undefined) throw new Error(`${kind} has no unprotect in place`);
  const { fields, buffers } = asFields(values, shared);
  const before = buffers.map((b) => Buffer.from(b));
  // Flags left from an earlier call: handled is written, never read.
  const handled = new Uint8Array(values.length).fill(1);
  unprotectInPlace(fields, handled);
  const texts = values.map((v) => v.toString('utf8'));
  const viaText = await engine.unprotect(kind, texts, options);
  const invalid = new Set(viaText.discrepancy?.invalid_token ?? []);
  // Nothing outside the values' own bytes is ever written: put their old bytes back and compare.
  const distinct = [...new Set(buffers)];
  const restored = distinct.map((buffer) => Buffer.from(buffer));
  values.forEach((value, i) => {
    const b = distinct.indexOf(buffers[i] as Buffer);
    const start = fields.starts[i] as number;
    (before[buffers.indexOf(buffers[i] as Buffer)] as Buffer).copy(restored[b] as Buffer, start, start, start + value.length);
  });
  distinct.forEach((buffer, b) => expect(restored[b]).toEqual(before[buffers.indexOf(buffer)]));
  let rewritten = 0;
  values.forEach((value, i) => {
    const buffer = buffers[i] as Buffer;
    const start = fields.starts[i] as number;
    const now = buffer.subarray(start, start + value.length);
    if (handled[i] === 1) {
      rewritten++;
      expect(invalid.has(i)).toBe(false);
      expect(now.toString('utf8')).toBe(viaText.result[i]);
    } else {
      expect(handled[i]).toBe(0);
      expect(now).toEqual(value);
    }
  });
  return rewritten;
}

const digit = fc.integer({ min: 0, max: 9 }).map(String);
const digits = (n: number) => fc.array(digit, { minLength: n, maxLength: n }).map((d) => d.join(''));
/** A spelling of the kind with, sometimes, one byte replaced by a near miss. */
const withNearMiss = (spelling: fc.Arbitrary<string>) => fc.tuple(spelling, fc.nat(), fc.constantFrom('', 'x', ' ', '-', '/', '.', '0', 'é', '٣', '\u0000', '  ', '--'), fc.boolean())
  .map(([text, at, replacement, spoil]) => {
    if (!spoil) return Buffer.from(text);
    const p = at % (text.length + 1);
    return Buffer.from(text.slice(0, p) + replacement + text.slice(p + (replacement.length > 0 ? 1 : 0)));
  });

/** a[0], b[0], a[1], b[1], …: values of other layouts and near misses fall between a group's values. */
function interleave(a: readonly Buffer[], b: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i < a.length) out.push(a[i] as Buffer);
    if (i < b.length) out.push(b[i] as Buffer);
  }
  return out;
}

async function tokensOf(kind: string, plain: readonly string[]): Promise<string[]> {
  return (await engine.protect(kind, plain, options)).result;
}

describe('unprotect in place equals unprotect of the text', () => {
  it('ssn: the three spellings round-trip, near misses are left', async () => {
    const ssns = fc.tuple(digits(3), digits(2), digits(4), fc.constantFrom('-', ' ', '')).map(([a, b, c, s]) => `${a}${s}${b}${s}${c}`);
    await fc.assert(fc.asyncProperty(fc.array(ssns, { minLength: 1, maxLength: 40 }), fc.array(withNearMiss(ssns), { maxLength: 40 }), async (plain, odd) => {
      const tokens = await tokensOf('ssn', plain);
      const values = interleave(tokens.map((t) => Buffer.from(t)), odd);
      const rewritten = await checkAgainstText('ssn', values);
      expect(rewritten).toBeGreaterThanOrEqual(tokens.length);
    }), { numRuns: 60 });
  });

  it('ccn: every layout of 12 to 19 digits round-trips (Luhn state kept), near misses are left', async () => {
    const cards = fc.tuple(fc.integer({ min: 12, max: 19 }), fc.constantFrom('', ' ', '-'), fc.array(fc.boolean(), { minLength: 19, maxLength: 19 }))
      .chain(([n, separator, gaps]) => digits(n).map((d) => [...d].map((c, i) => (i < n - 1 && separator && gaps[i] ? c + separator : c)).join('')));
    await fc.assert(fc.asyncProperty(fc.array(cards, { minLength: 1, maxLength: 40 }), fc.array(withNearMiss(cards), { maxLength: 40 }), async (plain, odd) => {
      const tokens = await tokensOf('ccn', plain);
      const values = interleave(tokens.map((t) => Buffer.from(t)), odd);
      expect(await checkAgainstText('ccn', values)).toBeGreaterThanOrEqual(tokens.length);
    }), { numRuns: 60 });
  });

  it('date: ISO dates across the calendar round-trip; other spellings and non-dates are left', async () => {
    const isoDates = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    const others = fc.constantFrom('12/31/2024', '31/12/1999', '2024/02/29', '2024.02.29', '2023-02-29', '0000-01-01', '2024-13-01', '2024-1-01', 'infinity', '2024-02-29 BC', '２０２４-01-01');
    await fc.assert(fc.asyncProperty(fc.array(isoDates, { minLength: 1, maxLength: 40 }), fc.array(fc.oneof(withNearMiss(isoDates), others.map((t) => Buffer.from(t))), { maxLength: 40 }), async (plain, odd) => {
      const tokens = await tokensOf('date', plain);
      const values = interleave(tokens.map((t) => Buffer.from(t)), odd);
      expect(await checkAgainstText('date', values)).toBeGreaterThanOrEqual(tokens.length);
    }), { numRuns: 60 });
  });

  it('fields of one buffer out of order go the TypeScript way, with its answers', async () => {
    const plain = Array.from({ length: 40 }, (_, i) => `${100 + i}-45-${1000 + i}`);
    const tokens = (await tokensOf('ssn', plain)).map((t) => Buffer.from(t));
    const { fields, buffers } = asFields(tokens, true);
    const frame = buffers[0] as Buffer;
    for (const order of [[...tokens.keys()].reverse(), [...tokens.keys()].map((i) => (i % 2 === 0 ? i + 1 : i - 1))]) {
      const copy = Buffer.from(frame);
      const listed: ByteFields = {
        count: order.length, buffers: order.map(() => copy), starts: Int32Array.from(order, (i) => fields.starts[i] as number), lengths: Int32Array.from(order, (i) => fields.lengths[i] as number),
      };
      const handled = new Uint8Array(order.length);
      engine.valueProtection('ssn', options).unprotectInPlace?.(listed, handled);
      expect(handled.every((h) => h === 1)).toBe(true);
      expect(tokens.map((_, i) => copy.toString('utf8', fields.starts[i] as number, (fields.starts[i] as number) + (fields.lengths[i] as number)))).toEqual(plain);
    }
  });

  it('reads back the plaintext of what protect gave', async () => {
    const plain = ['123-45-6789', '987654321', '555 12 0000'];
    const { fields, buffers } = asFields((await tokensOf('ssn', plain)).map((t) => Buffer.from(t)));
    const handled = new Uint8Array(plain.length);
    engine.valueProtection('ssn', options).unprotectInPlace?.(fields, handled);
    expect([...handled]).toEqual([1, 1, 1]);
    expect(buffers.map((b, i) => b.subarray(fields.starts[i], (fields.starts[i] as number) + (fields.lengths[i] as number)).toString())).toEqual(plain);
  });

  it('refuses fields that lie outside their buffers, writing nothing', async () => {
    const unprotectInPlace = engine.valueProtection('ssn', options).unprotectInPlace;
    const token = Buffer.from((await tokensOf('ssn', ['123-45-6789']))[0] as string);
    const cases: [number, number][] = [[0, 12], [1, 11], [-1, 5], [0, -1]];
    for (const [start, length] of cases) {
      const buffer = Buffer.from(token);
      const fields: ByteFields = { count: 1, buffers: [buffer], starts: Int32Array.of(start), lengths: Int32Array.of(length) };
      expect(() => unprotectInPlace?.(fields, new Uint8Array(1))).toThrow(/outside its buffer/);
      expect(buffer).toEqual(token);
    }
    const fields: ByteFields = { count: 2, buffers: [Buffer.from(token)], starts: Int32Array.of(0, 0), lengths: Int32Array.of(11, 11) };
    expect(() => unprotectInPlace?.(fields, new Uint8Array(2))).toThrow(/fewer buffers/);
  });

  it('only fpe of kinds that rewrite in place offers it', () => {
    expect(engine.valueProtection('ssn', { method: 'tokenise', scope: 'x' }).unprotectInPlace).toBeUndefined();
    expect(engine.valueProtection('ssn', { method: 'mask' }).unprotectInPlace).toBeUndefined();
    expect(engine.valueProtection('email', options).unprotectInPlace).toBeUndefined();
  });
});

describe('numeral groups', () => {
  it('opens a group once: a second open of a key is an error, not a silent reuse', () => {
    const groups = new NumeralGroups(2, 9);
    groups.open(1, 9, Uint8Array.of(1));
    expect(() => groups.open(1, 8, Uint8Array.of(2))).toThrow(/opened once/);
    groups.open(2, 8, Uint8Array.of(2));
    expect(() => groups.open(2, 8, Uint8Array.of(2))).toThrow(/opened once/);
    expect(() => groups.open(3, 10, Uint8Array.of(3))).toThrow(/at most stride/);
    expect(groups.add(1, 0, 9)).toBe(true);
    expect(groups.add(3, 1, 9)).toBe(false);
    groups.numerals.fill(7);
    groups.wipe();
    expect(groups.numerals.every((n) => n === 0)).toBe(true);
  });

  it('runs the first group where it was written and the others from where they were moved, each under its own tweak', () => {
    const seen: { n: number; run: number[]; tweak: number }[] = [];
    // Adds 1 to every numeral and records what each call was given.
    const cipher = {
      cryptNumeralRun(_radix: number, n: number, values: Uint16Array, tweak: Uint8Array, _decrypt: boolean, out: Uint16Array): boolean {
        seen.push({ n, run: [...values], tweak: tweak[0] as number });
        for (let k = 0; k < values.length; k++) out[k] = (values[k] as number) + 1;
        return true;
      },
    } as unknown as Parameters<NumeralGroups['crypt']>[0];
    const values: [key: number, digits: number[]][] = [[1, [1, 2, 3]], [2, [4, 5]], [1, [6, 7, 8]], [9, [0, 0, 0, 0]], [2, [9, 9]], [1, [3, 3, 3]]];
    const groups = new NumeralGroups(values.length, 4);
    const keys = [1, 2];
    values.forEach(([key, digits], i) => {
      groups.numerals.set(digits, groups.slot());
      if (!keys.includes(key)) return; // a value of no group: the next one writes over it
      if (!groups.add(key, i, digits.length)) {
        groups.open(key, digits.length, Uint8Array.of(key));
        groups.add(key, i, digits.length);
      }
    });
    const written: [number, number[]][] = [];
    groups.crypt(cipher, 10, false, (i, result, at, n) => written.push([i, [...result.subarray(at, at + n)]]));
    expect(seen).toEqual([{ n: 3, run: [1, 2, 3, 6, 7, 8, 3, 3, 3], tweak: 1 }, { n: 2, run: [4, 5, 9, 9], tweak: 2 }]);
    expect(written).toEqual([[0, [2, 3, 4]], [2, [7, 8, 9]], [5, [4, 4, 4]], [1, [5, 6]], [4, [10, 10]]]);
    groups.wipe();
    expect(groups.numerals.every((n) => n === 0)).toBe(true);
  });
});

describe('fpe in place, both directions, against the batch fpe', () => {
  const cipher = createFpeCipher(Buffer.alloc(32, 5));
  for (const [kind, value] of [['ssn', '078-05-1120'], ['ccn', '4111 1111 1111 1111'], ['date', '1969-07-20']] as const) {
    it(`${kind}: encrypt in place gives fpe's output, decrypt in place gives the value back`, () => {
      const handler = KIND_HANDLERS[kind];
      const encrypted = handler.fpe([value], 'encrypt', cipher, 'en')[0];
      const { fields, buffers } = asFields([Buffer.from(value)]);
      const handled = new Uint8Array(1);
      handler.fpeInPlace?.(fields, 'encrypt', cipher, handled);
      const text = (): string => (buffers[0] as Buffer).subarray(fields.starts[0], (fields.starts[0] as number) + value.length).toString();
      expect(handled[0]).toBe(1);
      expect(text()).toBe(encrypted);
      handled[0] = 0;
      handler.fpeInPlace?.(fields, 'decrypt', cipher, handled);
      expect(text()).toBe(value);
    });
  }
});
