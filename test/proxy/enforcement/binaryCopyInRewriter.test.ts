/** The binary COPY FROM rewriter against an in-memory catalog: what it rewrites, what it refuses. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/index.js';
import { parsePolicies } from '../../../src/policy/index.js';
import { ColumnPolicies } from '../../../src/proxy/enforcement/catalog/columnPolicies.js';
import { PolicyRefusal } from '../../../src/proxy/enforcement/policyRefusal.js';
import { BINARY_COPY_SIGNATURE, BinaryCopyReader, binaryCopyField } from '../../../src/proxy/enforcement/readPath/binaryCopyFormat.js';
import { BinaryCopyInRewriter } from '../../../src/proxy/enforcement/writePath/binaryCopyInRewriter.js';
import type { CopyFromTarget } from '../../../src/proxy/sql/index.js';
import { copyOptions } from '../../../src/proxy/sql/copyStatement.js';
import { relationOf, snapshotOf } from './support/catalogFixtures.js';

const TEXT = 25;
const JSONB = 3802;

const POLICIES = parsePolicies(`
columns:
  public.people.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }
  public.people.profile: { kind: name, method: tokenise, scope: s, reveal: { app: plaintext } }
`, 'policies.yaml');

const columnPolicies = new ColumnPolicies(snapshotOf([relationOf(16500, 'public', 'people', [
  { attnum: 1, name: 'ssn', typeOid: TEXT, typmod: -1 },
  { attnum: 2, name: 'profile', typeOid: JSONB, typmod: -1 },
  { attnum: 3, name: 'note', typeOid: TEXT, typmod: -1 },
])]), POLICIES);

const engine = createEngine({ masterKey: randomBytes(32) });

function target(columns: readonly string[]): CopyFromTarget {
  return {
    schema: 'public', table: 'people',
    columns: columns.map((column) => ({ column: { schema: 'public', table: 'people', column }, protected: column !== 'note' })),
    options: { ...copyOptions(undefined), format: 'binary' },
  };
}

function stream(rows: readonly (readonly (Buffer | null)[])[]): Buffer {
  const count = (n: number): Buffer => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([BINARY_COPY_SIGNATURE, Buffer.alloc(8), ...rows.flatMap((row) => [count(row.length), ...row.map(binaryCopyField)]), count(0xffff)]);
}

describe('BinaryCopyInRewriter', () => {
  it('replaces protected fields with tokens and keeps the rest byte for byte', async () => {
    const rewriter = new BinaryCopyInRewriter(target(['ssn', 'note']), columnPolicies, engine, 4096);
    const input = stream([[Buffer.from('123-45-6789'), Buffer.from('kept')], [null, Buffer.from('also kept')]]);
    const output = Buffer.concat([await rewriter.data(input.subarray(0, 25)), await rewriter.data(input.subarray(25)), await rewriter.end()]);
    const pieces = new BinaryCopyReader(2, (index) => (index === 0 ? 4096 : undefined)).push(output);
    const values = pieces.flatMap((piece) => (piece.kind === 'field' ? [piece.value.toString('utf8')] : []));
    expect(values).toHaveLength(1);
    expect(values[0]).toMatch(/^\d{3}-\d{2}-\d{4}$/);
    expect(values[0]).not.toBe('123-45-6789');
    expect(output.includes(Buffer.from('also kept'))).toBe(true);
  });

  it('fails the COPY for a protected column whose type has no binary codec, naming it and text/CSV', async () => {
    const rewriter = new BinaryCopyInRewriter(target(['profile', 'note']), columnPolicies, engine, 4096);
    const error = await rewriter.data(stream([[Buffer.from('{"a":1}'), null]])).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect((error as PolicyRefusal).sqlState).toBe('0A000');
    expect((error as PolicyRefusal).message).toMatch(/people\.profile.*text or CSV/);
    expect((error as PolicyRefusal).message).not.toMatch(/"a"/);
  });

  it('rewrites a stream split at every byte alike, and never forwards a protected field as sent', async () => {
    const extension = Buffer.from([0, 0, 0, 3, 0xaa, 0xbb, 0xcc]);
    const rows = [[Buffer.from('123-45-6789'), Buffer.from('n1')], [Buffer.from('234-56-7890'), null], [null, Buffer.alloc(0)]];
    const body = stream(rows);
    // The same stream with a 3-byte header extension (its length replaces the zero one).
    const input = Buffer.concat([body.subarray(0, 15), extension, body.subarray(19)]);
    const whole = async (chunks: readonly Buffer[]): Promise<Buffer> => {
      const rewriter = new BinaryCopyInRewriter(target(['ssn', 'note']), columnPolicies, engine, 4096);
      const out: Buffer[] = [];
      for (const chunk of chunks) out.push(await rewriter.data(chunk));
      out.push(await rewriter.end());
      return Buffer.concat(out);
    };
    const reference = await whole([input]);
    expect(reference.includes(Buffer.from('123-45-6789'))).toBe(false);
    expect(reference.includes(Buffer.from('234-56-7890'))).toBe(false);
    expect(reference.subarray(0, 22)).toEqual(input.subarray(0, 22));
    for (let at = 1; at < input.length; at++) {
      expect(await whole([input.subarray(0, at), input.subarray(at)]), `split at ${at}`).toEqual(reference);
    }
    expect(await whole([...input].map((byte) => Buffer.from([byte])))).toEqual(reference);
  });

  it('fails a crafted stream: data after the trailer, a trailer inside a row, a negative length, a field count that differs', async () => {
    const good = stream([[Buffer.from('123-45-6789'), Buffer.from('n')]]);
    const header = good.subarray(0, 19);
    const crafted: readonly [string, Buffer][] = [
      ['after its end marker', Buffer.concat([good, Buffer.from([0, 2])])],
      ['negative length', Buffer.concat([header, Buffer.from([0, 2, 0xff, 0xff, 0xff, 0xfe])])],
      ['fields where 2 columns', Buffer.concat([header, Buffer.from([0, 3])])],
      ['fields where 2 columns', Buffer.concat([header, Buffer.from([0x80, 0x00])])],
      ['signature', Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\x01', 'latin1'), good.subarray(11)])],
      ['negative length', Buffer.concat([good.subarray(0, 15), Buffer.from([0x80, 0, 0, 0])])],
    ];
    for (const [reason, input] of crafted) {
      const rewriter = new BinaryCopyInRewriter(target(['ssn', 'note']), columnPolicies, engine, 4096);
      const error = await rewriter.data(input).then(() => rewriter.end()).then(() => undefined, (caught: unknown) => caught);
      expect(error, reason).toBeInstanceOf(PolicyRefusal);
      expect((error as PolicyRefusal).message, reason).toContain(reason);
      expect((error as PolicyRefusal).message).not.toContain('123-45-6789');
    }
    // A trailer (int16 -1) inside a row is read as half of a field length: the stream then ends inside the row.
    const cut = new BinaryCopyInRewriter(target(['ssn', 'note']), columnPolicies, engine, 4096);
    await cut.data(Buffer.concat([header, Buffer.from([0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]));
    await expect(cut.end()).rejects.toThrow(/ends inside row 1/);
    // A field longer than the limit fails before its bytes arrive.
    const long = new BinaryCopyInRewriter(target(['ssn', 'note']), columnPolicies, engine, 16);
    const tooLong = await long.data(Buffer.concat([header, Buffer.from([0, 2, 0x7f, 0xff, 0xff, 0xff])])).catch((caught: unknown) => caught);
    expect((tooLong as PolicyRefusal).sqlState).toBe('54000');
  });
});

