import { expect, it } from 'vitest';

// The same comparisons with FF1 in TypeScript only: PGVEIL_NATIVE=0 while this file's own copy of
// the engine loads (each test file has its own module graph), hence dynamic imports only.
const previous = process.env.PGVEIL_NATIVE;
process.env.PGVEIL_NATIVE = '0';
const { createEngine } = await import('../../../src/engine/index.js');
const { valueProtectionSuite } = await import('./valueProtectionSuite.js');
const { nativeFf1Status } = await import('../../../src/engine/crypto/nativeFf1.js');
if (previous === undefined) delete process.env.PGVEIL_NATIVE;
else process.env.PGVEIL_NATIVE = previous;

it('runs without the native FF1 addon', () => {
  expect(nativeFf1Status).toBe('disabled');
});

valueProtectionSuite('one value at a time, FF1 in TypeScript', createEngine);
