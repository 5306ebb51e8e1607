import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEngine, type Method } from '../src/index.js';

/** The README's kinds × methods table must be what the engine produces with the example key. */
describe('README examples', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const table = readme.split('<!-- examples:start -->')[1]?.split('<!-- examples:end -->')[0] ?? '';
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && line.includes('`'));
  const engine = createEngine({ masterKey: Buffer.alloc(32) });
  const methods: Method[] = ['tokenise', 'fpe', 'mask', 'redact'];

  it('lists all fourteen kinds', () => {
    expect(rows).toHaveLength(14);
  });

  it.each(rows.map((row) => [row.split('|')[1]?.trim() ?? '', row]))('%s', async (kind, row) => {
    const cells = row.split('|').slice(2, 7).map((c) => c.trim().replace(/^`|`$/g, ''));
    const [input, ...outputs] = cells;
    for (const [i, method] of methods.entries()) {
      const { result } = await engine.protect(kind, [input!], { method });
      expect(result[0], `${kind} ${method}`).toBe(outputs[i]);
      if (method === 'tokenise' || method === 'fpe') {
        expect((await engine.unprotect(kind, result, { method })).result).toEqual([input]);
      }
    }
  });
});
