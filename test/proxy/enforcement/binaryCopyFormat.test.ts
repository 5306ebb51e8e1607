/** The binary COPY stream reader: rows split anywhere come out as they went in; bad streams fail. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BINARY_COPY_SIGNATURE, BinaryCopyError, BinaryCopyReader, binaryCopyField, type BinaryCopyPiece } from '../../../src/proxy/enforcement/readPath/binaryCopyFormat.js';

function header(extension?: Buffer, flags = 0): Buffer {
  const area = extension ?? Buffer.alloc(0);
  const fixed = Buffer.alloc(8);
  fixed.writeUInt32BE(flags, 0);
  fixed.writeInt32BE(area.length, 4);
  return Buffer.concat([BINARY_COPY_SIGNATURE, fixed, area]);
}

function int16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeInt16BE(value);
  return bytes;
}

function stream(rows: readonly (readonly (Buffer | null)[])[], extension?: Buffer, trailer = true): Buffer {
  const parts = [header(extension)];
  for (const row of rows) parts.push(int16(row.length), ...row.map(binaryCopyField));
  if (trailer) parts.push(int16(-1));
  return Buffer.concat(parts);
}

function splitAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

function readAll(reader: BinaryCopyReader, chunks: readonly Buffer[]): BinaryCopyPiece[] {
  const pieces = chunks.flatMap((chunk) => reader.push(chunk));
  reader.end();
  return pieces;
}

const COLUMNS = 3;
const rowArbitrary = fc.array(fc.option(fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)), { nil: null }), { minLength: COLUMNS, maxLength: COLUMNS });

describe('BinaryCopyReader', () => {
  it('gives back every byte, and each held field whole, however the stream is split', () => {
    fc.assert(fc.property(
      fc.array(rowArbitrary, { maxLength: 8 }), fc.uint8Array({ maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(),
      (rows, extension, cuts, trailer) => {
        const bytes = stream(rows, Buffer.from(extension), trailer);
        const held = new Set([1]);
        const pieces = readAll(new BinaryCopyReader(COLUMNS, (index) => (held.has(index) ? 1000 : undefined)), splitAt(bytes, cuts));
        const rebuilt = Buffer.concat(pieces.map((piece) => (piece.kind === 'raw' ? piece.bytes : binaryCopyField(piece.value))));
        expect(rebuilt.equals(bytes)).toBe(true);
        const fields = pieces.filter((piece) => piece.kind === 'field');
        expect(fields.map((piece) => piece.value)).toEqual(rows.map((row) => row[1]).filter((value) => value !== null));
        expect(fields.every((piece) => piece.index === 1)).toBe(true);
      },
    ));
  });

  it('refuses a garbage header, a wrong field count, a negative length and data after the trailer', () => {
    const reader = (): BinaryCopyReader => new BinaryCopyReader(2, () => 100);
    expect(() => reader().push(Buffer.from('PGCOPY\nxxxxxxxxxxxxxxxx'))).toThrow(/signature/);
    expect(() => reader().push(header(undefined, 1 << 16))).toThrow(/flags/);
    expect(() => reader().push(stream([[Buffer.from('a')]]))).toThrow(/row 1 has 1 fields where 2 columns/);
    expect(() => reader().push(Buffer.concat([header(), int16(2), Buffer.from([0xff, 0xff, 0xff, 0xf0])]))).toThrow(/negative length/);
    expect(() => reader().push(Buffer.concat([stream([]), Buffer.from('x')]))).toThrow(/after its end marker/);
  });

  it('refuses a stream that ends inside a row or its header', () => {
    const truncated = stream([[Buffer.from('abc'), Buffer.from('defg')]], undefined, false);
    for (let cut = 1; cut < truncated.length; cut++) {
      if (cut === header().length) continue; // a row boundary: the end of a stream without rows
      const reader = new BinaryCopyReader(2, () => 100);
      reader.push(truncated.subarray(0, cut));
      expect(() => reader.end(), `cut at ${cut}`).toThrow(BinaryCopyError);
    }
    expect(() => new BinaryCopyReader(2, () => 100).end()).toThrow(/header is incomplete/);
  });

  it('refuses a held field over its limit from its length alone, before its bytes arrive', () => {
    const reader = new BinaryCopyReader(1, () => 16);
    const length = Buffer.alloc(4);
    length.writeInt32BE(1 << 30);
    let error: unknown;
    try {
      reader.push(Buffer.concat([header(), int16(1), length]));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BinaryCopyError);
    expect((error as BinaryCopyError).tooLong).toBe(true);
  });

  it('streams fields it does not hold without collecting them', () => {
    const reader = new BinaryCopyReader(1, () => undefined);
    const big = Buffer.alloc(1 << 20, 7);
    const length = Buffer.alloc(4);
    length.writeInt32BE(big.length);
    reader.push(Buffer.concat([header(), int16(1), length]));
    const pieces = reader.push(big.subarray(0, 1000));
    expect(pieces).toEqual([{ kind: 'raw', bytes: big.subarray(0, 1000) }]);
  });
});
