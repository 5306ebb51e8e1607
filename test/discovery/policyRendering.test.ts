import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ColumnTally, kindsForFamily, renderPolicyFile, scoreColumn, type DiscoveredColumn } from '../../src/discovery/index.js';
import { errorsOf, readPolicyText } from '../../src/policy/index.js';

function emailColumn(schema: string, table: string, column: string): DiscoveredColumn {
  const tally = new ColumnTally('email', kindsForFamily('text'));
  for (let i = 0; i < 10; i++) tally.add(`person${i}@example.com`);
  return { schema, table, column, type: { display: 'text', family: 'text' }, score: scoreColumn(tally) };
}

/** PostgreSQL identifiers: 1–63 bytes, no NUL; quotes, dots, spaces, newlines and capitals allowed. */
const identifier = fc.string({ minLength: 1, maxLength: 20 })
  .filter((s) => !s.includes('\u0000') && Buffer.byteLength(s) <= 63);

describe('the suggested policy file', () => {
  it('reads back through the policy parser to exactly the columns sampled, whatever their names', () => {
    fc.assert(fc.property(identifier, identifier, identifier, fc.option(fc.constantFrom('app', 'web.app', 'svc:1')), (schema, table, column, appRole) => {
      const text = renderPolicyFile(
        { schema, tableCount: 2, sampleLimit: 100, columns: [emailColumn(schema, table, column)], unsampled: [{ schema, table: `${table}2`, reason: 'x' }] },
        { source: 'db', ...(appRole === null ? {} : { appRole }) },
      );
      const read = readPolicyText(text, 'suggested.yaml');
      expect(errorsOf(read.issues)).toEqual([]);
      expect(read.columns).toHaveLength(1);
      expect(read.columns[0]).toMatchObject({ schema, table, column, kind: 'email', method: 'tokenise' });
      expect([...(read.columns[0]?.reveal.entries() ?? [])]).toEqual(appRole === null ? [] : [[appRole, 'plaintext']]);
      // A name cannot end a comment line early and smuggle in YAML.
      for (const line of text.split('\n')) expect(line === '' || line.startsWith('#') || line.startsWith('  ') || line.startsWith('columns:')).toBe(true);
    }), { numRuns: 300 });
  });

  it('writes an empty mapping, still a valid file, when nothing is suggested', () => {
    const text = renderPolicyFile({ schema: 'public', tableCount: 0, sampleLimit: 10, columns: [], unsampled: [] }, { source: 'db' });
    expect(text).toContain('columns: {}');
    expect(readPolicyText(text, 'f.yaml').issues).toEqual([]);
  });
});
