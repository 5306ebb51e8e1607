import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineConfig, EngineWithValueProtection, ProtectOptions, ProtectionResponse } from '../../../src/engine/index.js';
import type { Kind } from '../../../src/engine/types.js';
import { ARBITRARY } from '../../support/samples.js';

type Outcome = { ok: string } | { error: string };

/** What a call gave: its bytes, or its refusal's code and message (indexes aside). */
async function outcomeOf(call: () => unknown): Promise<Outcome> {
  try {
    return { ok: JSON.stringify(await call()) };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { error: `${e.code ?? 'no code'}: ${e.message}` };
  }
}

/** The response a batch of one should give, from the batch [value, value] (the batch path). */
function firstOfPair(response: ProtectionResponse): ProtectionResponse {
  const out: ProtectionResponse = { ...response, result: response.result.slice(0, 1) };
  if (response.discrepancy) {
    out.discrepancy = {};
    for (const [name, indexes] of Object.entries(response.discrepancy) as [keyof NonNullable<ProtectionResponse['discrepancy']>, number[]][]) {
      out.discrepancy[name] = indexes.filter((i) => i === 0);
    }
  }
  return out;
}

const MAX_VALUE_BYTES = 120;

/** [kind, options]: the proxy benches' shapes (fpe of digits and email, tokenise of text) and more. */
const CASES: readonly (readonly [Kind, ProtectOptions])[] = [
  ['ccn', { method: 'fpe' }],
  ['ccn', { method: 'fpe', scope: 'cards' }],
  ['ssn', { method: 'fpe' }],
  ['phone', { method: 'fpe' }],
  ['email', { method: 'fpe' }],
  ['numeric', { method: 'fpe' }],
  ['date', { method: 'fpe' }],
  ['text', { method: 'tokenise' }],
  ['ccn', { method: 'tokenise', scope: 'cards' }],
  ['name', { method: 'tokenise', lang: 'en' }],
  ['ssn', { method: 'mask' }],
  ['phone', { method: 'redact' }],
  ['email', { method: 'passthrough' }],
];

/** Every spelling a kind takes, and near misses of them (other separators, mixed ones, a digit short). */
const SPELLINGS: Partial<Record<Kind, fc.Arbitrary<string>>> = {
  ssn: fc.tuple(
    fc.stringMatching(/^\d{3}$/), fc.stringMatching(/^\d{2}$/), fc.stringMatching(/^\d{3,4}$/),
    fc.constantFrom('-', ' ', '', '/', '.'), fc.constantFrom('-', ' ', '', '/'),
  ).map(([area, group, serial, first, second]) => `${area}${first}${group}${second}${serial}`),
};

/** Values of the kind, other strings, and strings past the engine's bound. */
function candidates(kind: Kind): fc.Arbitrary<string> {
  const spellings = SPELLINGS[kind];
  return fc.oneof(
    { weight: 4, arbitrary: ARBITRARY[kind] },
    ...(spellings === undefined ? [] : [{ weight: 4, arbitrary: spellings }]),
    { weight: 1, arbitrary: fc.string({ maxLength: 24 }) },
    { weight: 1, arbitrary: fc.stringMatching(/^[0-9 -]{0,24}$/) },
    { weight: 1, arbitrary: fc.string({ minLength: MAX_VALUE_BYTES + 1, maxLength: MAX_VALUE_BYTES + 40 }) },
  );
}

/**
 * One value at a time (valueProtection, and protect / unprotect with a batch of one) against the
 * batch path: the same bytes, the same refusals, the same discrepancies.
 */
