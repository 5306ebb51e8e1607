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
});
