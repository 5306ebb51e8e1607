/**
 * The protection response body is written in slices (responseBody.ts) instead of by fastify's
 * schema serialiser: the bytes must be the ones that serialiser writes, for any result.
 */
import fc from 'fast-check';
import fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectionResponseBody } from '../../src/api/responseBody.js';
import { protectionResponseSchema } from '../../src/api/schemas.js';
import { METHODS, type ProtectionResponse } from '../../src/engine/index.js';

/** A route that answers with fastify's serialisation of the response schema: the reference. */
const reference = fastify();
let current: ProtectionResponse = { operation: 'protect', result: [] };
reference.post('/', { schema: { response: { 200: protectionResponseSchema } } }, async () => current);

beforeAll(() => reference.ready());
afterAll(() => reference.close());

async function bySchema(response: ProtectionResponse): Promise<string> {
  current = response;
  return (await reference.inject({ method: 'POST', url: '/' })).payload;
}

async function bySlices(response: ProtectionResponse): Promise<string> {
  return Buffer.concat(await protectionResponseBody(response)).toString('utf8');
}

const indexes = fc.uniqueArray(fc.nat({ max: 9999 }), { maxLength: 20 });
const responses: fc.Arbitrary<ProtectionResponse> = fc.record({
  operation: fc.constantFrom('protect' as const, 'unprotect' as const),
  // Control characters, quotes, backslashes, lone surrogates and long values among them.
  result: fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme', minLength: 200, maxLength: 4000 }), fc.constant('"\\\u0000\ud800')), { maxLength: 60 }),
  method: fc.constantFrom(...METHODS),
  scope: fc.string({ unit: 'binary', maxLength: 20 }),
  noise: fc.nat().map(String),
  discrepancy: fc.record({ invalid_token: indexes, invalid_scope: indexes }, { requiredKeys: [] }),
}, { requiredKeys: ['operation', 'result'] });

describe('the response body written in slices', () => {
  it('is byte for byte what the schema serialiser writes', async () => {
    await fc.assert(fc.asyncProperty(responses, async (response) => {
      expect(await bySlices(response)).toBe(await bySchema(response));
    }), { numRuns: 200 });
  });

  it('spreads a large result over several pieces, the same bytes in the end', async () => {
    const response: ProtectionResponse = { operation: 'protect', result: Array.from({ length: 2000 }, (_, i) => `${'x'.repeat(4000)}"${i}`), method: 'mask' };
    const pieces = await protectionResponseBody(response);
    expect(pieces.length).toBeGreaterThan(1);
    expect(Buffer.concat(pieces).toString('utf8')).toBe(await bySchema(response));
  });

  it('writes a small result in one piece, at once', () => {
    const pieces = protectionResponseBody({ operation: 'unprotect', result: ['a', 'b'], discrepancy: { invalid_token: [1] } });
    expect(Array.isArray(pieces)).toBe(true);
    expect((pieces as Buffer[]).length).toBe(1);
  });
});