export function valueProtectionSuite(title: string, createEngine: (config: EngineConfig) => EngineWithValueProtection): void {
  describe(title, () => {
    const engine = createEngine({ masterKey: Buffer.alloc(32, 7), maxValueBytes: MAX_VALUE_BYTES });

    for (const [kind, options] of CASES) {
      const label = `${kind} ${JSON.stringify(options)}`;

      it(`${label}: protect of one value gives the batch's bytes or refusal`, async () => {
        const one = engine.valueProtection(kind, options);
        await fc.assert(fc.asyncProperty(candidates(kind), async (value) => {
          const batch = await outcomeOf(async () => firstOfPair(await engine.protect(kind, [value, value], options)));
          expect(await outcomeOf(() => engine.protect(kind, [value], options))).toEqual(batch);
          const single = await outcomeOf(() => ({ ...JSON.parse((batch as { ok?: string }).ok ?? '{}'), result: [one.protect(value)] }));
          expect(single).toEqual(batch);
        }), { numRuns: 60 });
      });

      it(`${label}: unprotect of one value gives the batch's bytes, discrepancy or refusal`, async () => {
        const one = engine.valueProtection(kind, options);
        const tokens = fc.oneof(
          ARBITRARY[kind].map((value) => { try { return one.protect(value); } catch { return value; } }),
          candidates(kind),
        );
        await fc.assert(fc.asyncProperty(tokens, async (token) => {
          const batch = await outcomeOf(async () => firstOfPair(await engine.unprotect(kind, [token, token], options)));
          expect(await outcomeOf(() => engine.unprotect(kind, [token], options))).toEqual(batch);
          const single = await outcomeOf(() => {
            const out = one.unprotect(token);
            if (typeof out === 'string') return { operation: 'unprotect', result: [out] };
            return { operation: 'unprotect', result: [token], discrepancy: { [out.discrepancy]: [0] } };
          });
          expect(single).toEqual(batch);
        }), { numRuns: 60 });
      });
    }

    it('round-trips one value at a time, and tells a token of another scope (tokenise)', () => {
      const cards = engine.valueProtection('ccn', { method: 'tokenise', scope: 'cards' });
      const other = engine.valueProtection('ccn', { method: 'tokenise', scope: 'other' });
      const noisy = engine.valueProtection('text', { method: 'tokenise', noise: 2 });
      fc.assert(fc.property(ARBITRARY.ccn, ARBITRARY.text, (card, text) => {
        const token = cards.protect(card);
        expect(cards.unprotect(token)).toBe(card);
        expect(other.unprotect(token)).toEqual({ discrepancy: 'invalid_scope' });
        expect(noisy.unprotect(noisy.protect(text))).toBe(text);
      }), { numRuns: 40 });
    });

    it('takes a token with one digit changed for no token at all, as the batch does (tokenise)', async () => {
      const options = { method: 'tokenise', scope: 'cards' } as const;
      const cards = engine.valueProtection('ccn', options);
      await fc.assert(fc.asyncProperty(ARBITRARY.ccn, fc.nat(), fc.integer({ min: 1, max: 9 }), async (card, at, step) => {
        const token = cards.protect(card);
        const digits = [...token].map((char, i) => ({ char, i })).filter(({ char }) => char >= '0' && char <= '9');
        const { i } = digits[at % digits.length] as { i: number };
        const tampered = `${token.slice(0, i)}${(Number(token[i]) + step) % 10}${token.slice(i + 1)}`;
        expect(cards.unprotect(tampered)).toEqual({ discrepancy: 'invalid_token' });
        expect((await engine.unprotect('ccn', [tampered], options)).discrepancy).toEqual({ invalid_token: [0] });
      }), { numRuns: 200 });
    });

    it('says which protections cost bounded work per value: all but fpe of kinds whose values may need a permutation table built', () => {
      expect(engine.valueProtection('ccn', { method: 'fpe' }).immediate).toBe(true);
      expect(engine.valueProtection('ssn', { method: 'fpe' }).immediate).toBe(true);
      expect(engine.valueProtection('phone', { method: 'fpe' }).immediate).toBe(true);
      expect(engine.valueProtection('numeric', { method: 'fpe' }).immediate).toBe(false);
      expect(engine.valueProtection('email', { method: 'fpe' }).immediate).toBe(false);
      for (const method of ['tokenise', 'mask', 'redact', 'passthrough'] as const) expect(engine.valueProtection('numeric', { method }).immediate).toBe(true);
    });

    it('refuses bad options when it is asked for, as protect does', async () => {
      for (const [kind, options] of [['nope', {}], ['ccn', { method: 'shred' }], ['ccn', { method: 'fpe', noise: 1 }], ['ccn', { lang: 'de' }], ['ccn', { scope: '' }]] as const) {
        const batch = await outcomeOf(() => engine.protect(kind, ['4111 1111 1111 1111'], options));
        expect('error' in batch).toBe(true);
        expect(await outcomeOf(() => engine.valueProtection(kind, options))).toEqual(batch);
      }
    });

    it('refuses a non-string and a one-way unprotect as a batch of one does', async () => {
      const fpe = engine.valueProtection('ccn', { method: 'fpe' });
      const mask = engine.valueProtection('ccn', { method: 'mask' });
      const notString = 42 as unknown as string;
      expect(await outcomeOf(() => fpe.protect(notString))).toEqual(await outcomeOf(() => engine.protect('ccn', [notString], { method: 'fpe' })));
      expect(await outcomeOf(() => fpe.unprotect(notString))).toEqual(await outcomeOf(() => engine.unprotect('ccn', [notString], { method: 'fpe' })));
      expect(await outcomeOf(() => mask.unprotect('4111 1111 1111 1111'))).toEqual(await outcomeOf(() => engine.unprotect('ccn', ['4111 1111 1111 1111'], { method: 'mask' })));
    });
  });
}
