import { expect, it } from 'vitest';

// The same recorded outputs with FF1 in TypeScript only: PGVEIL_NATIVE=0 while this file's own
// copy of the engine loads (each test file has its own module graph), hence dynamic imports only.
const previous = process.env.PGVEIL_NATIVE;
process.env.PGVEIL_NATIVE = '0';
const engineModule = await import('../../src/index.js');
const { goldenTokenSuite } = await import('./goldenTokenSuite.js');
const { nativeFf1, nativeFf1Status } = await import('../../src/engine/crypto/nativeFf1.js');
if (previous === undefined) delete process.env.PGVEIL_NATIVE;
else process.env.PGVEIL_NATIVE = previous;

it('runs without the native FF1 addon', () => {
  expect(nativeFf1Status).toBe('disabled');
  expect(nativeFf1).toBeUndefined();
});

goldenTokenSuite('golden tokens, FF1 in TypeScript', engineModule.createEngine);
